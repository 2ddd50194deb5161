# Everything the chapters share at build time. Each chapter's CMakeLists.txt includes this file
# *before* project(), so that the defaults below are in place when CUDA is enabled:
#
#   cmake_minimum_required(VERSION 3.24)
#   include(${CMAKE_CURRENT_LIST_DIR}/../common/cmake/tutorial.cmake)
#   project(tutorial_03_managed LANGUAGES CXX CUDA)
#   enable_testing()
#   tutorial_chapter(03_managed SECTIONS aplusb)
#   tutorial_add_test(03_managed aplusb EXPECT "PASS 03_managed/aplusb")
include_guard(GLOBAL)

cmake_path(SET TUTORIAL_ROOT NORMALIZE "${CMAKE_CURRENT_LIST_DIR}/../..")
string(REGEX REPLACE "(.)/$" "\\1" TUTORIAL_ROOT "${TUTORIAL_ROOT}")  # no trailing slash: no "//"

# nvcc hands the host compiler its include folders and -Xcompiler values through a shell, and
# nvcc 13.0 mangles two characters there: an apostrophe (-I"...learner\'s...": the folder is not
# found) and a comma (-Xcompiler splits its value at commas). So the course's own folder reaches
# the host compiler inside double quotes, through -Xcompiler (tutorial_compile_options), which
# nvcc passes on as written. Inside double quotes the shell still reads " \ $ and `, and CMake
# splits lists at ";": a clone whose path has one of those cannot build, and is refused here.
# A "#" starts a comment in the Makefiles and flag files CMake writes, and a ":" separates a
# Makefile rule's target from its inputs ("target pattern contains no '%'"): refused here too, in
# one line, before the build can fail with messages that never name the folder (Ninja takes ":").
string(REGEX MATCH "[\"\\\\$`;#\n]" _tutorial_bad_character "${TUTORIAL_ROOT}")
if(NOT _tutorial_bad_character AND TUTORIAL_ROOT MATCHES ":" AND NOT CMAKE_GENERATOR MATCHES "Ninja")
  set(_tutorial_bad_character ":")
endif()
if(_tutorial_bad_character)
  set(_tutorial_shown "the character ${_tutorial_bad_character}")
  if(_tutorial_bad_character STREQUAL "\n")
    set(_tutorial_shown "a line break")
  endif()
  message(FATAL_ERROR "The course's folder has ${_tutorial_shown} in its path, which the build "
    "cannot carry (${TUTORIAL_ROOT}): clone or move the course to a folder whose path has none of "
    "\" \\ $ ` ; # : (spaces, apostrophes and commas are fine; with -G Ninja so is :).")
endif()

# The CUDA compiler, before project() looks for it: without nvcc on the PATH CMake would only say
# "No CMAKE_CUDA_COMPILER could be found". Look where the CUDA Toolkit usually installs it, use it
# from there if it is found, and otherwise say what to do.
if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
  find_program(TUTORIAL_NVCC_ON_PATH nvcc)
  if(NOT TUTORIAL_NVCC_ON_PATH)
    file(GLOB _tutorial_cuda_dirs /usr/local/cuda-*/bin)  # CUDA 13.0 beside 12.x sorts later
    list(REVERSE _tutorial_cuda_dirs)
    find_program(TUTORIAL_NVCC_ELSEWHERE nvcc NO_DEFAULT_PATH
                 PATHS /usr/local/cuda/bin ${_tutorial_cuda_dirs} /opt/cuda/bin)
    if(TUTORIAL_NVCC_ELSEWHERE)
      message(STATUS "nvcc is not on the PATH; using ${TUTORIAL_NVCC_ELSEWHERE} "
                     "(set CUDACXX or -DCMAKE_CUDA_COMPILER=... to choose another)")
      set(CMAKE_CUDA_COMPILER "${TUTORIAL_NVCC_ELSEWHERE}" CACHE FILEPATH "CUDA compiler")
    else()
      message(FATAL_ERROR
        "No CUDA compiler (nvcc) found: not on the PATH, nor in /usr/local/cuda/bin, "
        "/usr/local/cuda-*/bin or /opt/cuda/bin.\n"
        "This course needs the CUDA Toolkit 13.0 or newer. If it is installed elsewhere, tell "
        "CMake where, then configure again from an empty build folder:\n"
        "  export PATH=/path/to/cuda/bin:$PATH      (or)\n"
        "  export CUDACXX=/path/to/cuda/bin/nvcc    (or)\n"
        "  cmake -DCMAKE_CUDA_COMPILER=/path/to/cuda/bin/nvcc ...")
    endif()
  endif()
endif()

# GPU code: native code for compute capability 9.0 (H100/H200, where the course is tested) plus
# PTX for 7.5, the oldest GPU CUDA 13 supports, which the driver compiles for any newer GPU at
# load time. A -DCMAKE_CUDA_ARCHITECTURES=... (e.g. "native") or the CUDAARCHS environment
# variable always wins: a cache entry the user set is never overwritten.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  set(CMAKE_CUDA_ARCHITECTURES "90-real;75-virtual" CACHE STRING "GPU architectures to build for")
endif()
# "native" means "the GPUs of this machine": without one, CMake's own check fails once per target
# with a long message. Say it once, with what to do.
if(CMAKE_CUDA_ARCHITECTURES STREQUAL "native" OR "$ENV{CUDAARCHS}" STREQUAL "native")
  execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE _tutorial_no_gpu OUTPUT_QUIET ERROR_QUIET)
  if(NOT _tutorial_no_gpu EQUAL 0)
    message(FATAL_ERROR "CMAKE_CUDA_ARCHITECTURES=native needs a GPU on this machine, and "
      "nvidia-smi finds none. Leave it out (the course builds for compute capability 9.0 plus "
      "PTX that the driver compiles for any GPU of 7.5 or newer) or name your GPU's, e.g. "
      "-DCMAKE_CUDA_ARCHITECTURES=89, from an empty build folder.")
  endif()
endif()
if(NOT DEFINED CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type")
endif()

set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
set(CMAKE_CUDA_EXTENSIONS OFF)
# Every program lands in <build>/bin, whichever folder it was built from.
if(NOT CMAKE_RUNTIME_OUTPUT_DIRECTORY)
  set(CMAKE_RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bin")
endif()

if(DEFINED ENV{CI})
  set(_tutorial_werror_default ON)
else()
  set(_tutorial_werror_default OFF)
endif()
option(TUTORIAL_WARNINGS_AS_ERRORS "Treat compiler warnings as errors (on when CI is set)"
       ${_tutorial_werror_default})

# Warnings for host code compiled by the C++ compiler and for the host half of .cu files;
# -lineinfo lets compute-sanitizer name the source line of a bad access. Source paths in what the
# programs print (__FILE__ in CUDA_CHECK's message) are relative to the course's folder,
# "02_pinned/error_checks.cpp:46: ...", wherever it was cloned; nvcc gets that option through
# -Xcompiler in double quotes, as it gets the include folder (common/CMakeLists.txt).
function(tutorial_compile_options target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra -lineinfo>)
  # GCC 8 and Clang 10 have the option; a path with "=" in it cannot be written in it.
  if(NOT DEFINED TUTORIAL_MACRO_PREFIX_MAP)
    include(CheckCXXCompilerFlag)
    check_cxx_compiler_flag(-fmacro-prefix-map=/course/=course/ TUTORIAL_MACRO_PREFIX_MAP)
  endif()
  if(TUTORIAL_MACRO_PREFIX_MAP AND NOT TUTORIAL_ROOT MATCHES "=")
    _tutorial_genex_value(prefix_map "-fmacro-prefix-map=${TUTORIAL_ROOT}/=")
    target_compile_options(${target} PRIVATE
      "$<$<COMPILE_LANGUAGE:CXX>:${prefix_map}>"
      "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=\"${prefix_map}\">")
  endif()
  if(TUTORIAL_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Werror>
      $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
  endif()
endfunction()

# TEXT as it can stand in a generator expression's value ("," ">" ";" would split or end it).
function(_tutorial_genex_value out text)
  string(REPLACE ">" "$<ANGLE-R>" text "${text}")
  string(REPLACE "," "$<COMMA>" text "${text}")
  string(REPLACE ";" "$<SEMICOLON>" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# One chapter: the executable <name> linked with common/, plus the host tests every chapter has
# (help, list, no device). The sections are those of the table in the chapter's main.cpp
# (`Section{"name", ...}`), in its order; the `list` test checks that the program lists them so.
# The sources are found, not listed: main.cpp; for each section its checks, checks/<section>.cu
# (or .cpp), which includes the lesson <section>.cu (a section not yet split: <section>.cu
# alone); and the chapter's helpers (helpers/*.cu and helpers/*.cpp: code several sections share,
# which is not a section). SOURCES adds any other.
# MANAGED_GLOBALS n: the program defines n __device__ __managed__ variables. compute-sanitizer
# (2025.3) reports each of them as a leak, so memcheck runs then expect exactly n leak reports;
# any real leak on top still fails the test.
function(tutorial_chapter name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "MANAGED_GLOBALS" "SOURCES")
  if(arg_MANAGED_GLOBALS)
    set(TUTORIAL_MANAGED_GLOBALS_${name} ${arg_MANAGED_GLOBALS} PARENT_SCOPE)
    set(TUTORIAL_MANAGED_GLOBALS_${name} ${arg_MANAGED_GLOBALS})
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS main.cpp)
  file(READ "${CMAKE_CURRENT_SOURCE_DIR}/main.cpp" table)
  string(REGEX MATCHALL "Section{\"[a-z_0-9]+\"" entries "${table}")
  set(arg_SECTIONS "")
  foreach(entry IN LISTS entries)
    string(REGEX REPLACE "Section{\"([a-z_0-9]+)\"" "\\1" section "${entry}")
    list(APPEND arg_SECTIONS ${section})
  endforeach()
  if(NOT arg_SECTIONS)
    message(FATAL_ERROR "tutorial_chapter(${name}): main.cpp has no Section{\"name\", ...} entry")
  endif()
  # A checks file added later changes which file a section compiles: CMake looks again.
  file(GLOB _tutorial_checks CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/checks/*.cu"
       "${CMAKE_CURRENT_SOURCE_DIR}/checks/*.cpp")
  set(sources main.cpp ${arg_SOURCES})
  foreach(section IN LISTS arg_SECTIONS)
    set(found "")
    foreach(file checks/${section}.cu checks/${section}.cpp ${section}.cu ${section}.cpp)
      if(NOT found AND EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${file}")
        set(found ${file})
      endif()
    endforeach()
    if(NOT found)
      message(FATAL_ERROR "tutorial_chapter(${name}): section ${section} has no file "
                          "checks/${section}.cu, ${section}.cu or either as .cpp")
    endif()
    list(APPEND sources ${found})
  endforeach()
  file(GLOB helpers CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/helpers/*.cu"
       "${CMAKE_CURRENT_SOURCE_DIR}/helpers/*.cpp")
  list(APPEND sources ${helpers})
  if(NOT TARGET tutorial_common)
    # Building this chapter on its own: bring in common/ from beside it.
    add_subdirectory("${TUTORIAL_ROOT}/common" "${CMAKE_BINARY_DIR}/common")
  endif()
  add_executable(${name} ${sources})
  target_link_libraries(${name} PRIVATE tutorial_common)
  # Each lesson ends with a main() of its own, for building it alone (common/standalone.cu); in
  # the chapter's program its checks run the walkthrough instead.
  target_compile_definitions(${name} PRIVATE TUTORIAL_CHECKS=1)
  tutorial_compile_options(${name})
  set_property(GLOBAL APPEND PROPERTY TUTORIAL_CHAPTERS ${name})
  # This chapter alone as a demo: cmake --build build --target tour_03_managed
  add_custom_target(tour_${name}
    COMMAND "${CMAKE_COMMAND}" "-DPROGRAMS=$<TARGET_FILE:${name}>"
            -P "${TUTORIAL_ROOT}/common/cmake/tour.cmake"
    DEPENDS ${name}
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"  # where --csv DIR in TUTORIAL_TOUR_ARGS lands
    USES_TERMINAL
    VERBATIM  # each argument reaches cmake whole, whatever the paths hold (' , spaces)
    COMMENT "Running ${name}")

  # The command line itself (parse errors, unknown sections and options, limits every chapter
  # shares) is tested once, in common/tests; here only what belongs to this chapter.
  list(JOIN arg_SECTIONS " +[^\n]*\n" listing)
  tutorial_add_test(${name} help HOST ARGS --help EXPECT "Usage: ${name} " "--device N")
  tutorial_add_test(${name} list HOST ARGS --list EXPECT "(^|\n)${listing} ")
  # With every GPU hidden the program must say SKIP and exit 77; this test expects exactly that,
  # so it passes (rather than skips) on any machine.
  tutorial_add_test(${name} no_device HOST ARGS --quick ENVIRONMENT "CUDA_VISIBLE_DEVICES="
                    EXIT_CODE 77 EXPECT "SKIP: ${name}: no usable CUDA device[^\n]*\n +[0-9]+ sections? not run: [a-z]")
endfunction()

# One test, named <chapter>.<test>. It passes only if the program exits with EXIT_CODE (default
# 0) AND its output matches every EXPECT regular expression; a test expecting exit 0 also fails on
# any "FAIL " line. A program that exits 77 when 77 was not expected is reported as skipped.
#
#   ARGS ...         command line (default: "<test> --quick", i.e. run the section of that name)
#   EXPECT ...       regular expressions the output (stdout + stderr) must match
#   CLAIMS ...       the identifiers of the claims the run must judge, each held (an observed
#                    claim: observed either way); "id?" may also be not judged (a capability the
#                    machine may lack). Under compute-sanitizer any may be not judged. The claims'
#                    sentences live only in the checks files: tests name them by identifier.
#   EXIT_CODE n      expected exit code (default 0)
#   HOST             runs without a GPU (label `host`; otherwise `gpu`)
#   FAULT            a deliberate-fault demo (label `fault`; not run under compute-sanitizer)
#   LABELS ...       more labels, e.g. multi_gpu
#   ENVIRONMENT ...  VAR=value pairs for the test
#   TIMEOUT s        default 60 (host tests 30)
#   SANITIZE ...     the compute-sanitizer tools this test may run under (default: all four);
#                    which of them the default `sanitize` suite runs: _tutorial_sanitizer_tools
#   NO_SANITIZE      keep this GPU test out of the `sanitize` suite
#   SOURCE file      the file (relative to the chapter) the test's section is written in, where
#                    it is not <section>.cu/.cpp: what the sanitizer rule reads
#   RUN_SERIAL       run alone, never beside other tests (for tests that read device-wide state,
#                    such as the free memory cudaMemGetInfo reports)
#   TIMING           the test judges timings, so it runs alone (RUN_SERIAL) in the `gpu` suite
#                    and never beside another test: found by itself where the section's file
#                    (<section>.cu/.cpp, or an exercise's check) makes a timing claim or times
#                    GPU work; say it for a test whose timing lives elsewhere
#   PROGRAM target   the program to run (default: the chapter's own, <chapter>)
#   EXERCISE         an exercise as the learner left it (label `exercise` instead of `gpu`, so
#                    that a starter, which fails until solved, stays out of the gpu suite)
function(tutorial_add_test chapter test)
  cmake_parse_arguments(PARSE_ARGV 2 arg "HOST;FAULT;NO_SANITIZE;RUN_SERIAL;EXERCISE;TIMING"
                        "EXIT_CODE;TIMEOUT;PROGRAM;SOURCE"
                        "ARGS;EXPECT;CLAIMS;LABELS;ENVIRONMENT;SANITIZE")
  if(NOT arg_EXPECT AND NOT arg_CLAIMS)
    message(FATAL_ERROR "tutorial_add_test(${chapter} ${test}): give at least one EXPECT pattern "
                        "or CLAIMS identifier")
  endif()
  if(NOT DEFINED arg_ARGS)
    set(arg_ARGS ${test} --quick)
  endif()
  if(NOT DEFINED arg_EXIT_CODE)
    set(arg_EXIT_CODE 0)
  endif()
  if(NOT arg_PROGRAM)
    set(arg_PROGRAM ${chapter})
  endif()
  if(arg_HOST)
    set(kind host)
    set(default_timeout 30)
  elseif(arg_EXERCISE)
    set(kind exercise)
    set(default_timeout 60)
  else()
    set(kind gpu)
    set(default_timeout 60)
  endif()
  if(NOT DEFINED arg_TIMEOUT)
    set(arg_TIMEOUT ${default_timeout})
  endif()
  set(labels ${chapter} ${kind} ${arg_LABELS})
  if(arg_FAULT)
    list(APPEND labels fault)
  endif()

  _tutorial_register_test(${chapter}.${test} ${arg_PROGRAM} "" "${arg_ARGS}" "${arg_EXPECT}"
                          ${arg_EXIT_CODE} ${arg_TIMEOUT} "${labels}" "${arg_ENVIRONMENT}"
                          "${arg_CLAIMS}")
  # A test that times GPU work runs alone, whatever -j says: beside another test its ratios
  # measure the other test too (ctest -j 4 once made an 8x claim measure 1.96x). The sanitized
  # runs below judge no timing, so they may run side by side.
  if(NOT arg_HOST AND NOT arg_TIMING)
    _tutorial_times_gpu_work(arg_TIMING "${arg_PROGRAM}" "${arg_ARGS}" "${arg_SOURCE}")
  endif()
  if(arg_RUN_SERIAL OR arg_TIMING)
    _tutorial_run_alone(${chapter}.${test})
  endif()

  # The same run under compute-sanitizer, once per tool, for the `sanitize` suite.
  if(arg_HOST OR arg_FAULT OR arg_NO_SANITIZE OR arg_EXERCISE)
    return()
  endif()
  if(NOT DEFINED CACHE{TUTORIAL_COMPUTE_SANITIZER})
    get_filename_component(cuda_bin "${CMAKE_CUDA_COMPILER}" DIRECTORY)
    find_program(TUTORIAL_COMPUTE_SANITIZER compute-sanitizer HINTS "${cuda_bin}"
                 "${cuda_bin}/../compute-sanitizer")
  endif()
  if(NOT TUTORIAL_COMPUTE_SANITIZER)
    return()
  endif()
  set(tools ${arg_SANITIZE})
  if(NOT tools)
    set(tools memcheck racecheck initcheck synccheck)
  endif()
  _tutorial_sanitizer_tools(default_tools "${arg_PROGRAM}" "${arg_ARGS}" "${arg_SOURCE}")
  foreach(tool IN LISTS tools)
    # Only the test's own process is checked: child processes started by a section exist to
    # demonstrate errors (a wrong copy kind, an illegal address) and would count as failures.
    # Exit code 86 marks "the sanitizer found something", distinct from the program's own codes.
    set(launcher "${TUTORIAL_COMPUTE_SANITIZER}" --tool ${tool} --error-exitcode 86
                 --check-exit-code no --target-processes application-only)
    if(tool STREQUAL "memcheck")
      list(APPEND launcher --leak-check full)
    endif()
    math(EXPR timeout "${arg_TIMEOUT} * 4")
    # The tool's closing line must report a clean run (racecheck words it differently); memcheck
    # may report only the chapter's __managed__ variables as leaks (see tutorial_chapter).
    set(allowed 0)
    if(tool STREQUAL "memcheck" AND TUTORIAL_MANAGED_GLOBALS_${arg_PROGRAM})
      set(allowed ${TUTORIAL_MANAGED_GLOBALS_${arg_PROGRAM}})
    endif()
    # compute-sanitizer reports the __managed__ variables once per CUDA context, and a section
    # may make contexts on several GPUs: the program says how many devices it made one on, and
    # the runner multiplies (run_test.cmake).
    set(allowed_text ${allowed})
    set(allowed_arg ${allowed})
    if(allowed GREATER 0)
      set(allowed_text "@ALLOWED@")
      set(allowed_arg "${allowed}*contexts")
    endif()
    # Timing claims are not judged under the sanitizer (it distorts every timing): where the
    # test expects "CLAIM held:", a sanitized run may print "CLAIM not judged:" instead.
    string(REPLACE "CLAIM held:" "CLAIM (held|not judged):" sanitized_expect "${arg_EXPECT}")
    set(sanitized_environment ${arg_ENVIRONMENT} TUTORIAL_UNDER_SANITIZER=1)
    if(tool STREQUAL "racecheck")
      set(expect ${sanitized_expect} "RACECHECK SUMMARY: 0 hazards displayed")
    else()
      set(expect ${sanitized_expect} "ERROR SUMMARY: ${allowed_text} error")
    endif()
    if(allowed GREATER 0)
      list(APPEND expect "LEAK SUMMARY: [0-9]+ bytes leaked in ${allowed_text} allocation")
    endif()
    set(labels ${chapter} sanitize ${tool} ${arg_LABELS})
    if(NOT tool IN_LIST default_tools)
      # Only in the full sweep: a plain ctest and the default presets leave it out
      # (common/CMakeLists.txt), unless TUTORIAL_SANITIZE_FULL is set.
      list(APPEND labels sanitize_extra)
      set_property(GLOBAL APPEND PROPERTY TUTORIAL_SANITIZE_EXTRA_TESTS ${chapter}.${test}.${tool})
    endif()
    _tutorial_register_test(${chapter}.${test}.${tool} ${arg_PROGRAM} "${launcher}" "${arg_ARGS}"
                            "${expect}" ${arg_EXIT_CODE} ${timeout} "${labels}"
                            "${sanitized_environment}" "${arg_CLAIMS}" ${allowed_arg})
    if(arg_RUN_SERIAL)
      _tutorial_run_alone(${chapter}.${test}.${tool})
    endif()
  endforeach()
endfunction()

option(TUTORIAL_EXERCISE_SOLUTIONS
       "Build each exercise from its reference solution instead of the learner's starter" OFF)

# One exercise: the program ex<NN>_<name> built from the learner's exercises/<name>.cu (or, with
# TUTORIAL_EXERCISE_SOLUTIONS, from exercises/solutions/<name>.cu) and the course's check of it,
# exercises/check/<name>.cu. Its test, <chapter>.exercise.<name>, expects the check's PASS line,
# every EXPECT pattern and every CLAIMS identifier (as tutorial_add_test). Label `exercise`; with the solutions built also `gpu`, and the
# sanitize suite runs them, since a solution must pass everything a section passes.
function(tutorial_exercise chapter name)
  cmake_parse_arguments(PARSE_ARGV 2 arg "RUN_SERIAL" "TIMEOUT" "EXPECT;CLAIMS")
  string(SUBSTRING "${chapter}" 0 2 number)
  set(target ex${number}_${name})
  if(TUTORIAL_EXERCISE_SOLUTIONS)
    set(learner exercises/solutions/${name}.cu)
    set(kind LABELS exercise)
  else()
    set(learner exercises/${name}.cu)
    set(kind EXERCISE)
    # A starter fails until solved: a plain ctest leaves it out (common/CMakeLists.txt).
    set_property(GLOBAL APPEND PROPERTY TUTORIAL_EXERCISE_TESTS ${chapter}.exercise.${name})
  endif()
  add_executable(${target} ${learner} exercises/check/${name}.cu)
  target_link_libraries(${target} PRIVATE tutorial_common)
  tutorial_compile_options(${target})
  if(NOT TARGET exercises)
    add_custom_target(exercises)
  endif()
  add_dependencies(exercises ${target})
  set(options ${kind})
  if(arg_RUN_SERIAL)
    list(APPEND options RUN_SERIAL)
  endif()
  if(arg_TIMEOUT)
    list(APPEND options TIMEOUT ${arg_TIMEOUT})
  endif()
  if(arg_CLAIMS)
    list(APPEND options CLAIMS ${arg_CLAIMS})
  endif()
  tutorial_add_test(${chapter} exercise.${name} PROGRAM ${target} ARGS check ${options}
                    EXPECT "PASS ${target}/check: " ${arg_EXPECT})
endfunction()

# A build test: compiling SOURCE (relative to the chapter) with the chapter's CUDA compiler must
# fail with messages matching every EXPECT pattern, or, without EXPECT, must succeed. For rules the
# compiler enforces, such as "a __constant__ variable cannot be __managed__": the test asserts
# nvcc's exact words. Named <chapter>.<test>, labels `host` and `build` (no GPU needed).
function(tutorial_add_compile_test chapter test)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "SOURCE" "EXPECT")
  if(NOT arg_SOURCE)
    message(FATAL_ERROR "tutorial_add_compile_test(${chapter} ${test}): give the SOURCE")
  endif()
  string(REPLACE ";" "\\;" expect "${arg_EXPECT}")
  add_test(NAME ${chapter}.${test}
           COMMAND "${CMAKE_COMMAND}" "-DCOMPILER=${CMAKE_CUDA_COMPILER}"
                   "-DSOURCE=${CMAKE_CURRENT_SOURCE_DIR}/${arg_SOURCE}"
                   "-DOBJECT=${CMAKE_CURRENT_BINARY_DIR}/${chapter}.${test}.o"
                   "-DEXPECT=${expect}" "-DOUTCOMES=${CMAKE_BINARY_DIR}/Testing/outcomes"
                   -DTEST_NAME=${chapter}.${test} -DSUITE=host "-DROOT=${TUTORIAL_ROOT}"
                   -P "${TUTORIAL_ROOT}/common/cmake/compile_test.cmake")
  set_tests_properties(${chapter}.${test} PROPERTIES LABELS "${chapter};host;build" TIMEOUT 60)
endfunction()

# A test that must run alone (RUN_SERIAL). Under -j, CTest lets the running tests finish before
# each such test starts; a high COST (tests start in descending order of cost, and a cost the
# project sets always wins over CTest's own estimate) makes them all run first, one after the
# other, so the pool drains once instead of before each of them.
function(_tutorial_run_alone name)
  set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE COST 1000)
endfunction()

# The compute-sanitizer tools the default `sanitize` suite runs on a test; the others run only in
# the full sweep (`ctest --preset sanitize-full`, or TUTORIAL_SANITIZE_FULL=1), which
# .ci/gpu-verify runs. The rule, read from the section's file (as _tutorial_times_gpu_work does):
#   memcheck, with leak checking: every test.
#   racecheck and synccheck: they examine shared memory and barriers only, so only where a kernel
#     with them is written: the file declares __shared__ or calls __syncthreads, __syncwarp or
#     cooperative groups. Today that is common/patterns.cu's sum kernel alone, which every caller
#     runs the same way: common_tests.pattern_kernels runs it (SOURCE ../patterns.cu).
#   initcheck: where memory whose contents are undefined until written is mapped, reused or
#     discarded: the file calls cuMemCreate, cuMemMap, cudaMallocAsync, cudaMallocFromPoolAsync,
#     a graph memory node, cuMemImportFromShareableHandle or cudaMemDiscard...
function(_tutorial_sanitizer_tools result program args source)
  set(tools memcheck)
  _tutorial_section_files(files "${program}" "${args}" "${source}")
  foreach(file IN LISTS files)
    if(EXISTS "${file}")
      file(STRINGS "${file}" barrier_lines
           REGEX "__shared__|__syncthreads|__syncwarp|cooperative_groups")
      if(barrier_lines)
        list(APPEND tools racecheck synccheck)
      endif()
      file(STRINGS "${file}" undefined_lines
           REGEX "cuMemCreate|cuMemMap|cudaMallocAsync|cudaMallocFromPoolAsync|MemAllocNode|cuMemImportFromShareableHandle|cudaMemDiscard")
      if(undefined_lines)
        list(APPEND tools initcheck)
      endif()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES tools)
  set(${result} ${tools} PARENT_SCOPE)
endfunction()

# The files a test's section is written in: SOURCE if given; else its lesson <section>.cu or .cpp
# and its checks checks/<section>.cu or .cpp, for the first of its ARGS; or an exercise's check
# for "check".
function(_tutorial_section_files result program args source)
  if(source)
    set(${result} "${CMAKE_CURRENT_SOURCE_DIR}/${source}" PARENT_SCOPE)
    return()
  endif()
  list(GET args 0 section)
  set(files "")
  if(section STREQUAL "check" AND program MATCHES "^ex[0-9][0-9]_(.+)$")
    set(files "${CMAKE_CURRENT_SOURCE_DIR}/exercises/check/${CMAKE_MATCH_1}.cu")
  elseif(NOT section MATCHES "^-")
    set(files "${CMAKE_CURRENT_SOURCE_DIR}/${section}.cu" "${CMAKE_CURRENT_SOURCE_DIR}/${section}.cpp"
              "${CMAKE_CURRENT_SOURCE_DIR}/checks/${section}.cu"
              "${CMAKE_CURRENT_SOURCE_DIR}/checks/${section}.cpp")
  endif()
  set(${result} "${files}" PARENT_SCOPE)
endfunction()

# Whether the section a test runs (the first of its ARGS; "check" for an exercise) times GPU work:
# its file makes a timing claim (at_least, at_most, Evidence::timing) or uses a timer or a busy
# kernel of known duration.
function(_tutorial_times_gpu_work result program args source)
  list(GET args 0 section)
  _tutorial_section_files(files "${program}" "${args}" "${source}")
  foreach(file IN LISTS files)
    if(EXISTS "${file}")
      file(STRINGS "${file}" timing_lines
           REGEX "at_least\\(|at_most\\(|Evidence::timing|Timer|busy|spin")
      if(timing_lines)
        set(${result} TRUE PARENT_SCOPE)
        return()
      endif()
    endif()
  endforeach()
  # A run of several sections (no section named first) may time anything.
  if(section MATCHES "^-")
    set(${result} TRUE PARENT_SCOPE)
  endif()
endfunction()

function(_tutorial_register_test name target launcher args expect exit_code timeout labels environment claims)
  set(allowed_errors 0)
  if(ARGC GREATER 10)
    set(allowed_errors ${ARGV10})
  endif()
  # A GPU test waits for a slot (common/cmake/gpu_slots.cmake), so that ctest -j on a GPU with
  # little free memory runs no more of them at once than have room for their contexts.
  set(gpu_slots "")
  if(NOT "host" IN_LIST labels)
    set(gpu_slots "-DGPU_SLOTS=${CMAKE_BINARY_DIR}/Testing/gpu-slots")
  endif()
  # The suite it belongs to, recorded with its outcome for the summary after the run.
  set(suite gpu)
  foreach(label sanitize host exercise)
    if(label IN_LIST labels)
      set(suite ${label})
      break()
    endif()
  endforeach()
  # Lists travel to the runner script as single -D values: escape their separators.
  foreach(list_var launcher args expect claims)
    string(REPLACE ";" "\\;" ${list_var} "${${list_var}}")
  endforeach()
  add_test(NAME ${name}
           COMMAND "${CMAKE_COMMAND}" "-DPROGRAM=$<TARGET_FILE:${target}>" "-DLAUNCHER=${launcher}"
                   "-DARGS=${args}" "-DEXPECT=${expect}" "-DCLAIMS=${claims}"
                   "-DEXIT_CODE=${exit_code}"
                   "-DALLOWED_ERRORS=${allowed_errors}" "-DOUTCOMES=${CMAKE_BINARY_DIR}/Testing/outcomes"
                   -DTEST_NAME=${name} -DSUITE=${suite} ${gpu_slots}
                   -P "${TUTORIAL_ROOT}/common/cmake/run_test.cmake")
  set_tests_properties(${name} PROPERTIES
    LABELS "${labels}"
    TIMEOUT ${timeout}
    SKIP_REGULAR_EXPRESSION "TUTORIAL_TEST_SKIPPED")
  if(environment)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${environment}")
  endif()
endfunction()

# The `tour` target: builds every chapter and runs each in order, full size, as a live demo.
# Chapters that skip (no GPU) are fine; any other failure fails the target.
# <chapter>.csv_files: runs one section with --quick --csv and reads back every file it wrote
# (common/cmake/check_csv.cmake). Label gpu; Skipped without a GPU, like the section itself.
function(tutorial_add_csv_test chapter section)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/csv_${section}")
  add_test(NAME ${chapter}.csv_files
    COMMAND "${CMAKE_COMMAND}" "-DPROGRAM=$<TARGET_FILE:${chapter}>" "-DARGS=${section};--quick"
            "-DDIR=${dir}" "-DOUTCOMES=${CMAKE_BINARY_DIR}/Testing/outcomes"
            -DTEST_NAME=${chapter}.csv_files -DSUITE=gpu
            -P "${TUTORIAL_ROOT}/common/cmake/check_csv.cmake")
  _tutorial_run_alone(${chapter}.csv_files)
  set_tests_properties(${chapter}.csv_files PROPERTIES LABELS "${chapter};gpu"
    PASS_REGULAR_EXPRESSION "CSV OK" SKIP_REGULAR_EXPRESSION "TUTORIAL_TEST_SKIPPED")
endfunction()

# The course's figures (common/cmake/plots.cmake): `plots` measures on the GPU and draws with
# gnuplot where it is installed; `plots_draw` draws again from the measurements in build/plots/csv,
# which may come from another machine. Whole-course builds only: the figures span four chapters.
function(tutorial_add_plots)
  set(script "${TUTORIAL_ROOT}/common/cmake/plots.cmake")
  add_custom_target(plots
    COMMAND "${CMAKE_COMMAND}" "-DBIN=${CMAKE_RUNTIME_OUTPUT_DIRECTORY}"
            "-DOUT=${CMAKE_BINARY_DIR}/plots" -P "${script}"
    DEPENDS 01_uva 02_pinned 05_prefetch_advise 06_vmm
    USES_TERMINAL
    VERBATIM  # each argument reaches cmake whole, whatever the paths hold (' , spaces)
    COMMENT "Measuring and drawing the course's figures (a few minutes on a GPU)")
  add_custom_target(plots_draw
    COMMAND "${CMAKE_COMMAND}" "-DOUT=${CMAKE_BINARY_DIR}/plots" -DDRAW_ONLY=ON -P "${script}"
    USES_TERMINAL
    VERBATIM  # each argument reaches cmake whole, whatever the paths hold (' , spaces)
    COMMENT "Drawing the course's figures from build/plots/csv")
endfunction()

function(tutorial_add_tour)
  get_property(chapters GLOBAL PROPERTY TUTORIAL_CHAPTERS)
  set(programs "")
  foreach(chapter IN LISTS chapters)
    list(APPEND programs "$<TARGET_FILE:${chapter}>")
  endforeach()
  string(REPLACE ";" "\\;" programs "${programs}")
  add_custom_target(tour
    COMMAND "${CMAKE_COMMAND}" "-DPROGRAMS=${programs}" -P "${TUTORIAL_ROOT}/common/cmake/tour.cmake"
    DEPENDS ${chapters}
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"
    USES_TERMINAL
    VERBATIM  # each argument reaches cmake whole, whatever the paths hold (' , spaces)
    COMMENT "Running every chapter in order")
endfunction()
