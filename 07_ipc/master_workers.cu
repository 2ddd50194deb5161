// Section master_workers: the Programming Guide's interprocess communication scenario. A master
// puts a batch on the GPU once; worker processes open its IPC handles and use it in place.
// Built alone, from the course's folder (mkdir -p build first), then ./build/master_workers:
//   nvcc -std=c++17 -I. 07_ipc/master_workers.cu common/standalone.cu -o build/master_workers
//   (or in 07_ipc/: nvcc -std=c++17 -I.. master_workers.cu ../common/standalone.cu
//       -o ../build/master_workers)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/process.hpp"
#include <unistd.h>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>
namespace {

// A worker process: this program started again by start_worker (common/process.hpp), by fork
// and at once exec (a process forked from one that uses CUDA may use CUDA only after an exec:
// chapter 03). Its standard input and output are one end of a Unix socket pair; the master keeps
// the other end. send_all and read_all return false once the other side has gone (a worker that
// died is an answer, not a signal that ends the master).
using tutorial::Worker, tutorial::read_all, tutorial::send_all, tutorial::start_worker,
    tutorial::wait_for;

constexpr std::uint32_t batch_seed = 41;  // the batch: input[i] = pattern(i, batch_seed)

// A worker's task and its answer. A handle is 64 opaque bytes, so any channel that carries bytes
// carries it. The slice travels as an offset, never as a pointer: the same memory has a different
// address in every process.
struct Task {
    cudaIpcMemHandle_t input;
    cudaIpcMemHandle_t result;
    std::size_t offset;  // the worker's slice: `count` elements from element `offset`
    std::size_t count;
};

struct Answer {
    unsigned long long sum;  // of the worker's slice of the input
    void* input;             // where the two buffers appeared in the worker
    void* result;
};

// The worker opens the handles (addresses of its own), uses the master's memory in place (sums
// its slice, writes 2 * x + 1 into the result), finishes with it, and lets go of it.
__global__ void two_x_plus_one(const std::uint32_t* in, std::uint32_t* out, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        out[i] = 2 * in[i] + 1;
    }
}

Answer work_on_slice(const Task& task) {
    Answer answer{};
    CUDA_CHECK(cudaIpcOpenMemHandle(&answer.input, task.input, cudaIpcMemLazyEnablePeerAccess));
    CUDA_CHECK(cudaIpcOpenMemHandle(&answer.result, task.result, cudaIpcMemLazyEnablePeerAccess));
    const auto* in = static_cast<const std::uint32_t*>(answer.input) + task.offset;
    auto* out = static_cast<std::uint32_t*>(answer.result) + task.offset;
    answer.sum = sum_on_device(in, task.count);
    two_x_plus_one<<<512, 256>>>(in, out, task.count);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());  // done with the memory before letting go of it
    CUDA_CHECK(cudaIpcCloseMemHandle(answer.input));
    CUDA_CHECK(cudaIpcCloseMemHandle(answer.result));
    return answer;
}

// A worker process from start to end: on the master's GPU, its task from the master, the work,
// its answer back.
int worker(int device) {
    CUDA_CHECK(cudaSetDevice(device));
    Task task{};
    if (!read_all(STDIN_FILENO, &task, sizeof task)) return 4;  // the master has gone
    const Answer answer = work_on_slice(task);
    return send_all(STDOUT_FILENO, &answer, sizeof answer) ? 0 : 4;
}

// What the master found: each worker's task and answer (answered: it came), how the worker ended
// (waitpid's status), and how many values of its slice of the result are not 2 * x + 1.
struct Found {
    std::vector<Task> tasks;
    std::vector<Answer> answers;
    std::vector<bool> answered;
    std::vector<int> statuses;
    std::vector<std::size_t> wrong;
    void* input = nullptr;  // where the buffers were in the master
    void* result = nullptr;
};

// `self` runs this program again, in the role named after it ("slice_worker" and the device).
Found walkthrough(std::size_t count, int workers, int device,
                  const std::vector<std::string>& self) {
    Found found;
    // 1. The master allocates the batch's two buffers in its device memory...
    std::uint32_t* input = nullptr;
    std::uint32_t* result = nullptr;
    CUDA_CHECK(cudaMalloc(&input, count * sizeof *input));
    CUDA_CHECK(cudaMalloc(&result, count * sizeof *result));
    // 2. ...puts the batch there once and clears the result, and waits for both: nothing orders
    //    another process's kernels after this one's work.
    fill_on_device(input, count, batch_seed);
    CUDA_CHECK(cudaMemset(result, 0, count * sizeof *result));
    CUDA_CHECK(cudaDeviceSynchronize());
    // 3. It makes one IPC handle per buffer, the same for every worker.
    cudaIpcMemHandle_t input_handle{};
    cudaIpcMemHandle_t result_handle{};
    CUDA_CHECK(cudaIpcGetMemHandle(&input_handle, input));
    CUDA_CHECK(cudaIpcGetMemHandle(&result_handle, result));
    // 4. It starts the workers: this program again, as a worker on the same GPU.
    std::vector<std::string> command = self;
    command.insert(command.end(), {"slice_worker", std::to_string(device)});
    std::vector<Worker> started;
    for (int w = 0; w < workers; ++w) started.push_back(start_worker(command));
    // 5. It hands each worker both handles and its slice: whole multiples of 4 elements (the sum
    //    kernel reads 16 bytes at a time), the last worker taking the rest.
    const std::size_t per_worker = count / workers / 4 * 4;
    for (int w = 0; w < workers; ++w) {
        const std::size_t offset = w * per_worker;
        const std::size_t slice = w + 1 == workers ? count - offset : per_worker;
        found.tasks.push_back({input_handle, result_handle, offset, slice});
        send_all(started[w].socket, &found.tasks.back(), sizeof(Task));
    }
    // 6. It waits for each worker's answer, and for the worker to end.
    for (const Worker& each : started) {
        Answer answer{};
        found.answered.push_back(read_all(each.socket, &answer, sizeof answer));
        found.answers.push_back(answer);
        found.statuses.push_back(wait_for(each));
    }
    // 7. It checks each slice of the result, and frees the buffers only now that every worker has
    //    ended: freeing memory that another process still has open is undefined (the
    //    cudaIpcOpenMemHandle entry).
    for (const Task& task : found.tasks) {
        found.wrong.push_back(mismatches_on_device(result + task.offset, task.count, batch_seed,
                                                   {2, 1}, task.offset));
    }
    found.input = input;
    found.result = result;
    CUDA_CHECK(cudaFree(input));
    CUDA_CHECK(cudaFree(result));
    return found;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
#include <cstdio>
// Alone, this program is the master of 2 workers over 16 MiB; each worker is the same program,
// started as `<program> slice_worker <device>`.
int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "slice_worker") return worker(std::atoi(argv[2]));
    const Found found = walkthrough(std::size_t{4} << 20, 2, 0, {"/proc/self/exe"});
    std::printf("master: input at %p, result at %p\n", found.input, found.result);
    std::size_t wrong = 0;
    for (std::size_t w = 0; w < found.tasks.size(); ++w) {
        std::printf("worker %zu: slice %zu + %zu, input at %p, its sum %llu; %zu results wrong\n",
                    w, found.tasks[w].offset, found.tasks[w].count, found.answers[w].input,
                    found.answers[w].sum, found.wrong[w]);
        wrong += found.wrong[w] + (found.answered[w] ? 0 : 1);
    }
    return wrong == 0 ? 0 : 1;
}
#endif
