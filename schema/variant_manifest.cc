// Reading the variants manifest (format: variant_manifest.h, docs/user-guide.md).
#include "schema/variant_manifest.h"

#include <cmath>
#include <filesystem>

#include "schema/json_reader.h"
#include "schema/number_text.h"

namespace lull {

std::vector<VariantManifestEntry> read_variant_manifest(const std::string& path) {
  json::JsonFileReader reader(FileKind::kSettings);
  const simdjson::dom::element root =
      json::parse_file_or_throw<VariantManifestError>(reader, path, "variants manifest");
  const auto fail = [&](const std::string& field, const std::string& why) {
    throw VariantManifestError(path + ": " + field + ": " + why);
  };
  simdjson::dom::element v;
  std::string format;
  if (root["format"].get(v) || !json::to_string(v, &format) || format != kVariantManifestFormat)
    fail("format", std::string("missing or not \"") + kVariantManifestFormat +
                       "\" (expected the manifest lull plan variants writes)");
  simdjson::dom::array variants;
  if (root["variants"].get(variants)) fail("variants", "missing or not a list");
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::vector<VariantManifestEntry> out;
  std::size_t i = 0;
  for (simdjson::dom::element entry : variants) {
    const std::string at = "variants[" + std::to_string(i++) + "]";
    VariantManifestEntry e;
    if (entry["file"].get(v) || !json::to_string(v, &e.file) || e.file.empty())
      fail(at + ".file", "missing or not a file name");
    e.path = std::filesystem::path(e.file).is_absolute() ? e.file : (folder / e.file).string();
    if (entry["from_qps"].get(v) || !json::to_double(v, &e.from_qps) || !std::isfinite(e.from_qps) || e.from_qps < 0)
      fail(at + ".from_qps", "missing or not a load >= 0");
    if (out.empty() && e.from_qps != 0)
      fail(at + ".from_qps", "the first variant serves from 0 (got " + number_text(e.from_qps) + ")");
    if (!out.empty() && !(e.from_qps > out.back().from_qps)) fail(at + ".from_qps", "loads must be ascending");
    simdjson::dom::array models;
    if (entry["models"].get(models)) fail(at + ".models", "missing or not a list");
    for (simdjson::dom::element m : models) {
      std::string name;
      if (!json::to_string(m, &name) || name.empty()) fail(at + ".models", "a name is not a non-empty string");
      e.models.push_back(name);
    }
    if (e.models.empty()) fail(at + ".models", "the list is empty");
    out.push_back(std::move(e));
  }
  if (out.size() < 2) fail("variants", "at least two variants expected (got " + std::to_string(out.size()) + ")");
  return out;
}

}  // namespace lull
