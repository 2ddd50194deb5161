# The course's key figures: runs the sections behind them with --csv, turns their tables into
# plain data files, and draws PNGs with gnuplot where it is installed (the course never needs it).
#
#   cmake -DBIN=<build>/bin -DOUT=<build>/plots -P plots.cmake               measure, then draw
#   cmake -DOUT=<build>/plots -DDRAW_ONLY=ON -P plots.cmake                   draw from OUT/csv
#
# DRAW_ONLY needs no GPU: measure on the GPU machine, copy its OUT/csv folder to one with gnuplot.
#
# Figures: host-to-device and device-to-host copy bandwidth against size for each kind of host
# memory (02_pinned bandwidth), page faults against prefetch against cudaMemcpy for managed memory
# at several sizes (05_prefetch_advise fault_vs_prefetch), the cost of growing a buffer by copying
# and with VMM (06_vmm growable), and, with two or more GPUs, the peer bandwidth matrix as a heat
# map (01_uva peer_bandwidth).
cmake_minimum_required(VERSION 3.24)
set(csv "${OUT}/csv")
set(data "${OUT}/data")
set(fault_sizes 16MiB 64MiB 256MiB 1GiB)

# A command as a shell would need it to run it again: each argument that holds anything but
# letters, digits and -_./=+:,% in single quotes (a ' inside written '\'').
function(shell_words out)
  set(words "")
  foreach(arg IN LISTS ARGN)
    if(NOT arg MATCHES "^[A-Za-z0-9_./=+:,%-]+$")
      string(REPLACE "'" "'\\''" arg "${arg}")
      set(arg "'${arg}'")
    endif()
    list(APPEND words "${arg}")
  endforeach()
  string(JOIN " " words ${words})
  set(${out} "${words}" PARENT_SCOPE)
endfunction()

# Runs one program; exit codes 0 and 77 (skipped: no GPU, too few GPUs) are fine.
function(measure)
  shell_words(command ${ARGN})
  message("plots: ${command}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_QUIET)
  if(NOT code EQUAL 0 AND NOT code EQUAL 77)
    message(FATAL_ERROR "plots: `${command}` exited with ${code}; run it alone to see why")
  endif()
endfunction()

# "4 KiB", "1.5 GiB" -> bytes (format_bytes prints at most one decimal).
function(to_bytes text out)
  if(NOT text MATCHES "^([0-9.]+) (B|KiB|MiB|GiB)$")
    message(FATAL_ERROR "plots: not a size: '${text}'")
  endif()
  set(number ${CMAKE_MATCH_1})
  set(factor 1)
  if(CMAKE_MATCH_2 STREQUAL "KiB")
    set(factor 1024)
  elseif(CMAKE_MATCH_2 STREQUAL "MiB")
    set(factor 1048576)
  elseif(CMAKE_MATCH_2 STREQUAL "GiB")
    set(factor 1073741824)
  endif()
  if(number MATCHES "^([0-9]+)\\.([0-9])$")
    math(EXPR bytes "(${CMAKE_MATCH_1} * 10 + ${CMAKE_MATCH_2}) * ${factor} / 10")
  else()
    math(EXPR bytes "${number} * ${factor}")
  endif()
  set(${out} ${bytes} PARENT_SCOPE)
endfunction()

# The data rows of a CSV file written by --csv (its comment and header lines dropped), as a list
# of lines with the cells separated by ";". The cells used here hold no commas.
function(csv_rows file out)
  file(STRINGS "${file}" lines)
  list(FILTER lines EXCLUDE REGEX "^#")
  list(REMOVE_AT lines 0)
  set(rows "")
  foreach(line IN LISTS lines)
    string(REPLACE "," ";" cells "${line}")
    string(REPLACE ";" "|" cells "${cells}")
    list(APPEND rows "${cells}")
  endforeach()
  set(${out} "${rows}" PARENT_SCOPE)
endfunction()

# A row's cells: csv_rows keeps them joined by "|" so that a list of rows stays a list.
macro(cells_of row)
  string(REPLACE "|" ";" cells "${row}")
endmacro()

# 02: one block per direction: bytes, size label, GB/s for each kind of host memory, and the
# pinned rate as a share of the PCIe link ("NaN" where the section could not read the link), from
# which the figure works out the link's limit to draw.
function(bandwidth_data)
  set(text "# bytes label pageable pinned write-combined registered pinned_percent_of_link\n")
  foreach(direction host_to_device device_to_host)
    csv_rows("${csv}/02_pinned_bandwidth_${direction}.csv" rows)
    string(APPEND text "# ${direction}\n")
    foreach(row IN LISTS rows)
      cells_of("${row}")
      list(GET cells 0 size)
      to_bytes("${size}" bytes)
      list(SUBLIST cells 1 4 rates)
      string(REPLACE ";" " " rates "${rates}")
      string(REPLACE " " "" label "${size}")
      set(percent NaN)
      list(LENGTH cells columns)
      if(columns GREATER 6)
        list(GET cells 6 percent)
        string(REPLACE "%" "" percent "${percent}")
      endif()
      string(APPEND text "${bytes} ${label} ${rates} ${percent}\n")
    endforeach()
    string(APPEND text "\n\n")
  endforeach()
  file(WRITE "${data}/bandwidth.dat" "${text}")
endfunction()

# 05: per size, GB/s of (a) faults, (b) prefetch, (c) cudaMemcpy to the GPU, faults and prefetch
# back to the CPU. The GB/s is each row's last cell.
function(fault_data)
  set(text "# bytes label gpu_faults gpu_prefetch gpu_memcpy cpu_faults cpu_prefetch\n")
  foreach(size IN LISTS fault_sizes)
    set(dir "${csv}/fault_${size}")
    if(NOT EXISTS "${dir}/05_prefetch_advise_fault_vs_prefetch_to_gpu.csv")
      continue()  # skipped: no GPU prefetch on this machine
    endif()
    set(rates "")
    foreach(table to_gpu to_cpu)
      file(STRINGS "${dir}/05_prefetch_advise_fault_vs_prefetch_${table}.csv" lines)
      list(FILTER lines EXCLUDE REGEX "^#")
      list(REMOVE_AT lines 0)
      foreach(line IN LISTS lines)
        string(REGEX MATCH "[^,]*$" rate "${line}")
        list(APPEND rates ${rate})
      endforeach()
    endforeach()
    # to_gpu rows: faults, prefetch, resident read, memcpy; to_cpu rows: faults, prefetch, read.
    list(GET rates 0 1 3 4 5 picked)
    string(REPLACE ";" " " picked "${picked}")
    string(REGEX REPLACE "([0-9]+)([KMG]iB)" "\\1 \\2" spaced "${size}")
    to_bytes("${spaced}" bytes)
    string(APPEND text "${bytes} ${size} ${picked}\n")
  endforeach()
  file(WRITE "${data}/fault_vs_prefetch.dat" "${text}")
endfunction()

# 06: bytes, label, ms and peak device memory in use for cudaMalloc+copy and for VMM.
function(grow_data)
  csv_rows("${csv}/06_vmm_growable_grow.csv" rows)
  set(text "# bytes label copy_ms copy_peak_bytes vmm_ms vmm_peak_bytes\n")
  foreach(row IN LISTS rows)
    cells_of("${row}")
    list(GET cells 0 size)
    list(GET cells 1 copy_ms)
    list(GET cells 2 copy_peak)
    list(GET cells 3 vmm_ms)
    list(GET cells 4 vmm_peak)
    to_bytes("${size}" bytes)
    to_bytes("${copy_peak}" copy_peak)
    to_bytes("${vmm_peak}" vmm_peak)
    string(REPLACE " " "" label "${size}")
    string(APPEND text "${bytes} ${label} ${copy_ms} ${copy_peak} ${vmm_ms} ${vmm_peak}\n")
  endforeach()
  file(WRITE "${data}/grow.dat" "${text}")
endfunction()

# 01: the one-way peer matrix as numbers (a row per sending GPU), 0 on the diagonal.
function(peer_data)
  set(file "${csv}/01_uva_peer_bandwidth_one_way_peer.csv")
  file(REMOVE "${data}/peer.dat")
  if(NOT EXISTS "${file}")
    return()  # one GPU: no matrix
  endif()
  csv_rows("${file}" rows)
  set(text "")
  foreach(row IN LISTS rows)
    cells_of("${row}")
    list(REMOVE_AT cells 0)
    set(numbers "")
    foreach(cell IN LISTS cells)
      string(REGEX MATCH "^[0-9.]+" number "${cell}")
      if(number STREQUAL "")
        set(number 0)
      endif()
      list(APPEND numbers ${number})
    endforeach()
    string(REPLACE ";" " " numbers "${numbers}")
    string(APPEND text "${numbers}\n")
  endforeach()
  file(WRITE "${data}/peer.dat" "${text}")
endfunction()

if(NOT DRAW_ONLY)
  file(REMOVE_RECURSE "${csv}")
  file(MAKE_DIRECTORY "${csv}")
  measure("${BIN}/02_pinned" bandwidth --csv "${csv}")
  foreach(size IN LISTS fault_sizes)
    measure("${BIN}/05_prefetch_advise" fault_vs_prefetch --size ${size} --csv "${csv}/fault_${size}")
  endforeach()
  measure("${BIN}/06_vmm" growable --csv "${csv}")
  measure("${BIN}/01_uva" peer_bandwidth --csv "${csv}")
endif()
if(NOT EXISTS "${csv}/02_pinned_bandwidth_host_to_device.csv")
  message("plots: no measurements in ${csv} (no usable GPU?), so there is nothing to draw")
  return()
endif()
file(MAKE_DIRECTORY "${data}")
bandwidth_data()
fault_data()
grow_data()
peer_data()
message("plots: data in ${data}")

find_program(GNUPLOT gnuplot)
if(NOT GNUPLOT)
  message("plots: gnuplot is not installed, so no images were drawn. The measured data is in "
          "${data} and ${csv}.\n"
          "To draw it, install gnuplot (Debian/Ubuntu: apt install gnuplot-nox; Fedora/RHEL: dnf "
          "install gnuplot; macOS: brew install gnuplot), then run:\n"
          "  cmake --build <build folder> --target plots_draw")
  return()
endif()
get_filename_component(scripts "${CMAKE_CURRENT_LIST_DIR}/../plots" ABSOLUTE)
# Paths inside gnuplot's single-quoted strings: a ' is written ''.
string(REPLACE "'" "''" data_in_gnuplot "${data}")
string(REPLACE "'" "''" out_in_gnuplot "${OUT}")
foreach(figure bandwidth fault_vs_prefetch grow peer)
  if(NOT EXISTS "${data}/${figure}.dat")
    continue()
  endif()
  execute_process(
    COMMAND "${GNUPLOT}" -e "data='${data_in_gnuplot}/${figure}.dat'; out='${out_in_gnuplot}/${figure}.png'"
            "${scripts}/${figure}.gp"
    WORKING_DIRECTORY "${scripts}"
    RESULT_VARIABLE code)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "plots: gnuplot failed on ${scripts}/${figure}.gp")
  endif()
  message("plots: drew ${OUT}/${figure}.png")
endforeach()
