# Runs after every ctest run in a build tree (CTEST_CUSTOM_POST_TEST, see common/CMakeLists.txt)
# and prints what CTest's own summary hides: its "100% tests passed" counts a skipped test (a GPU
# test on a machine without one) as passed. This reads the run's log and counts the three apart.
#
#   cmake -DBUILD=<build tree> -P test_summary.cmake
# While CTest 3.x runs, this run's log is LastTest*.log.tmp. (A LastTest.log is the previous
# run's: CTest 4.x writes this run's only after this script, so it must not be counted.)
file(GLOB logs "${BUILD}/Testing/Temporary/LastTest*.log.tmp")
if(NOT logs)
  # CTest 4.x writes its log only after this runs.
  message("\nCTest's \"tests passed\" above counts skipped tests as passed: the tests listed "
          "under \"did not run\" were skipped (no usable GPU, too few GPUs, or a missing tool).")
  return()
endif()
list(GET logs 0 log)
file(STRINGS "${log}" lines
     REGEX "^[0-9]+/[0-9]+ Test: |^Test (Passed|Failed)\\.|^Skip regular expression found")
set(passed 0)
set(failed 0)
set(skipped 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^Test Passed")
    math(EXPR passed "${passed} + 1")
  elseif(line MATCHES "^Test Failed")
    math(EXPR failed "${failed} + 1")
  elseif(line MATCHES "^Skip regular expression")
    math(EXPR skipped "${skipped} + 1")
  endif()
endforeach()
message("\nIn plain numbers (CTest's \"tests passed\" above includes the skipped ones):\n"
        "tests: ${passed} passed, ${failed} failed, ${skipped} skipped")
if(skipped GREATER 0)
  message("Skipped means not run here: no usable GPU, too few GPUs, or a tool or capability "
          "missing (each test's output says which).")
endif()
