# Compiles one source file and judges how the compiler answered (see tutorial_add_compile_test in
# tutorial.cmake):
#
#   cmake -DCOMPILER=nvcc -DSOURCE=file.cu -DOBJECT=out.o [-DEXPECT=re1;re2] [-DROOT=<course>]
#         -P compile_test.cmake
#
# The compiler runs in ROOT with SOURCE's path relative to it, so that its messages name the file
# as the course's READMEs do ("03_managed/compiler_rules/x.cu(3): error: ...").
#
# With EXPECT the compiler must refuse the file, and its messages must match every pattern; the
# exact wording is the lesson. Without EXPECT the file must compile: the control that shows the
# compiler and its flags work, so a refusal above is about the rule and not the set-up.
include("${CMAKE_CURRENT_LIST_DIR}/outcome.cmake")
string(REPLACE "\\;" ";" EXPECT "${EXPECT}")
set(source "${SOURCE}")
set(folder "")
if(ROOT)
  file(RELATIVE_PATH source "${ROOT}" "${SOURCE}")
  set(folder WORKING_DIRECTORY "${ROOT}")
endif()
execute_process(COMMAND "${COMPILER}" -std=c++17 -c "${source}" -o "${OBJECT}" ${folder}
                RESULT_VARIABLE exit_code
                OUTPUT_VARIABLE output
                ERROR_VARIABLE output)
message("${output}")
file(REMOVE "${OBJECT}")

set(problems "")
if(EXPECT)
  if(exit_code EQUAL 0)
    string(APPEND problems "\n  the compiler accepted the file; it should have refused it")
  endif()
  foreach(pattern IN LISTS EXPECT)
    if(NOT output MATCHES "${pattern}")
      string(APPEND problems "\n  missing from the compiler's output: ${pattern}")
    endif()
  endforeach()
elseif(NOT exit_code EQUAL 0)
  string(APPEND problems "\n  the compiler refused the file (exit code ${exit_code})")
endif()
if(problems)
  message(FATAL_ERROR "compiling ${source}:${problems}")
endif()
tutorial_record_outcome(passed)
