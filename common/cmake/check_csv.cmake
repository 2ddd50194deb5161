# Checks the CSV files that --csv wrote: runs PROGRAM with ARGS and --csv into a fresh DIR, then
# reads every file back. Each must start with the "# " comment line (device, driver, date,
# command), then a header, then rows with as many cells as the header (RFC 4180 quoting).
#
#   cmake -DPROGRAM=<exe> -DARGS="bandwidth;--quick" -DDIR=<folder> -P check_csv.cmake
#   cmake -DDIR=<folder> -P check_csv.cmake        only check the files already in DIR
include("${CMAKE_CURRENT_LIST_DIR}/outcome.cmake")
if(PROGRAM)
  file(REMOVE_RECURSE "${DIR}")
  execute_process(COMMAND "${PROGRAM}" ${ARGS} --csv "${DIR}" INPUT_FILE /dev/null
                  RESULT_VARIABLE code OUTPUT_QUIET)
  if(code EQUAL 77)
    message("TUTORIAL_TEST_SKIPPED: the program exited with 77 (skipped)")
    tutorial_record_outcome(skipped)
    return()
  elseif(NOT code EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} exited with ${code}")
  endif()
endif()

# The number of cells in one CSV record; quoted cells may hold commas, quotes and line breaks.
function(count_cells record out)
  string(REGEX REPLACE "\"([^\"]|\"\")*\"" "x" plain "${record}")
  string(REGEX MATCHALL "," commas "${plain}")
  list(LENGTH commas n)
  math(EXPR n "${n} + 1")
  set(${out} ${n} PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE files "${DIR}/*.csv")
list(LENGTH files count)
if(count EQUAL 0)
  message(FATAL_ERROR "no CSV file in ${DIR}")
endif()
set(rows_total 0)
foreach(file IN LISTS files)
  file(READ "${file}" text)
  if(NOT text MATCHES "^# device [0-9]+ [^\n]*; driver [^\n]*; [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[^\n]*; command: [^\n]*--csv")
    message(FATAL_ERROR "${file}: the first line is not the expected comment")
  endif()
  string(FIND "${text}" "\n" end_of_comment)  # (REGEX REPLACE "^..." would strip every line)
  math(EXPR start "${end_of_comment} + 1")
  string(SUBSTRING "${text}" ${start} -1 body)
  # Quoted cells first become one character, so that the rest can be split on line breaks.
  string(REGEX REPLACE "\"([^\"]|\"\")*\"" "Q" body "${body}")
  string(REGEX REPLACE "\n$" "" body "${body}")
  string(REPLACE ";" "_" body "${body}")  # a ";" in a cell would split the CMake list
  string(REPLACE "\n" ";" records "${body}")
  list(GET records 0 header)
  count_cells("${header}" width)
  foreach(record IN LISTS records)
    count_cells("${record}" cells)
    if(NOT cells EQUAL width)
      message(FATAL_ERROR "${file}: a row of ${cells} cells under a header of ${width}: ${record}")
    endif()
    math(EXPR rows_total "${rows_total} + 1")
  endforeach()
endforeach()
message("CSV OK: ${count} files, ${rows_total} lines (headers and rows), every row as wide as its header")
tutorial_record_outcome(passed)
