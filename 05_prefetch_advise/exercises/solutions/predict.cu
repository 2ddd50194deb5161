// Exercise ex05_predict (chapter 05_prefetch_advise), the course's solution: what each step moves
// host to device, and whether the GPU faults. The task is in ../predict.cu.
enum GpuFaults {
    none = 0,  // the GPU takes no page fault in the step
    some = 1,  // it takes one or more
};

extern const double predicted_mib_host_to_device[4] = {
    0,   // 1. the CPU's first touch makes the pages in host memory: nothing crosses
    64,  // 2. the kernel needs every page on the GPU: all 64 MiB cross, as it faults on them
    0,   // 3. the pages are on the GPU since step 2: nothing left to move
    64,  // 4. the prefetch to the CPU takes them home; the one to the GPU brings all 64 MiB back
};

extern const int predicted_gpu_faults[4] = {
    none,  // 1. the GPU takes no part
    some,  // 2. each page the kernel touches first is missing on the GPU: it faults
    none,  // 3. every page is there, and mapped
    none,  // 4. the prefetch moved every page before the kernel started
};
