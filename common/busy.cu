#include "common/busy.hpp"

#include "common/check.hpp"

namespace {

__global__ void busy_kernel(unsigned long long nanoseconds) {
    const unsigned long long until = tutorial::global_nanoseconds() + nanoseconds;
    while (tutorial::global_nanoseconds() < until) __nanosleep(1000);
}

}  // namespace

namespace tutorial {

void launch_busy(cudaStream_t stream, double milliseconds) {
    busy_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(milliseconds * 1e6));
    CUDA_CHECK_LAUNCH();
}

}  // namespace tutorial
