#pragma once
// The policy-generation benchmark of the RAMSIS paper's Table 2: {the given
// models, the synthetic set interpolated from them} x {FLD D=100, FLD D=10,
// MD} x {maximal, variable batching}, one MDP per cell (one SLO, worker count
// and load), solved on each requested device. The paper's Python took 132 s
// for 9 models / FLD 100 / maximal batching and timed out after 24 h for 60
// models with MD or variable batching.
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/mdp/mdp_problem.h"
#include "compiler/profile/model_table.h"
#include "compiler/solver/solver.h"

namespace lull::compiler {

struct Table2Options {
  // SLO, workers, load and N of every cell (the grid sets the slack grid and
  // the batching), and the solver's settings: the compile spec's own structs.
  MdpOptions mdp{150000, 60, 2000, 32};
  SolveOptions solve;
  double interpolation_step = 0.005;        // 0.5 accuracy points: 9 image models -> 60
  bool include_interpolated = true;         // the synthetic set's rows
  bool include_given = true;                // the given models' rows
  std::vector<int> fld_intervals{100, 10};  // one FLD scheme per D
  bool include_md = true;
  std::vector<Batching> batchings{Batching::kMaximal, Batching::kVariable};
  std::vector<std::string> devices{"cpu"};  // make_solver names: cpu, cuda
  int repeat = 1;                           // solves per cell; the fastest is kept
};

struct Table2Cell {
  int models = 0;
  std::string scheme;    // "FLD D=100", "FLD D=10", "MD"
  std::string batching;  // "maximal", "variable"
  std::string device;    // the solver's name ("cpu", "cuda") or the requested one on error
  int states = 0;
  std::size_t actions = 0;
  double seconds = 0;  // end to end: MDP construction + solve (transitions, VI, expectations)
  PhaseSeconds phases;
  double host_peak_mb = -1;   // VmHWM over the cell (reset per cell where the kernel allows), -1 unknown
  double device_peak_mb = 0;  // CUDA: drop in free device memory at the solve's peak
  double expected_accuracy = 0;
  double expected_violation_rate = 0;
  std::string error;  // non-empty: the cell did not run (e.g. no CUDA device)
};

// Runs every cell for every device; a device that cannot be used yields rows
// with `error` set rather than an exception. Progress lines go to `log`.
std::vector<Table2Cell> run_table2_grid(const ReducedProfiles& given, const Table2Options& options, std::ostream* log);

// One line naming the hardware behind a device name ("cpu": the CPU model
// and its cores; "cuda": the GPU, or why there is none).
std::string table2_device_description(const std::string& device);

// A markdown table: one row per cell, the devices side by side.
std::string table2_markdown(const std::vector<Table2Cell>& cells, const std::vector<std::string>& devices);

}  // namespace lull::compiler
