#include "copy_timing.hpp"

#include "common/check.hpp"
#include "common/timing.hpp"

double time_copy_ms(void* destination, const void* source, std::size_t bytes, int repeats,
                    int warmup, int runs) {
    tutorial::EventTimer timer;
    return tutorial::median_ms(warmup, runs, [&] {
        timer.start();
        for (int r = 0; r < repeats; ++r) {
            CUDA_CHECK(cudaMemcpy(destination, source, bytes, cudaMemcpyDefault));
        }
        timer.stop();
        return timer.elapsed_ms() / repeats;
    });
}
