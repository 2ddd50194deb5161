# Runs before every ctest run in a build tree (CTEST_CUSTOM_PRE_TEST, see common/CMakeLists.txt):
# how many GPU tests may run at once. Each test process holds a CUDA context of its own (about
# 0.5 to 0.8 GiB) plus its data, so `ctest -j 8` on a GPU with 3 GiB free would fail contexts with
# cudaErrorMemoryAllocation. One slot per 2 GiB free on the GPU with the least free memory (at
# least 1); run_test.cmake takes a slot (a lock file) before it starts a GPU test. Without
# nvidia-smi nothing is limited.
#
#   cmake -DSLOTS=<file> -P gpu_slots.cmake
execute_process(COMMAND nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits
                OUTPUT_VARIABLE free_mib RESULT_VARIABLE status ERROR_QUIET)
set(slots 0)  # 0: no limit
if(status EQUAL 0)
  string(REGEX MATCHALL "[0-9]+" free_mib "${free_mib}")
  set(least "")
  foreach(mib IN LISTS free_mib)
    if(least STREQUAL "" OR mib LESS least)
      set(least ${mib})
    endif()
  endforeach()
  if(NOT least STREQUAL "")
    math(EXPR slots "${least} / 2048")
    if(slots LESS 1)
      set(slots 1)
    endif()
  endif()
endif()
file(WRITE "${SLOTS}" "${slots}")
