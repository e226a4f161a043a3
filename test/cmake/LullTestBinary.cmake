# lull_test_binary(TARGET SOURCES file... LIBS lib...)
#
# One Catch2 binary per test folder, named after the library it tests
# (test/core -> lull_core_tests). Every binary gets the same build facts as
# macros: the source and binary trees, the shared data, Debian's Python (the
# stand-in servers need it) and promtool (empty when absent), and is built
# after lull, which many of them run.
find_program(LULL_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
# promtool (Debian package prometheus) lints /metrics: the lint-only test cases are Skipped
# without it, and fail under LULL_REQUIRE_TOOLS=1 (docs/testing.md).
find_program(LULL_PROMTOOL NAMES promtool)
if(NOT LULL_PROMTOOL)
  set(LULL_PROMTOOL "")
endif()
function(lull_test_binary target)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${target} ${PROJECT_SOURCE_DIR}/test/support/test_main.cc ${T_SOURCES})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${target} PRIVATE ${T_LIBS} Catch2::Catch2)
  target_compile_definitions(${target} PRIVATE
    LULL_SOURCE_DIR="${PROJECT_SOURCE_DIR}" LULL_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared"
    LULL_BINARY="$<TARGET_FILE:lull>" LULL_PYTHON3="${LULL_PYTHON3}" LULL_PROMTOOL="${LULL_PROMTOOL}")
  add_dependencies(${target} lull)
endfunction()
