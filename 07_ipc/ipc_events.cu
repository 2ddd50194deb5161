// Section ipc_events: a producer/consumer pipeline across processes, ordered by an IPC event.
// Built alone, from the course's folder (mkdir -p build first), then ./build/ipc_events:
//   nvcc -std=c++17 -I. 07_ipc/ipc_events.cu common/standalone.cu -o build/ipc_events
//   (or in 07_ipc/: nvcc -std=c++17 -I.. ipc_events.cu ../common/standalone.cu
//       -o ../build/ipc_events)  (on the same line)
#include "common/busy.hpp"  // launch_busy, and check.hpp's CUDA_CHECK
#include "common/patterns.hpp"
#include "common/process.hpp"
#include <unistd.h>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>
namespace {

// The master produces each batch on its stream and records an interprocess event behind it; the
// consumer, another process, makes its stream wait on that event before it reads, so it never
// reads a batch early.

// Workers: this program started again, a Unix socket as stdin and stdout (common/process.hpp).
using tutorial::Worker, tutorial::read_all, tutorial::send_all, tutorial::start_worker,
    tutorial::wait_for;

// What the master hands the consumer once: a handle for the buffer, one for the event.
struct Shared {
    cudaIpcMemHandle_t memory;
    cudaIpcEventHandle_t event;
    std::size_t count;  // elements of the buffer
};

// Each batch: the master queues it on its stream (every byte of the buffer set to `value`) and
// records the event behind it: the record says "this batch is ready".
void produce(cudaStream_t stream, std::uint32_t* buffer, std::size_t count, int value,
             cudaEvent_t produced) {
    CUDA_CHECK(cudaMemsetAsync(buffer, value, count * sizeof *buffer, stream));
    CUDA_CHECK(cudaEventRecord(produced, stream));
}

// For each batch the consumer's stream waits for the master's last record of the event, then
// reads.
unsigned long long consume(cudaStream_t stream, cudaEvent_t produced, const std::uint32_t* data,
                           std::size_t count, unsigned long long* sum) {
    CUDA_CHECK(cudaMemsetAsync(sum, 0, sizeof *sum, stream));
    CUDA_CHECK(cudaStreamWaitEvent(stream, produced, 0));  // the master's work comes first
    sum_on_device_async(data, count, sum, stream);
    unsigned long long value = 0;
    CUDA_CHECK(cudaMemcpyAsync(&value, sum, sizeof value, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return value;
}

// The consumer process: it opens both handles once, reads once to be ready (its kernel loaded),
// says so, then answers each batch the master announces with the sum it read.
int consumer(int device) {
    CUDA_CHECK(cudaSetDevice(device));
    Shared shared{};
    if (!read_all(STDIN_FILENO, &shared, sizeof shared)) return 4;
    void* data = nullptr;
    cudaEvent_t produced = nullptr;
    CUDA_CHECK(cudaIpcOpenMemHandle(&data, shared.memory, cudaIpcMemLazyEnablePeerAccess));
    CUDA_CHECK(cudaIpcOpenEventHandle(&produced, shared.event));
    const auto* values = static_cast<const std::uint32_t*>(data);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    unsigned long long* sum = nullptr;
    CUDA_CHECK(cudaMalloc(&sum, sizeof *sum));
    consume(stream, produced, values, shared.count, sum);  // nothing recorded yet: no wait
    const char ready = 'R';
    int batch = 0;
    if (send_all(STDOUT_FILENO, &ready, 1)) {
        while (read_all(STDIN_FILENO, &batch, sizeof batch)) {  // until the master closes
            const unsigned long long value = consume(stream, produced, values, shared.count, sum);
            if (!send_all(STDOUT_FILENO, &value, sizeof value)) break;
        }
    }
    CUDA_CHECK(cudaFree(sum));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaEventDestroy(produced));  // an opened event is destroyed like any
    CUDA_CHECK(cudaIpcCloseMemHandle(data));
    return 0;
}

// What the master found: whether the consumer got ready, the sum it read for each batch, and how
// it ended (waitpid's status).
struct Found {
    bool ready = false;
    std::vector<unsigned long long> sums;
    int status = 0;
};

// `self` runs this program again, in the role named after it ("consumer" and the device).
Found walkthrough(std::size_t count, int batches, int device,
                  const std::vector<std::string>& self) {
    Found found;
    // 1. The master's buffer, zero to begin with: what an early read of batch 0 would see.
    std::uint32_t* buffer = nullptr;
    CUDA_CHECK(cudaMalloc(&buffer, count * sizeof *buffer));
    CUDA_CHECK(cudaMemset(buffer, 0, count * sizeof *buffer));
    CUDA_CHECK(cudaDeviceSynchronize());
    // 2. An event other processes can wait on (an interprocess event records no timing), and a
    //    handle for it and one for the buffer.
    cudaEvent_t produced = nullptr;
    CUDA_CHECK(cudaEventCreateWithFlags(&produced, cudaEventInterprocess | cudaEventDisableTiming));
    Shared shared{};
    shared.count = count;
    CUDA_CHECK(cudaIpcGetMemHandle(&shared.memory, buffer));
    CUDA_CHECK(cudaIpcGetEventHandle(&shared.event, produced));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    // 3. The consumer: this program again. It gets both handles and says when it is ready.
    std::vector<std::string> command = self;
    command.insert(command.end(), {"consumer", std::to_string(device)});
    const Worker reader = start_worker(command);
    char ready = 0;
    found.ready =
        send_all(reader.socket, &shared, sizeof shared) && read_all(reader.socket, &ready, 1);
    // 4. Each batch b (every byte b + 1): the master's stream first has 20 ms of other work, so
    //    the batch is late; the master tells the consumer at once, long before the batch exists,
    //    and the consumer's stream waits on the event. The next batch overwrites the buffer only
    //    once the consumer has answered.
    for (int b = 0; b < batches && found.ready; ++b) {
        tutorial::launch_busy(stream, 20.0);
        produce(stream, buffer, count, b + 1, produced);
        unsigned long long sum = 0;
        if (!send_all(reader.socket, &b, sizeof b) || !read_all(reader.socket, &sum, sizeof sum)) {
            break;
        }
        found.sums.push_back(sum);
    }
    // 5. The consumer sees end-of-file and ends; only then does the master destroy the event (an
    //    opened event used after its exporter destroyed it is undefined: the
    //    cudaIpcOpenEventHandle entry) and free the buffer.
    found.status = wait_for(reader);
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaEventDestroy(produced));
    CUDA_CHECK(cudaFree(buffer));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>
// Alone, this program is the master of 3 batches of 4 MiB; the consumer is the same program,
// started as `<program> consumer <device>`.
int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "consumer") return consumer(std::atoi(argv[2]));
    const std::size_t count = std::size_t{1} << 20;
    const Found found = walkthrough(count, 3, 0, {"/proc/self/exe"});
    int right = 0;
    for (std::size_t b = 0; b < found.sums.size(); ++b) {
        const unsigned long long expected = count * ((b + 1) * 0x01010101ull);
        std::printf("batch %zu: the consumer read the sum %llu (batch %zu's is %llu)\n", b,
                    found.sums[b], b, expected);
        right += found.sums[b] == expected;
    }
    return right == 3 ? 0 : 1;
}
#endif
