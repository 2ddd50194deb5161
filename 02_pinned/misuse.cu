// Section `misuse` (fault demo): freeing memory with the wrong call, pinning twice, and a kernel
// writing to memory registered read-only. Each runs in a child process, because some of these
// kill the process or its CUDA context.
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

constexpr std::size_t demo_bytes = 1 << 20;

struct Misuse {
    const char* call;
    cudaError_t got;
    cudaError_t expected;  // the error the call's Runtime API reference entry gives for it
};

// lesson:begin
// Each way of getting memory has its own way of giving it back: cudaMalloc / cudaFree,
// cudaMallocHost / cudaFreeHost, cudaHostRegister / cudaHostUnregister (then free), malloc /
// free. Each call below pairs memory with the wrong one: it returns an error and changes nothing.
std::vector<Misuse> mismatched_calls(void* pinned, void* device, void* registered, void* plain) {
    return {
        {"cudaFree(pinned)", cudaFree(pinned), cudaErrorInvalidValue},
        {"cudaFreeHost(device)", cudaFreeHost(device), cudaErrorInvalidValue},
        {"cudaFreeHost(malloc'd)", cudaFreeHost(plain), cudaErrorInvalidValue},
        {"cudaHostRegister(pinned)", cudaHostRegister(pinned, demo_bytes, 0),
         cudaErrorInvalidValue},
        {"cudaHostRegister(registered) again", cudaHostRegister(registered, demo_bytes, 0),
         cudaErrorHostMemoryAlreadyRegistered},
        {"cudaHostUnregister(malloc'd)", cudaHostUnregister(plain),
         cudaErrorHostMemoryNotRegistered},
    };
}
// lesson:end

// ---- Checking and reporting: everything below uses the lesson above. ----

__global__ void write_ones(int* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] = 1;
    }
}

}  // namespace

// Child role: mismatched_calls on one allocation of each kind; one line per call, exit 0 when
// every call was refused. Each call's Runtime API reference entry says it returns an error for
// memory it does not own; which error is exact only where the entry names one (cudaFree and
// cudaFreeHost list cudaErrorInvalidValue alone; cudaHostRegister and cudaHostUnregister name
// AlreadyRegistered and NotRegistered). For cudaHostRegister on cudaMallocHost memory it names
// none, so another error than the one expected is shown, not counted against the call.
int child_mismatched_calls(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    void* pinned = nullptr;
    void* device = nullptr;
    void* registered = std::malloc(demo_bytes);
    void* plain = std::malloc(demo_bytes);
    CUDA_CHECK(cudaMallocHost(&pinned, demo_bytes));
    CUDA_CHECK(cudaMalloc(&device, demo_bytes));
    CUDA_CHECK(cudaHostRegister(registered, demo_bytes, cudaHostRegisterDefault));
    const std::vector<Misuse> cases = mismatched_calls(pinned, device, registered, plain);
    (void)cudaGetLastError();  // the failed calls above also left their error as the last one
    int accepted = 0;
    for (const Misuse& c : cases) {
        const bool refused = c.got != cudaSuccess;
        accepted += refused ? 0 : 1;
        std::printf("%-36s -> %s%s%s\n", c.call, cudaGetErrorName(c.got),
                    refused ? "" : "  (ACCEPTED: the call should have refused it)",
                    refused && c.got != c.expected ? "  (another error than expected)" : "");
    }
    // The mismatched calls freed nothing, so the right ones still work.
    CUDA_CHECK(cudaHostUnregister(registered));
    CUDA_CHECK(cudaFreeHost(pinned));
    CUDA_CHECK(cudaFree(device));
    std::free(registered);
    std::free(plain);
    return accepted == 0 ? 0 : 3;
}

// Child role: hands pinned memory to free(). That is undefined behaviour: the C library looks for
// its own bookkeeping in front of the pointer and may abort, crash, or quietly damage its heap.
int child_free_pinned(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    void* pinned = nullptr;
    CUDA_CHECK(cudaMallocHost(&pinned, demo_bytes));
    std::printf("calling free() on memory from cudaMallocHost...\n");
    std::free(pinned);
    std::printf("free() returned\n");
    return 0;
}

// Child role: a kernel writes to memory registered with cudaHostRegisterReadOnly. The device
// mapped those pages read-only, so the write faults; CUDA_CHECK_LAUNCH_SYNC reports it and exits 1.
int child_write_read_only(const std::vector<std::string>& args) {
    CUDA_CHECK(cudaSetDevice(std::atoi(args.at(0).c_str())));
    int* host = static_cast<int*>(std::calloc(demo_bytes, 1));
    CUDA_CHECK(cudaHostRegister(host, demo_bytes, cudaHostRegisterReadOnly));
    int* device_view = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&device_view, host, 0));
    std::printf("a kernel writes to memory registered with cudaHostRegisterReadOnly...\n");
    write_ones<<<64, 256>>>(device_view, demo_bytes / sizeof(int));
    CUDA_CHECK_LAUNCH_SYNC();
    std::printf("the kernel finished; host[0] = %d\n", host[0]);
    return 0;
}

namespace {

// ": cudaErrorX" for the first CUDA error named in a child's output, or "".
std::string first_error(const std::string& output) {
    const std::size_t at = output.find("cudaError");
    if (at == std::string::npos) return "";
    const std::size_t end =
        output.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", at);
    return ": " + output.substr(at, end - at);
}

}  // namespace

tutorial::Result run_misuse(tutorial::Context& ctx) {
    const std::vector<std::string> device = {std::to_string(ctx.device)};

    std::printf("1. Memory paired with the wrong free or pin call (in a child process):\n");
    const tutorial::ChildResult calls = tutorial::run_child("mismatched_calls", device);
    tutorial::print_child_output(calls);
    std::printf("   The child %s.\n", calls.describe().c_str());

    std::printf("\n2. free() on pinned memory (in a child process):\n");
    const tutorial::ChildResult freed = tutorial::run_child("free_pinned", device);
    tutorial::print_child_output(freed);
    std::printf("   The child %s (observed with this C library and %s).\n",
                freed.describe().c_str(), tutorial::this_driver().c_str());

    std::printf("\n3. A kernel writing to read-only registered memory (in a child process):\n");
    const bool read_only_supported =
        tutorial::device_attribute(ctx.device, cudaDevAttrHostRegisterReadOnlySupported) == 1;
    tutorial::ChildResult wrote;
    if (!read_only_supported) {
        std::printf("   Not tried: hostRegisterReadOnlySupported is 0 on this device.\n");
    } else {
        wrote = tutorial::run_child("write_read_only", device);
        tutorial::print_child_output(wrote);
        std::printf("   The child %s.\n", wrote.describe().c_str());
    }

    std::printf(
        "\nThe CUDA calls check what they are given and refuse memory they did not allocate.\n"
        "free() and delete[] cannot: handing them pinned memory is undefined behaviour, which\n"
        "may abort, crash or silently damage the heap. What the child above did is one outcome,\n"
        "not a promise, so it is reported and not judged. A write to memory registered\n"
        "read-only is an error on the device, which ends the CUDA context for good.\n\n");
    const bool refused = calls.succeeded();
    // Any CUDA error counts: the reference says the device treats the memory as read-only, not
    // which error a write raises (driver 580 reports cudaErrorIllegalAddress).
    const bool faulted =
        read_only_supported && wrote.exited && wrote.exit_code != 0 && !wrote.timed_out;
    ctx.claim(tutorial::observed(
        "CUDA's free and pin calls refuse memory they did not allocate, and change nothing",
        refused, "the child " + calls.describe(),
        "a call accepted the wrong memory; see its line"));
    ctx.claim(tutorial::observed(
                  "a kernel writing read-only registered memory fails with a CUDA error", faulted,
                  read_only_supported ? "the child " + wrote.describe() + first_error(wrote.output)
                                      : std::string("not tried"),
                  "the device mapped the pages writable after all"),
              read_only_supported ? "" : "hostRegisterReadOnlySupported is 0 on this device");
    return ctx.verdict(refused && (faulted || !read_only_supported),
                       "each misuse failed in the way the claims above say");
}
