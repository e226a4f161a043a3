#pragma once
// The one reader of the RAMSIS artifact's files, shared by the compiler's
// import (compiler/profile/artifact_import) and the simulator's sampled
// latencies (runtime/sim/raw_profiles). It lives in schema/ because the
// runtime may depend on nothing else. The layout:
//   DIR/<model>/<model>_bsize-<b>_profile.json   a JSON list of seconds
//   ACC.json   {"accuracy": {"<model>": <percent>, ...}, "task": ...} (or the bare map)
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace lull {

// "FILE: why" (the folder, a profile file, or the accuracy table).
struct ArtifactError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ArtifactModel {
  std::string name;
  std::map<int, std::vector<double>> samples_s;  // batch size -> end-to-end latencies in seconds
};

// One profile file of the layout: which model and batch size it holds.
struct ArtifactFile {
  std::string model;
  int batch = 0;
  std::string path;
};

// The profile files read_artifact_profiles reads, sorted by model, then batch
// size: every model folder (only those named in `only` when it is not empty),
// and in it every file whose name matches the layout.
std::vector<ArtifactFile> list_artifact_files(const std::string& dir, const std::vector<std::string>& only = {});

// Every model folder with at least one profile file, sorted by name; only the
// models named in `only` when it is not empty. Every sample must be a
// positive, finite number.
std::vector<ArtifactModel> read_artifact_profiles(const std::string& dir, const std::vector<std::string>& only = {});

// Model name -> accuracy in percent.
std::map<std::string, double> read_artifact_accuracy_percent(const std::string& path);

// The accuracy table's "task" field (image_accuracy.json has one), or "" when
// the table has none (text_accuracy.json is the bare map).
std::string read_artifact_task(const std::string& path);

}  // namespace lull
