# The course as a live demo: runs chapter programs in order at full size, showing their output as
# it comes. Exit code 77 (skipped: no usable GPU) is fine; anything else but 0 fails the tour.
# TUTORIAL_TOUR_ARGS in the environment is added to every program's command line, e.g. --pause
# to wait for Enter after each section, or --csv DIR to keep every table.
#
#   cmake -DPROGRAMS=path1;path2 -P tour.cmake
string(REPLACE "\\;" ";" PROGRAMS "${PROGRAMS}")
separate_arguments(tour_args UNIX_COMMAND "$ENV{TUTORIAL_TOUR_ARGS}")

set(summary "")
set(failed FALSE)
set(ran 0)
foreach(program IN LISTS PROGRAMS)
  get_filename_component(name "${program}" NAME)
  message("\n################ ${name} ################")
  execute_process(COMMAND "${program}" ${tour_args} RESULT_VARIABLE exit_code)
  if(exit_code STREQUAL "0")
    set(outcome "passed")
    math(EXPR ran "${ran} + 1")
  elseif(exit_code STREQUAL "77")
    set(outcome "skipped (no usable GPU or capability)")
  else()
    set(outcome "FAILED (exit code ${exit_code})")
    set(failed TRUE)
    math(EXPR ran "${ran} + 1")
  endif()
  string(APPEND summary "\n  ${name}: ${outcome}")
endforeach()

message("\nTour summary:${summary}")
if(ran EQUAL 0)
  message("\nNothing ran: every chapter skipped (no usable GPU here; each chapter's SKIP line "
          "above says why). The programs are built in ${CMAKE_BINARY_DIR}/bin.")
endif()
if(failed)
  message(FATAL_ERROR "at least one chapter failed")
endif()
