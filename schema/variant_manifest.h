#pragma once
// The variants manifest (`lull plan variants --variants-out DIR` writes
// DIR/variants.json; `lull serve --variant-sets DIR/variants.json` reads it):
// which policy set serves from which load, and the models each one uses.
// Kept in schema/ beside the other readers of lull's own JSON (simdjson is
// this library's private dependency); the writer is cli/plan_variants_output.
#include <stdexcept>
#include <string>
#include <vector>

namespace lull {

inline constexpr const char* kVariantManifestFormat = "lull-variants/1";
inline constexpr const char* kVariantManifestName = "variants.json";

struct VariantManifestEntry {
  std::string file;                 // the policy set, as the manifest names it (relative to its folder)
  std::string path;                 // the same, resolved against the manifest's folder
  double from_qps = 0;              // serves loads from here up
  std::vector<std::string> models;  // the models its policies use
};

struct VariantManifestError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws VariantManifestError("PATH: field: why", one line) for a file that
// does not parse, a wrong format, a missing or mistyped field, a first
// variant not from 0 or loads not ascending, or fewer than two variants.
std::vector<VariantManifestEntry> read_variant_manifest(const std::string& path);

}  // namespace lull
