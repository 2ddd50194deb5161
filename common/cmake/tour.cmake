# The course as a live demo: runs chapter programs in order at full size, showing their output as
# it comes. Exit code 77 (skipped: no usable GPU) is fine; anything else but 0 fails the tour.
# TUTORIAL_TOUR_ARGS in the environment is added to every program's command line, e.g. --pause
# to wait for Enter after each section, or --csv DIR to keep every table. A chapter none of whose
# sections takes --size, --iters or --workers (its --help does not list it) runs without it, and
# the tour says so; a chapter whose sections take it runs each at that value where the section's
# limits allow, else at its default, and says which (the program does: no section is named).
#
#   cmake -DPROGRAMS=path1;path2 -P tour.cmake
string(REPLACE "\\;" ";" PROGRAMS "${PROGRAMS}")
separate_arguments(tour_args UNIX_COMMAND "$ENV{TUTORIAL_TOUR_ARGS}")

# The tour's arguments for one program: those of --size, --iters and --workers that its --help
# does not list are left out (with their values), and a line says so.
function(arguments_for program name out)
  execute_process(COMMAND "${program}" --help OUTPUT_VARIABLE help ERROR_QUIET)
  set(kept "")
  set(skip_value FALSE)
  foreach(arg IN LISTS tour_args)
    if(skip_value)
      set(skip_value FALSE)
      continue()
    endif()
    if(arg MATCHES "^(--size|--iters|--workers)(=.*)?$")
      set(option ${CMAKE_MATCH_1})
      if(NOT help MATCHES "\n  ${option} ")
        message("(${name}: none of its sections takes ${option}, so it runs without it)")
        if(NOT CMAKE_MATCH_2)
          set(skip_value TRUE)
        endif()
        continue()
      endif()
    endif()
    list(APPEND kept "${arg}")
  endforeach()
  set(${out} "${kept}" PARENT_SCOPE)
endfunction()

set(summary "")
set(failed FALSE)
set(ran 0)
foreach(program IN LISTS PROGRAMS)
  get_filename_component(name "${program}" NAME)
  message("\n################ ${name} ################")
  arguments_for("${program}" ${name} args)
  execute_process(COMMAND "${program}" ${args} RESULT_VARIABLE exit_code)
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
