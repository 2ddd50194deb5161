// Section `aplusb`: the same tiny kernel, ret[i] = a + b + i, with the result in three kinds of
// memory: explicit device memory plus a copy, cudaMallocManaged, and a __managed__ global.
#include "common/check.hpp"
#include "common/report.hpp"
#include "sections.hpp"

#include <cstdio>
#include <vector>

namespace {

constexpr int count = 1000;
constexpr int a = 10;
constexpr int b = 100;

// lesson:begin
__global__ void AplusB(int* ret, int a, int b) {
    ret[threadIdx.x] = a + b + threadIdx.x;
}

// 1. Explicit: device memory, and a copy for the host. cudaMemcpy waits for the kernel before it
//    copies (both are in the default stream), so no other wait is needed.
void aplusb_explicit(int* host_copy) {
    int* ret = nullptr;
    CUDA_CHECK(cudaMalloc(&ret, count * sizeof(int)));
    AplusB<<<1, count>>>(ret, a, b);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(host_copy, ret, count * sizeof(int), cudaMemcpyDefault));
    CUDA_CHECK(cudaFree(ret));
}

// 2. cudaMallocManaged: one pointer for both sides. Nothing copies, so nothing waits for the
//    kernel either: the host must synchronize before it reads. The caller reads, then frees.
int* aplusb_managed() {
    int* ret = nullptr;
    CUDA_CHECK(cudaMallocManaged(&ret, count * sizeof(int)));
    AplusB<<<1, count>>>(ret, a, b);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    return ret;
}

// 3. A __managed__ global: the same, without even an allocation. Host and kernel name it.
__device__ __managed__ int ret_global[count];

__global__ void AplusB_global(int a, int b) {
    ret_global[threadIdx.x] = a + b + threadIdx.x;
}

void aplusb_global() {
    AplusB_global<<<1, count>>>(a, b);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

int wrong_values(const int* ret) {
    int wrong = 0;
    for (int i = 0; i < count; ++i) wrong += ret[i] != a + b + i;
    return wrong;
}

}  // namespace

tutorial::Result run_aplusb(tutorial::Context& ctx) {
    std::printf("ret[i] = %d + %d + i for i < %d, one thread per element, three ways.\n\n", a, b,
                count);

    std::vector<int> host_copy(count);
    aplusb_explicit(host_copy.data());
    int* ret_managed = aplusb_managed();
    aplusb_global();

    for (int i = 0; i < 3; ++i) {
        std::printf("%d: A+B = %d   (explicit %d, cudaMallocManaged %d, __managed__ %d)\n", i,
                    a + b + i, host_copy[i], ret_managed[i], ret_global[i]);
    }
    std::printf("...\n\n");

    const int wrong_explicit = wrong_values(host_copy.data());
    const int wrong_managed = wrong_values(ret_managed);
    const int wrong_global = wrong_values(ret_global);
    int disagree = 0;
    for (int i = 0; i < count; ++i) {
        disagree += host_copy[i] != ret_managed[i] || ret_managed[i] != ret_global[i];
    }
    tutorial::Table table({{"version"}, {"memory"}, {"the host waits with"}, {"wrong values"}});
    table.add_row({"explicit", "cudaMalloc + host copy", "cudaMemcpy (it waits for the kernel)",
                   tutorial::format("%d", wrong_explicit)});
    table.add_row({"managed", "cudaMallocManaged", "cudaDeviceSynchronize",
                   tutorial::format("%d", wrong_managed)});
    table.add_row({"global", "__device__ __managed__ int ret[1000]", "cudaDeviceSynchronize",
                   tutorial::format("%d", wrong_global)});
    table.print();
    CUDA_CHECK(cudaFree(ret_managed));
    std::printf(
        "\nWithout the cudaDeviceSynchronize the host could read the managed results before the\n"
        "kernel has written them: a launch returns at once, and managed memory involves no copy\n"
        "that would wait. %d of %d positions differ between the three versions.\n",
        disagree, count);
    ctx.claim(tutorial::documented(
        "once synchronized, the host reads a kernel's results through the managed pointer itself",
        wrong_managed + wrong_global == 0,
        tutorial::format("%d wrong in cudaMallocManaged, %d in __managed__, of %d each",
                         wrong_managed, wrong_global, count),
        "the synchronization is missing, so the host read before the kernel wrote",
        "Programming Guide, N.1.2 Simplifying GPU Programming"));
    ctx.claim(tutorial::documented(
        "managed memory gives the explicit-copy version's results without the copy",
        wrong_explicit == 0 && disagree == 0,
        tutorial::format("%d of %d positions differ between the three versions", disagree, count),
        "one version's kernel did not run; its launch check says why",
        "Programming Guide, N.1.2 Simplifying GPU Programming"));
    return ctx.verdict(wrong_explicit + wrong_managed + wrong_global == 0 && disagree == 0,
                       tutorial::format("all %d values of each version equal a + b + i, and the "
                                        "three versions agree",
                                        count));
}
