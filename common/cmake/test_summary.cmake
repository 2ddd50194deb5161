# Runs after every ctest run in a build tree (CTEST_CUSTOM_POST_TEST, see common/CMakeLists.txt)
# and prints what CTest's own summary hides: its "100% tests passed" counts a skipped test (a GPU
# test on a machine without one) as passed. This counts the three apart.
#
#   cmake -DBUILD=<build tree> [-DLEFT_OUT=n] [-DSANITIZE_LEFT_OUT=n] -P test_summary.cmake
# Each test records "<outcome>;<suite>" in <build>/Testing/outcomes/<test>
# (common/cmake/outcome.cmake), and CTEST_CUSTOM_PRE_TEST empties that folder first, so the counts
# are always this run's, with or without a preset, serial or -j, on every CTest version. A test
# still marked "started" was stopped before it could record an outcome (a timeout): it counts as
# failed. LEFT_OUT: how many exercise tests a plain ctest left out; SANITIZE_LEFT_OUT: how many
# sanitizer runs beyond the default rule it left out. Each footer is printed only where it
# applies to the run: the exercises' after a run of more than one suite (not after
# `--preset host` or `--preset gpu`), the sanitizer's after a run with sanitizer tests.
file(GLOB outcome_files "${BUILD}/Testing/outcomes/*")
cmake_minimum_required(VERSION 3.24)  # quoted strings in if() are never variable names
set(passed 0)
set(failed 0)
set(skipped 0)
set(suites "")
foreach(file IN LISTS outcome_files)
  file(READ "${file}" record)
  list(GET record 0 outcome)
  list(LENGTH record fields)
  if(fields GREATER 1)
    list(GET record 1 suite)
    list(APPEND suites ${suite})
  endif()
  if(outcome STREQUAL "passed")
    math(EXPR passed "${passed} + 1")
  elseif(outcome STREQUAL "skipped")
    math(EXPR skipped "${skipped} + 1")
  else()
    math(EXPR failed "${failed} + 1")
  endif()
endforeach()
list(REMOVE_DUPLICATES suites)
list(LENGTH suites suite_count)
# The hints name commands that work from where the learner stands: the README's workflow leaves
# them in the course's folder (presets, --test-dir build), a learner who ran ctest inside the build
# folder is there. $PWD is the shell's folder: CTest changes its own, not the variable.
set(here "$ENV{PWD}")
if(here AND IS_DIRECTORY "${here}")
  file(REAL_PATH "${here}" here)
endif()
file(REAL_PATH "${BUILD}" build_real)
if(here STREQUAL build_real)
  set(exercises_command "TUTORIAL_EXERCISES=1 ctest -L exercise")
  set(full_sanitize_command "TUTORIAL_SANITIZE_FULL=1 ctest -L sanitize")
  set(verbose_command "ctest -V -R <test name>")
  set(last_log "Testing/Temporary/LastTest.log")
else()
  if(here)
    file(RELATIVE_PATH build_shown "${here}" "${build_real}")
  endif()
  if(NOT build_shown OR build_shown MATCHES "^\\.\\./\\.\\./")
    set(build_shown "${build_real}")  # far away: the whole path
  endif()
  if(build_shown MATCHES "[ '\"]")
    set(build_shown "\"${build_shown}\"")
  endif()
  # Presets (version 6) need CMake 3.25: with an older one, the plain form.
  if(EXISTS "${here}/CMakePresets.json" AND build_shown STREQUAL "build"
     AND NOT CMAKE_VERSION VERSION_LESS 3.25)
    set(exercises_command "ctest --preset exercise")
    set(full_sanitize_command "ctest --preset sanitize-full")
  else()
    set(exercises_command "TUTORIAL_EXERCISES=1 ctest --test-dir ${build_shown} -L exercise")
    set(full_sanitize_command "TUTORIAL_SANITIZE_FULL=1 ctest --test-dir ${build_shown} -L sanitize")
  endif()
  set(verbose_command "ctest --test-dir ${build_shown} -V -R <test name>")
  set(last_log "${build_shown}/Testing/Temporary/LastTest.log")
endif()
set(exercises_hint "they fail until you solve the exercise; run them with: ${exercises_command}")
list(LENGTH outcome_files ran)
if(ran EQUAL 0)
  # ctest -N, or a filter that matched nothing: no test ran, nothing to count.
  if(LEFT_OUT GREATER 0 OR SANITIZE_LEFT_OUT GREATER 0)
    message("\nNo test ran. A plain ctest leaves out:")
  endif()
  if(LEFT_OUT GREATER 0)
    message("- the exercise checks (${exercises_hint})")
  endif()
  if(SANITIZE_LEFT_OUT GREATER 0)
    message("- the sanitizer runs beyond the default rule (every one: ${full_sanitize_command})")
  endif()
  return()
endif()
message("\nIn plain numbers (CTest's \"tests passed\" above includes the skipped ones):\n"
        "tests: ${passed} passed, ${failed} failed, ${skipped} skipped")
if(skipped GREATER 0)
  message("Skipped means not run here: no usable GPU, too few GPUs, or a tool or capability "
          "missing. CTest shows a skipped test's reason only with -V: ${verbose_command}, "
          "or read ${last_log}.")
endif()
if(LEFT_OUT GREATER 0 AND suite_count GREATER 1)
  message("The exercise checks were left out (${LEFT_OUT} in this build: ${exercises_hint}).")
endif()
if(SANITIZE_LEFT_OUT GREATER 0 AND "sanitize" IN_LIST suites)
  message("compute-sanitizer ran memcheck on every GPU test, and racecheck, synccheck and "
          "initcheck only where a section has shared memory, barriers or memory left unwritten "
          "(README, Tests); all four on every test: ${full_sanitize_command}.")
endif()
