# Runs one test program and judges it (see tutorial_add_test in tutorial.cmake). CTest's own
# PASS_REGULAR_EXPRESSION ignores the exit code, so this script checks both:
#
#   cmake -DPROGRAM=path -DARGS=a;b -DEXPECT=re1;re2 -DEXIT_CODE=0 [-DLAUNCHER=tool;args] -P run_test.cmake
foreach(list_var LAUNCHER ARGS EXPECT)
  string(REPLACE "\\;" ";" ${list_var} "${${list_var}}")
endforeach()

execute_process(COMMAND ${LAUNCHER} "${PROGRAM}" ${ARGS}
                RESULT_VARIABLE exit_code
                OUTPUT_VARIABLE output
                ERROR_VARIABLE output)  # the same variable twice: stdout and stderr interleaved
message("${output}")

if(exit_code STREQUAL "77" AND NOT EXIT_CODE STREQUAL "77")
  # CTest marks the test as skipped when it sees this marker (SKIP_REGULAR_EXPRESSION).
  message("TUTORIAL_TEST_SKIPPED: the program exited with 77 (skipped)")
  return()
endif()

set(problems "")
if(NOT exit_code STREQUAL EXIT_CODE)
  string(APPEND problems "\n  expected exit code ${EXIT_CODE}, got ${exit_code}")
endif()
foreach(pattern IN LISTS EXPECT)
  if(NOT output MATCHES "${pattern}")
    string(APPEND problems "\n  missing from the output: ${pattern}")
  endif()
endforeach()
if(EXIT_CODE STREQUAL "0" AND output MATCHES "(^|\n)FAIL ")
  string(APPEND problems "\n  a FAIL verdict was printed")
endif()
if(output MATCHES "ERROR SUMMARY: [1-9]" OR output MATCHES "SUMMARY: [1-9][0-9]* hazards")
  string(APPEND problems "\n  compute-sanitizer reported errors")
endif()
if(problems)
  message(FATAL_ERROR "test failed:${problems}")
endif()
