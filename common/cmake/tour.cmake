# The course as a live demo: runs every chapter program in order at full size, showing its output
# as it comes. Exit code 77 (skipped: no usable GPU) is fine; anything else but 0 fails the tour.
#
#   cmake -DPROGRAMS=path1;path2 -P tour.cmake
string(REPLACE "\\;" ";" PROGRAMS "${PROGRAMS}")

set(summary "")
set(failed FALSE)
foreach(program IN LISTS PROGRAMS)
  get_filename_component(name "${program}" NAME)
  message("\n################ ${name} ################")
  execute_process(COMMAND "${program}" RESULT_VARIABLE exit_code)
  if(exit_code STREQUAL "0")
    set(outcome "passed")
  elseif(exit_code STREQUAL "77")
    set(outcome "skipped (no usable GPU or capability)")
  else()
    set(outcome "FAILED (exit code ${exit_code})")
    set(failed TRUE)
  endif()
  string(APPEND summary "\n  ${name}: ${outcome}")
endforeach()

message("\nTour summary:${summary}")
if(failed)
  message(FATAL_ERROR "at least one chapter failed")
endif()
