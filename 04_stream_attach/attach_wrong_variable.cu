// Section `attach_wrong_variable`: the appendix's second example, where x is attached to the
// kernel's stream but the CPU touches y, which is still visible to every stream; and the rules of
// cudaStreamAttachMemAsync itself.
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/child.hpp"
#include "common/device.hpp"
#include "common/report.hpp"
#include "sections.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// lesson:begin
__device__ __managed__ int x;
__device__ __managed__ int y = 2;

__global__ void kernel() {
    x = 10;
}

// The mistake: x is attached to stream1, but the host then writes y, which is still attached
// globally, while a kernel runs. Where concurrentManagedAccess = 0, that write is a
// segmentation fault.
void write_y_with_x_attached() {
    cudaStream_t stream1 = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream1));
    CUDA_CHECK(cudaStreamAttachMemAsync(stream1, &x));  // length 0, cudaMemAttachSingle
    CUDA_CHECK(cudaDeviceSynchronize());
    tutorial::launch_busy(stream1, 20.0);  // so that the kernel is surely still running
    kernel<<<1, 1, 0, stream1>>>();
    CUDA_CHECK_LAUNCH();
    y = 20;
    CUDA_CHECK(cudaStreamSynchronize(stream1));
    CUDA_CHECK(cudaStreamDestroy(stream1));
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

}  // namespace

// Child role: write_y_with_x_attached.
int child_wrong_variable(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    tutorial::load_kernel(kernel);  // or its first launch may wait for the busy kernel
    std::printf("x attached to stream1; the kernel runs; the host writes y = 20...\n");
    std::fflush(stdout);  // printed even if the write ends the process
    write_y_with_x_attached();
    std::printf("...and survived: x = %d, y = %d\n", x, y);
    return x == 10 && y == 20 ? 0 : 3;
}

// Child role: what cudaStreamAttachMemAsync accepts and refuses. One line per call; exit 0 when
// every call returned what the documentation says.
int child_attach_rules(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    constexpr std::size_t bytes = 1 << 20;
    char* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream));
    // The documentation promises success or "an error"; which error is the runtime's choice.
    struct Case {
        const char* call;
        cudaError_t got;
        bool allowed;
    };
    const Case cases[] = {
        {"Single, the NULL stream", cudaStreamAttachMemAsync(nullptr, data, 0, cudaMemAttachSingle),
         false},
        {"Single, own stream, length 0",
         cudaStreamAttachMemAsync(stream, data, 0, cudaMemAttachSingle), true},
        {"Single, own stream, whole size",
         cudaStreamAttachMemAsync(stream, data, bytes, cudaMemAttachSingle), true},
        {"Single, own stream, half the size",
         cudaStreamAttachMemAsync(stream, data, bytes / 2, cudaMemAttachSingle), false},
        {"Host, the NULL stream", cudaStreamAttachMemAsync(nullptr, data, 0, cudaMemAttachHost),
         true},
        {"Global, own stream", cudaStreamAttachMemAsync(stream, data, 0, cudaMemAttachGlobal),
         true},
    };
    (void)cudaGetLastError();
    int unexpected = 0;
    for (const Case& c : cases) {
        const bool ok = (c.got == cudaSuccess) == c.allowed;
        unexpected += ok ? 0 : 1;
        std::printf("%-36s -> %s (%s)%s\n", c.call, cudaGetErrorName(c.got),
                    c.allowed ? "allowed" : "not allowed", ok ? "" : "  UNEXPECTED");
    }
    // The attach is an operation in the stream: queued behind a running kernel, it is not done
    // until the kernel is.
    tutorial::launch_busy(stream, 20.0);
    CUDA_CHECK(cudaStreamAttachMemAsync(stream, data, 0, cudaMemAttachHost));
    const cudaError_t queued = cudaStreamQuery(stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const cudaError_t done = cudaStreamQuery(stream);
    std::printf(
        "attach queued behind a 20 ms kernel: cudaStreamQuery says %s, after\n"
        "cudaStreamSynchronize %s\n",
        cudaGetErrorName(queued), cudaGetErrorName(done));
    unexpected += queued == cudaErrorNotReady && done == cudaSuccess ? 0 : 1;
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(data));
    return unexpected == 0 ? 0 : 3;
}

tutorial::Result run_attach_wrong_variable(tutorial::Context& ctx) {
    const bool concurrent =
        tutorial::device_attribute(ctx.device, cudaDevAttrConcurrentManagedAccess) == 1;
    const std::vector<std::string> device = {std::to_string(ctx.device)};

    std::printf(
        "1. x attached to the kernel's stream, the CPU writes y (in a child process;\n"
        "   concurrentManagedAccess = %d, so expected: %s):\n",
        concurrent ? 1 : 0, concurrent ? "it works" : "a segmentation fault");
    const tutorial::ChildResult wrong = tutorial::run_child("wrong_variable", device);
    tutorial::print_child_output(wrong);
    std::printf("   The child %s.\n", wrong.describe().c_str());
    const bool part1 = concurrent ? wrong.succeeded() : wrong.crashed();
    std::printf(
        "   Attaching x says nothing about y: y keeps global visibility, so where\n"
        "   concurrentManagedAccess = 0 the system must assume the running kernel may use it\n"
        "   and the CPU may not touch it. %s\n",
        concurrent ? "Here any managed memory may be shared concurrently, so it\n"
                     "   works; the same code crashes on Windows, WSL or Jetson."
                   : "Here that is exactly what happened.");

    ctx.claim(tutorial::observed("with only x attached, the CPU writing y during the kernel is a "
                                 "segmentation fault",
                                 wrong.crashed(), "the child " + wrong.describe(),
                                 "this device lets the CPU touch managed memory during kernels"),
              attach_rule_not_judged(concurrent));

    std::printf("\n2. The rules of cudaStreamAttachMemAsync (in a child process):\n");
    const tutorial::ChildResult rules = tutorial::run_child("attach_rules", device);
    tutorial::print_child_output(rules);
    std::printf("   The child %s.\n", rules.describe().c_str());
    const bool part2 = rules.succeeded();
    // Both rules hold whatever concurrentManagedAccess is, so they are judged on every device.
    const bool answered = rules.output.find("-> ") != std::string::npos;
    const bool refusals_as_documented =
        rules.exited && answered && rules.output.find("UNEXPECTED") == std::string::npos;
    ctx.claim(tutorial::observed(
        "cudaStreamAttachMemAsync refuses Single on the NULL stream and a length that is neither "
        "0 nor the whole allocation, and accepts the other four",
        refusals_as_documented,
        refusals_as_documented ? "all six as the reference says" : "see the UNEXPECTED lines",
        "this driver accepts an attach the reference forbids, or refuses one it allows"));
    const bool ordered = rules.output.find(
                             "cudaStreamQuery says cudaErrorNotReady, after\ncudaStreamSynchronize "
                             "cudaSuccess") != std::string::npos;
    ctx.claim(tutorial::observed(
        "an attach is a stream operation: queued behind a running kernel, it is pending until "
        "the kernel ends",
        ordered,
        ordered ? "cudaErrorNotReady while the kernel ran, cudaSuccess after it"
                : "the stream was not busy with the attach",
        "the attach took effect at once instead of in stream order"));

    return ctx.verdict(part1 && part2 && refusals_as_documented && ordered,
                       tutorial::format("touching y behaved as concurrentManagedAccess = %d "
                                        "predicts, and every attach call returned what the "
                                        "documentation says",
                                        concurrent ? 1 : 0));
}
