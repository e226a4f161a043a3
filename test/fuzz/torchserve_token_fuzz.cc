// libFuzzer target: TorchServe's key file (runtime/upstream/torchserve/torchserve_token),
// read by lull serve and lull profile from --torchserve-token-file. Any bytes
// are read or refused with one line naming the file (std::invalid_argument);
// a key that reads is non-empty printable ASCII without spaces, so it cannot
// end or forge the Authorization header it is sent in.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "runtime/upstream/torchserve/torchserve_token.h"
#include "test/fuzz/fuzz_support.h"

namespace {

void check_key(const std::string& key) {
  if (key.empty()) lull::fuzz::finding("an empty key read");
  for (char c : key)
    if (!(c > ' ' && c < 0x7f)) lull::fuzz::finding("a key with a space or control byte read");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string path =
      lull::fuzz::write_scratch("key_file.json", std::string(reinterpret_cast<const char*>(data), size));
  try {
    const auto keys = lull::torchserve::read_torchserve_key_file(path);
    check_key(keys.inference);
    check_key(keys.management);
  } catch (const std::invalid_argument& e) {
    lull::fuzz::check_error_names(e.what(), path);
  }
  return 0;
}
