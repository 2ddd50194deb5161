# Runs one test program and judges it (see tutorial_add_test in tutorial.cmake). CTest's own
# PASS_REGULAR_EXPRESSION ignores the exit code, so this script checks both:
#
#   cmake -DPROGRAM=path -DARGS=a;b -DEXPECT=re1;re2 -DCLAIMS=id1;id2? -DEXIT_CODE=0
#         [-DLAUNCHER=tool;args] [-DALLOWED_ERRORS=n|n*contexts] -P run_test.cmake
include("${CMAKE_CURRENT_LIST_DIR}/outcome.cmake")
if(NOT ALLOWED_ERRORS)
  set(ALLOWED_ERRORS 0)
endif()
foreach(list_var LAUNCHER ARGS EXPECT CLAIMS)
  string(REPLACE "\\;" ";" ${list_var} "${${list_var}}")
endforeach()
# A GPU test takes one of the slots gpu_slots.cmake counted before the run (one per 2 GiB free),
# waiting while all are taken; the lock is held until this script ends.
if(GPU_SLOTS AND EXISTS "${GPU_SLOTS}")
  file(READ "${GPU_SLOTS}" slots)
  if(slots GREATER 0)
    set(have_slot FALSE)
    while(NOT have_slot)
      foreach(slot RANGE 1 ${slots})
        file(LOCK "${GPU_SLOTS}-${slot}.lock" GUARD PROCESS TIMEOUT 0 RESULT_VARIABLE locked)
        if(locked EQUAL 0)
          set(have_slot TRUE)
          break()
        endif()
      endforeach()
      if(NOT have_slot)
        execute_process(COMMAND "${CMAKE_COMMAND}" -E sleep 0.2)
      endif()
    endwhile()
  endif()
endif()

# The claims the program judged, by identifier (TUTORIAL_CLAIM_LOG, common/harness/chapter.cpp):
# a fresh file for each run of the test.
# Beside the outcomes folder, not in it: that folder holds one record per test.
set(claim_log "")
if(OUTCOMES)
  set(claim_log "${OUTCOMES}/../claims/${TEST_NAME}")
  file(MAKE_DIRECTORY "${OUTCOMES}/../claims")
  file(REMOVE "${claim_log}")
  set(ENV{TUTORIAL_CLAIM_LOG} "${claim_log}")
endif()

# Standard input is /dev/null, never a terminal: a test must not wait for a key (--pause).
execute_process(COMMAND ${LAUNCHER} "${PROGRAM}" ${ARGS}
                INPUT_FILE /dev/null
                RESULT_VARIABLE exit_code
                OUTPUT_VARIABLE output
                ERROR_VARIABLE output)  # the same variable twice: stdout and stderr interleaved
message("${output}")

# "N*contexts": N reports for each device the program made a CUDA context on (a chapter's
# __managed__ variables are reported once per context); the program says how many under the
# sanitizer, "(CUDA contexts on K devices)", and the EXPECT patterns say @ALLOWED@.
if(ALLOWED_ERRORS MATCHES "^([0-9]+)\\*contexts$")
  set(per_context ${CMAKE_MATCH_1})
  set(contexts 1)
  if(output MATCHES "\\(CUDA contexts on ([0-9]+) devices?\\)")
    set(contexts ${CMAKE_MATCH_1})
  endif()
  math(EXPR ALLOWED_ERRORS "${per_context} * ${contexts}")
  string(REPLACE "@ALLOWED@" "${ALLOWED_ERRORS}" EXPECT "${EXPECT}")
endif()

set(problems "")
# compute-sanitizer exits with 86 when it reports anything, and that code hides the program's own.
# Where some reports are expected (a chapter's __managed__ variables, counted below), the
# program's own outcome comes from its last line, "<chapter>: P passed, F failed, S skipped",
# which it prints only when every section has run: a program stopped by a failed CUDA call, or
# one whose sections failed, cannot pass this way.
if(exit_code STREQUAL "86" AND ALLOWED_ERRORS GREATER 0)
  if(output MATCHES "(^|\n)[A-Za-z0-9_]+: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped\n")
    if(CMAKE_MATCH_3 GREATER 0)
      set(exit_code 1)
    elseif(CMAKE_MATCH_2 GREATER 0)
      set(exit_code 0)
    else()
      set(exit_code 77)
    endif()
  else()
    string(APPEND problems "\n  compute-sanitizer's exit code 86 hides the program's own, and the "
                           "program printed no summary line: it did not finish its sections")
  endif()
elseif(exit_code STREQUAL "86")
  string(APPEND problems "\n  compute-sanitizer found errors (exit code 86)")
endif()

if(exit_code STREQUAL "77" AND NOT EXIT_CODE STREQUAL "77")
  # CTest marks the test as skipped when it sees this marker (SKIP_REGULAR_EXPRESSION).
  message("TUTORIAL_TEST_SKIPPED: the program exited with 77 (skipped)")
  tutorial_record_outcome(skipped)
  return()
endif()
if(NOT exit_code STREQUAL EXIT_CODE AND NOT exit_code STREQUAL "86")
  string(APPEND problems "\n  expected exit code ${EXIT_CODE}, got ${exit_code}")
endif()
foreach(pattern IN LISTS EXPECT)
  if(NOT output MATCHES "${pattern}")
    string(APPEND problems "\n  missing from the output: ${pattern}")
  endif()
endforeach()
# CLAIMS: each named claim must have been judged, and held (or, for observed claims, observed
# either way). "id?" also accepts "not judged" (a capability this machine may lack). Under
# compute-sanitizer every claim may be not judged (timings and counters are not read there).
if(CLAIMS)
  set(judged "")
  if(EXISTS "${claim_log}")
    file(STRINGS "${claim_log}" judged)
  endif()
  foreach(wanted IN LISTS CLAIMS)
    set(optional FALSE)
    if(wanted MATCHES "^(.+)\\?$")
      set(wanted ${CMAKE_MATCH_1})
      set(optional TRUE)
    endif()
    set(accepted held observed observed_otherwise)
    if(optional OR LAUNCHER)
      list(APPEND accepted not_judged)
    endif()
    set(found "")
    foreach(line IN LISTS judged)
      if(line MATCHES "^[^ ]+ ${wanted} ([a-z_]+)$")
        set(found ${CMAKE_MATCH_1})
      endif()
    endforeach()
    if(NOT found)
      string(APPEND problems "\n  claim ${wanted} was not judged (no CLAIM line for it)")
    elseif(NOT found IN_LIST accepted)
      string(APPEND problems "\n  claim ${wanted}: ${found}")
    endif()
  endforeach()
endif()
if(EXIT_CODE STREQUAL "0" AND output MATCHES "(^|\n)FAIL ")
  string(APPEND problems "\n  a FAIL verdict was printed")
endif()
# compute-sanitizer: no hazards, and no more errors than the test allows (ALLOWED_ERRORS).
string(REGEX MATCHALL "ERROR SUMMARY: [0-9]+" summaries "${output}")
foreach(summary IN LISTS summaries)
  string(REGEX REPLACE "ERROR SUMMARY: " "" errors "${summary}")
  if(NOT errors EQUAL ALLOWED_ERRORS)
    string(APPEND problems "\n  compute-sanitizer reported ${errors} errors (allowed: ${ALLOWED_ERRORS})")
  endif()
endforeach()
if(output MATCHES "SUMMARY: [1-9][0-9]* hazards")
  string(APPEND problems "\n  compute-sanitizer reported hazards")
endif()
if(problems)
  message(FATAL_ERROR "test failed:${problems}")
endif()
tutorial_record_outcome(passed)
