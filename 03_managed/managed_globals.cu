// Section `managed_globals`: __device__ __managed__ variables, used by name from host and device.
#include "common/check.hpp"
#include "common/report.hpp"
#include "sections.hpp"

#include <cstdio>

namespace {

__device__ __managed__ int x[2];
__device__ __managed__ int y;
__device__ __managed__ int shown;

__global__ void add() {
    x[1] = x[0] + y;
}

__global__ void show(int* seen) {
    printf("GPU sees: x = %d\n", shown);
    *seen = shown;
}

}  // namespace

tutorial::Result run_managed_globals(tutorial::Context& ctx) {
    std::printf(
        "__device__ __managed__ int x[2], y;  the host sets x[0] = 3 and y = 5, a kernel\n"
        "computes x[1] = x[0] + y:\n");
    x[0] = 3;
    y = 5;
    add<<<1, 1>>>();
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::printf("result = %d (expected 8)\n\n", x[1]);

    std::printf("The host sets a managed variable to 1234; a kernel prints what it sees:\n");
    int* seen = nullptr;
    CUDA_CHECK(cudaMallocManaged(&seen, sizeof *seen));
    *seen = 0;
    shown = 1234;
    show<<<1, 1>>>(seen);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    const int gpu_saw = *seen;
    CUDA_CHECK(cudaFree(seen));

    std::printf(
        "\nA __managed__ variable behaves like memory from cudaMallocManaged, with a symbol\n"
        "instead of a pointer. It needs a CUDA context: touching one on the host before any\n"
        "other CUDA call creates the context of the current device. __constant__ variables\n"
        "cannot be managed: nvcc rejects `__constant__ __managed__ int c;` with \"__managed__\n"
        "variables cannot be marked __shared__ or __constant__\".\n\n");
    ctx.claim(tutorial::observed(
        "host and kernel use a __managed__ variable by name, with no pointer and no copy",
        x[1] == 8,
        tutorial::format("the kernel computed x[1] = %d from the host's x[0] and y", x[1]),
        "the kernel did not run; its launch check says why"));
    ctx.claim(tutorial::observed(
        "a kernel sees what the host stored in a __managed__ variable before the launch",
        gpu_saw == 1234, tutorial::format("the kernel saw %d", gpu_saw),
        "the host's store had not reached the page when the kernel read it"));
    return ctx.verdict(x[1] == 8 && gpu_saw == 1234,
                       tutorial::format("x[1] = %d (expected 8) and the kernel saw x = %d "
                                        "(expected 1234)",
                                        x[1], gpu_saw));
}
