// hold_gpu_memory: makes a big GPU look like a small one, to try the course as a learner with an
// 8 GiB card would run it. It allocates all of the device's free memory but LEAVE GiB, says how
// much is left, and holds it until it is killed (the memory goes back when the process ends):
//
//   build/maintainers/hold_gpu_memory 8 &   # leaves 8 GiB free on device 0 (CUDA_VISIBLE_DEVICES picks)
//   ctest --preset gpu; kill %1
//
// Not a lesson: a maintainers' tool (.ci/gpu-verify uses it).
#include <cuda_runtime.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
    const char* usage =
        "usage: hold_gpu_memory GIB_TO_LEAVE_FREE (for example 8 or 2.5)\n"
        "Holds all of device 0's free memory but GIB_TO_LEAVE_FREE until it is killed, so that\n"
        "the course can be tried as on a smaller GPU (CUDA_VISIBLE_DEVICES picks the device).\n";
    if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
        std::printf("%s", usage);
        return 0;
    }
    char* end = nullptr;
    const double leave_gib = argc == 2 ? std::strtod(argv[1], &end) : -1.0;
    if (argc != 2 || end == argv[1] || *end != '\0' || leave_gib < 0.0) {
        std::fprintf(stderr, "%s", usage);
        return 2;
    }
    std::size_t free_bytes = 0, total = 0;
    cudaError_t status = cudaMemGetInfo(&free_bytes, &total);
    if (status != cudaSuccess) {
        // Nothing to hold without a GPU: the course's usual skip, not a failure.
        std::printf("SKIP: hold_gpu_memory: no usable CUDA device (cudaMemGetInfo returned %s)\n",
                    cudaGetErrorName(status));
        return 77;
    }
    const auto leave = static_cast<std::size_t>(leave_gib * (1u << 30));
    // In 1 GiB pieces, then smaller ones, until only `leave` is free: one huge cudaMalloc could
    // fail where pieces fit.
    std::vector<void*> held;
    for (std::size_t piece = std::size_t{1} << 30; piece >= (std::size_t{2} << 20); piece /= 2) {
        while (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes > leave + piece) {
            void* p = nullptr;
            if (cudaMalloc(&p, piece) != cudaSuccess) {
                (void)cudaGetLastError();
                break;
            }
            held.push_back(p);
        }
    }
    (void)cudaMemGetInfo(&free_bytes, &total);
    std::printf("hold_gpu_memory: holding %.1f GiB; %.2f GiB of %.1f GiB free\n",
                (total - free_bytes) / double(1u << 30), free_bytes / double(1u << 30),
                total / double(1u << 30));
    std::fflush(stdout);
    pause();
    return 0;
}
