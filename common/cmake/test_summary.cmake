# Runs after every ctest run in a build tree (CTEST_CUSTOM_POST_TEST, see common/CMakeLists.txt)
# and prints what CTest's own summary hides: its "100% tests passed" counts a skipped test (a GPU
# test on a machine without one) as passed. This counts the three apart.
#
#   cmake -DBUILD=<build tree> -P test_summary.cmake
# The counts come from Testing/results.xml, the JUnit file the test presets ask for. CTest writes
# it before this script runs, and CTEST_CUSTOM_PRE_TEST deletes it first, so it is always this
# run's. A plain `ctest` (no preset) writes none: then only a reminder is printed.
set(junit "${BUILD}/Testing/results.xml")
if(NOT EXISTS "${junit}")
  message("\nCTest's \"tests passed\" above counts skipped tests as passed: the tests listed "
          "under \"did not run\" were skipped (no usable GPU, too few GPUs, or a missing tool). "
          "Run with a preset (ctest --preset default) to have them counted apart.")
  return()
endif()
file(READ "${junit}" head LIMIT 400)
foreach(count tests failures disabled skipped)
  string(REGEX MATCH "${count}=\"[0-9]+\"" found "${head}")
  string(REGEX REPLACE "[^0-9]" "" ${count} "${found}")
endforeach()
if(tests EQUAL 0)
  return()  # ctest -N: listed, not run
endif()
math(EXPR skipped "${skipped} + ${disabled}")
math(EXPR passed "${tests} - ${failures} - ${skipped}")
set(failed ${failures})
message("\nIn plain numbers (CTest's \"tests passed\" above includes the skipped ones):\n"
        "tests: ${passed} passed, ${failed} failed, ${skipped} skipped")
if(skipped GREATER 0)
  message("Skipped means not run here: no usable GPU, too few GPUs, or a tool or capability "
          "missing (each test's output says which).")
endif()
