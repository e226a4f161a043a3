# lull_catch_tests(TARGET [PROCESS file...] [THREADED file...] [PROPERTIES name value...])
#
# Registers every Catch2 test case of TARGET with CTest, one ctest entry each,
# labelled with its tier (docs/testing.md):
#   process  the test cases of the PROCESS source files (they start processes
#            or servers, or open sockets), and any test case tagged [process]
#            or [slow] (more than about 10 s of compute) in another file;
#   unit     every other test case (in process, fast);
#   threaded in addition, the test cases of the THREADED files (the threaded
#            serving components: the TSan job in .ci/run runs `ctest -L threaded`).
# Files are named as in add_executable; a name that is not a source of TARGET
# is an error, so a renamed file cannot silently change tier. A file's tagged
# test cases are looked for when CMake configures (a changed test file
# reconfigures), so a group that would match nothing is not registered. Every entry
# treats exit code 77 (test/support/skip.h) as skipped, and runs with
# OMP_WAIT_POLICY=PASSIVE: tests that force OpenMP threads on beside another
# test (ctest -j2 on 2 cores) otherwise spin at each barrier while their
# partner thread waits for a core (one took 0.4 s alone, 108 s beside others).
function(lull_catch_tests target)
  cmake_parse_arguments(T "" "" "PROCESS;THREADED;PROPERTIES" ${ARGN})
  get_target_property(sources ${target} SOURCES)
  set(names "")
  set(tagged_names "")  # files with a test case tagged [process] or [slow]
  foreach(src ${sources})
    get_filename_component(n ${src} NAME_WE)
    list(APPEND names ${n})
    get_filename_component(path ${src} ABSOLUTE)
    if(n MATCHES "_test$" AND EXISTS ${path})
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
      file(STRINGS ${path} tagged REGEX "\\[(process|slow)\\]")
      if(tagged)
        list(APPEND tagged_names ${n})
      endif()
    endif()
  endforeach()
  set(process_names "")
  set(threaded_names "")
  foreach(kind PROCESS THREADED)
    foreach(f ${T_${kind}})
      get_filename_component(n ${f} NAME_WE)
      if(NOT n IN_LIST names)
        message(FATAL_ERROR "lull_catch_tests(${target}): ${f} is not a source of ${target}")
      endif()
      string(TOLOWER ${kind} k)
      list(APPEND ${k}_names ${n})
    endforeach()
  endforeach()
  # Catch2 v2 tags each test case with its file name under -# ([#frontend_test]);
  # one test spec per (tier, threaded) group, its clauses ORed with ",".
  set(unit_spec "")
  set(unit_threaded_spec "")
  set(process_spec "")
  set(process_threaded_spec "")
  foreach(n ${names})
    if(NOT n MATCHES "_test$")
      continue()
    endif()
    set(suffix "")
    if(n IN_LIST threaded_names)
      set(suffix "_threaded")
    endif()
    if(n IN_LIST process_names)
      list(APPEND process${suffix}_spec "[#${n}]")
    else()
      list(APPEND unit${suffix}_spec "[#${n}]~[process]~[slow]")
      if(n IN_LIST tagged_names)  # else that group would find no test ("contains no tests!")
        list(APPEND process${suffix}_spec "[#${n}][process]" "[#${n}][slow]")
      endif()
    endif()
  endforeach()
  set(labels_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake")
  set(labels_script "")
  foreach(group unit unit_threaded process process_threaded)
    if(NOT ${group}_spec)
      continue()
    endif()
    list(JOIN ${group}_spec "," spec)
    string(REPLACE "_" ";" labels ${group})
    catch_discover_tests(${target} TEST_SPEC "-#" "${spec}" TEST_LIST ${target}_${group}
                         EXTRA_ARGS --warn NoTests PROPERTIES SKIP_RETURN_CODE 77 ENVIRONMENT OMP_WAIT_POLICY=PASSIVE
                         ${T_PROPERTIES})
    # catch_discover_tests cannot pass a list-valued property; label each
    # group's tests after they are discovered instead.
    string(APPEND labels_script
           "foreach(t IN LISTS ${target}_${group})\n"
           "  set_tests_properties(\"\${t}\" PROPERTIES LABELS \"${labels}\")\n"
           "endforeach()\n")
  endforeach()
  file(WRITE "${labels_file}" "${labels_script}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels_file}")
endfunction()
