// Exercise ex05_predict (chapter 05_prefetch_advise): predict what the driver moves.
//
// Managed memory moves by itself, and the driver counts every byte it moves and every page fault.
// Before you run anything, predict what each of these steps does to 64 MiB of managed memory. They
// run one after the other, on the same buffer:
//   1. the CPU writes every value (the buffer's first touch)
//   2. a kernel reads every value
//   3. the same kernel again
//   4. cudaMemPrefetchAsync of the whole buffer to the CPU, then to the GPU, then the kernel
// For each step, fill in below how many MiB cross from host to device, and whether the GPU takes
// page faults. Reason it out from where the pages are before the step.
//
// The check (exercises/check/predict.cu) runs the steps with the driver's Unified Memory counters
// on (read through CUPTI) and passes when every prediction matches the count: the MiB within 8 of
// it, the faults "some" where the GPU faulted at all and "none" where it did not. It shows the
// counts once every prediction is right. Where the counters cannot be read (no CUPTI, or under
// compute-sanitizer) it runs the steps and says SKIP: your predictions are not judged there.
// Run it: cmake --build build --target ex05_predict && ./build/bin/ex05_predict
//    or:  ctest --preset exercise -R 05_prefetch_advise
enum GpuFaults {
    none = 0,  // the GPU takes no page fault in the step
    some = 1,  // it takes one or more
};

// TODO 1: replace each -1 with the MiB you predict cross from host to device in that step.
extern const double predicted_mib_host_to_device[4] = {
    -1,  // 1. the CPU writes every value
    -1,  // 2. a kernel reads every value
    -1,  // 3. the same kernel again
    -1,  // 4. prefetch to the CPU, prefetch to the GPU, then the kernel
};

// TODO 2: replace each -1 with `none` or `some`: the GPU page faults you predict in that step.
extern const int predicted_gpu_faults[4] = {
    -1,  // 1. the CPU writes every value
    -1,  // 2. a kernel reads every value
    -1,  // 3. the same kernel again
    -1,  // 4. prefetch to the CPU, prefetch to the GPU, then the kernel
};
