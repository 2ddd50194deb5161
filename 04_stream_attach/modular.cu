// Section modular: why cudaMallocManaged has a cudaMemAttachHost flag (the Unified Memory
// appendix, N.2.2.6): a component fills a new managed allocation while another thread's kernel
// runs; then its stream goes away and the memory is handed on. Alone (mkdir -p build first):
//   nvcc -std=c++17 -I. 04_stream_attach/modular.cu common/standalone.cu -o build/modular
//   (or in 04_stream_attach/: nvcc -std=c++17 -I.. modular.cu ../common/standalone.cu
//       -o ../build/modular)  (on the same line)
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/step.hpp"

#include <cstdio>
#include <optional>
#include <thread>
namespace {

constexpr int count = 1 << 16;

// A component's data: allocated and initialised by the CPU in the constructor, before any
// stream exists to attach it to. `flags` is what the component passes to cudaMallocManaged.
class Table {
public:
    explicit Table(unsigned flags) {
        CUDA_CHECK(cudaMallocManaged(&values_, count * sizeof(int), flags));
        for (int i = 0; i < count; ++i) values_[i] = i;  // CPU writes a brand-new allocation
    }
    ~Table() { CUDA_CHECK(cudaFree(values_)); }
    Table(const Table&) = delete;
    Table& operator=(const Table&) = delete;
    int* values() const { return values_; }

private:
    int* values_ = nullptr;
};

__global__ void sum(const int* values, int n, long long* result) {
    long long local = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        local += values[i];
    }
    atomicAdd(reinterpret_cast<unsigned long long*>(result),
              static_cast<unsigned long long>(local));
}

// Sums the table with a kernel in `stream` and returns the result (synchronizes the stream).
long long sum_on_device(const Table& table, cudaStream_t stream) {
    long long* result = nullptr;
    CUDA_CHECK(cudaMallocManaged(&result, sizeof *result, cudaMemAttachHost));
    CUDA_CHECK(cudaStreamAttachMemAsync(stream, result));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    *result = 0;
    sum<<<32, 256, 0, stream>>>(table.values(), count, result);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const long long value = *result;
    CUDA_CHECK(cudaFree(result));
    return value;
}

// The walkthrough's steps, watched wherever steps are: the constructor's writes, with the flag
// (the walkthrough) or without it (cudaMemAttachGlobal, the other way to call the component).
constexpr tutorial::Step fill_host_table{"the constructor fills a host-attached Table"};
constexpr tutorial::Step fill_global_table{"the constructor fills a global Table"};

// A component thread builds a Table with `flags` (cudaMemAttachHost, or the default,
// cudaMemAttachGlobal) while a kernel of another thread runs, then attaches the Table to a stream
// of its own and sums it there. Returns the sum.
long long build_during_foreign_kernel(int device, unsigned flags) {
    cudaStream_t other = nullptr;  // "another thread's" stream: busy for 200 ms
    CUDA_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    tutorial::launch_busy(other, 200.0);
    long long total = 0;
    std::thread component([&] {
        CUDA_CHECK(cudaSetDevice(device));  // a new thread starts on device 0
        // The Table is made in the step, while the other stream's kernel runs, and used after it.
        std::optional<Table> table;
        {
            const tutorial::During during(
                flags == cudaMemAttachHost ? fill_host_table : fill_global_table, other);
            table.emplace(flags);
        }
        cudaStream_t mine = nullptr;
        CUDA_CHECK(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
        CUDA_CHECK(cudaStreamAttachMemAsync(mine, table->values()));
        total = sum_on_device(*table, mine);
        CUDA_CHECK(cudaStreamDestroy(mine));
    });
    component.join();
    CUDA_CHECK(cudaStreamSynchronize(other));
    CUDA_CHECK(cudaStreamDestroy(other));
    return total;
}

// Handing the memory on: the owning stream is destroyed (the allocation goes back to the
// visibility it was allocated with, Host), and a re-attach with cudaMemAttachGlobal lets a kernel
// in any stream use it. Returns what a kernel in a third stream summed.
long long hand_on() {
    Table table(cudaMemAttachHost);
    cudaStream_t owner = nullptr;
    CUDA_CHECK(cudaStreamCreate(&owner));
    CUDA_CHECK(cudaStreamAttachMemAsync(owner, table.values()));
    CUDA_CHECK(cudaStreamSynchronize(owner));
    CUDA_CHECK(cudaStreamDestroy(owner));  // association removed, back to the default
    cudaStream_t anyone = nullptr;
    CUDA_CHECK(cudaStreamCreate(&anyone));
    CUDA_CHECK(cudaStreamAttachMemAsync(anyone, table.values(), 0, cudaMemAttachGlobal));
    CUDA_CHECK(cudaStreamSynchronize(anyone));
    cudaStream_t reader = nullptr;
    CUDA_CHECK(cudaStreamCreate(&reader));
    const long long seen = sum_on_device(table, reader);
    CUDA_CHECK(cudaStreamDestroy(reader));
    CUDA_CHECK(cudaStreamDestroy(anyone));
    return seen;
}

// What the walkthrough found: what each kernel summed.
struct Found {
    long long built, handed_on;
};

Found walkthrough(int device) {
    Found found{0, 0};
    // 1. With cudaMemAttachHost the new allocation is the component's own until it attaches it,
    //    whatever other threads' kernels are doing. (Without the flag, cudaMemAttachGlobal, it
    //    would count as in use by the running kernel: where concurrentManagedAccess = 0, what the
    //    constructor's writes then do is unspecified, they may or may not fault: the Guide,
    //    N.2.2.1.)
    found.built = build_during_foreign_kernel(device, cudaMemAttachHost);
    // 2. The owning stream goes away; a re-attach with cudaMemAttachGlobal hands the data on.
    found.handed_on = hand_on();
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    const Found found = walkthrough(0);
    times.print();
    const long long expected = static_cast<long long>(count) * (count - 1) / 2;
    std::printf("sums (expected %lld): built during another kernel %lld, handed on %lld\n",
                expected, found.built, found.handed_on);
    // The card's answer, as found here: the sum of the Table built with the flag. The same
    // without it runs in a child, where it may fault: ./build/bin/04_stream_attach modular.
    std::printf("%lld, %s, with cudaMemAttachHost\n", found.built,
                found.built == expected ? "the right sum" : "a WRONG sum");
    return found.built == expected && found.handed_on == expected ? 0 : 1;
}
#endif
