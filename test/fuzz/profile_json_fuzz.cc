// libFuzzer target: the profile JSON reader (schema/profile_file, over
// schema/json_reader). Any input either reads or is refused with a one-line
// ProfileFileError naming the file; what reads must survive a write/read
// round trip unchanged.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

#include "schema/profile_file.h"
#include "test/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string path =
      lull::fuzz::write_scratch("profile.json", std::string(reinterpret_cast<const char*>(data), size));
  lull::schema::ProfileSet set;
  try {
    set = lull::read_profile_set_json(path);
  } catch (const lull::ProfileFileError& e) {
    lull::fuzz::check_error_names(e.what(), path);
    return 0;
  }
  const std::string again = lull::fuzz::write_scratch("again.json", lull::profile_set_json_text(set, "fuzz"));
  const lull::schema::ProfileSet back = lull::read_profile_set_json(again);  // must read: lull wrote it
  std::string a, b;
  set.SerializeToString(&a);
  back.SerializeToString(&b);
  if (a != b) lull::fuzz::finding("profile set changed in a write/read round trip");
  return 0;
}
