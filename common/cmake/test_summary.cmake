# Runs after every ctest run in a build tree (CTEST_CUSTOM_POST_TEST, see common/CMakeLists.txt)
# and prints what CTest's own summary hides: its "100% tests passed" counts a skipped test (a GPU
# test on a machine without one) as passed. This counts the three apart.
#
#   cmake -DBUILD=<build tree> [-DLEFT_OUT=n] -P test_summary.cmake
# Each test records its outcome in <build>/Testing/outcomes/<test> (common/cmake/outcome.cmake),
# and CTEST_CUSTOM_PRE_TEST empties that folder first, so the counts are always this run's, with
# or without a preset, serial or -j, on every CTest version. A test still marked "started" was
# stopped before it could record an outcome (a timeout): it counts as failed. LEFT_OUT: how many
# exercise tests a plain ctest left out.
file(GLOB outcome_files "${BUILD}/Testing/outcomes/*")
cmake_minimum_required(VERSION 3.24)  # quoted strings in if() are never variable names
set(passed 0)
set(failed 0)
set(skipped 0)
foreach(file IN LISTS outcome_files)
  file(READ "${file}" outcome)
  if(outcome STREQUAL "passed")
    math(EXPR passed "${passed} + 1")
  elseif(outcome STREQUAL "skipped")
    math(EXPR skipped "${skipped} + 1")
  else()
    math(EXPR failed "${failed} + 1")
  endif()
endforeach()
list(LENGTH outcome_files ran)
if(ran EQUAL 0)
  # ctest -N, or a filter that matched nothing: no test ran, nothing to count.
  if(LEFT_OUT GREATER 0)
    message("\nNo test ran. A plain ctest leaves out the exercise checks (they fail until you "
            "solve the exercise); run them with: TUTORIAL_EXERCISES=1 ctest -L exercise")
  endif()
  return()
endif()
message("\nIn plain numbers (CTest's \"tests passed\" above includes the skipped ones):\n"
        "tests: ${passed} passed, ${failed} failed, ${skipped} skipped")
if(skipped GREATER 0)
  message("Skipped means not run here: no usable GPU, too few GPUs, or a tool or capability "
          "missing (each test's output says which).")
endif()
if(LEFT_OUT GREATER 0)
  message("A plain ctest leaves out the ${LEFT_OUT} exercise checks (they fail until you solve "
          "the exercise); run them with: TUTORIAL_EXERCISES=1 ctest -L exercise")
endif()
