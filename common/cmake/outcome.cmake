# Each test's outcome as a file, for the plain counts that common/cmake/test_summary.cmake prints
# after every ctest run, with or without a preset and on every CTest version. The test scripts
# (run_test, compile_test, check_csv) include this file first, which records "started"; a test
# that then passes or is skipped records so, and one that fails or is killed (a timeout) stays
# "started", which counts as failed. OUTCOMES (a folder), TEST_NAME and SUITE (host, gpu,
# sanitize or exercise: which footers of the summary apply) come from the test's command line;
# without the first two nothing is recorded. The file holds "<state>;<suite>".
#
#   cmake -DOUTCOMES=<dir> -DTEST_NAME=<name> -DSUITE=<suite> -DSKIPPED=<why> -P outcome.cmake
#       a test that only says why it is skipped (the sanitize suite without compute-sanitizer)
function(tutorial_record_outcome state)
  if(OUTCOMES AND TEST_NAME)
    file(WRITE "${OUTCOMES}/${TEST_NAME}" "${state};${SUITE}")
  endif()
endfunction()

tutorial_record_outcome(started)
if(SKIPPED)
  message("SKIPPED: ${SKIPPED}")
  tutorial_record_outcome(skipped)
endif()
