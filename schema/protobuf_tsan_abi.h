// Force-included first in every file of a ThreadSanitizer build (root
// CMakeLists.txt, LULL_SANITIZE=thread). protobuf's map_field.h gives
// MapFieldBase two extra members when it sees __SANITIZE_THREAD__, but
// Debian's libprotobuf is built without TSan: its code (the Struct
// constructors, the JSON parser) lays the map out without them, and the
// inlined Map code of a TSan build reads past them into garbage (a segfault
// in Map::find on the first JSON object lull reads; docs/testing.md,
// "Sanitizers"). Including map_field.h once with the macro hidden gives this
// build the library's layout; its include guard keeps it so. libstdc++'s
// configuration is read first, so its TSan annotations stay on.
#pragma once
#include <cstddef>

#pragma push_macro("__SANITIZE_THREAD__")
#undef __SANITIZE_THREAD__
#include <google/protobuf/map_field.h>
#pragma pop_macro("__SANITIZE_THREAD__")
