// Section hidden_memory: where do a GPU's first few hundred MiB go before any cudaMalloc? A fresh
// process takes a program's first steps one at a time, and another process, whose own context
// exists already, reads the device's free memory after each. Alone: see the end of the file.
#include "common/busy.hpp"
#include "common/check.hpp"
#include "common/driver.hpp"
#include "common/patterns.hpp"

#include <cstdint>
#include <cstdlib>
#include <functional>

namespace {

// 128 MiB of __device__ storage. nvcc compiles each .cu file into a module of its own (without
// -rdc), and this array is part of this file's module: the driver sets it aside in a context
// when it loads the module there, whether or not a kernel ever touches it.
constexpr std::size_t array_bytes = std::size_t{128} << 20;
__device__ unsigned char module_array[array_bytes];

// A kernel of this file that never touches the array.
__global__ void empty_kernel() {}

// The kernel that does: it writes one byte in every 4 KiB of the array.
__global__ void write_array() {
    const std::size_t i = (blockIdx.x * std::size_t{blockDim.x} + threadIdx.x) * 4096;
    if (i < array_bytes) module_array[i] = 1;
}

// The first call in the process that needs a device.
enum class First { set_device, mem_get_info, malloc_host, host_register, kernel_launch };

// What a fresh process is told to do.
struct Plan {
    const char* loading;  // CUDA_MODULE_LOADING: "LAZY" (the default since CUDA 12.2) or "EAGER"
    First first;          // its first call that needs a device
    int device;           // the device it means to use
    bool kernels;         // after cudaSetDevice: allocate, then launch kernels of two modules
};

// Makes the call plan.first names and returns its name. None of them says which device it
// means: the runtime uses the current device, device 0 unless cudaSetDevice chose another.
const char* first_call(const Plan& plan) {
    switch (plan.first) {
        case First::set_device:
            CUDA_CHECK(cudaSetDevice(plan.device));
            return "cudaSetDevice(device)";
        case First::mem_get_info: {
            std::size_t free = 0, total = 0;
            CUDA_CHECK(cudaMemGetInfo(&free, &total));
            return "cudaMemGetInfo(&free, &total)";
        }
        case First::malloc_host: {
            void* pinned = nullptr;
            CUDA_CHECK(cudaMallocHost(&pinned, 4096));
            CUDA_CHECK(cudaFreeHost(pinned));
            return "cudaMallocHost(&pinned, 4096)";
        }
        case First::host_register: {
            void* page = std::aligned_alloc(4096, 4096);
            CUDA_CHECK(cudaHostRegister(page, 4096, cudaHostRegisterDefault));
            CUDA_CHECK(cudaHostUnregister(page));
            std::free(page);
            return "cudaHostRegister(page, 4096, ...)";
        }
        case First::kernel_launch:
            tutorial::launch_busy(nullptr, 0.0);  // a kernel of common/busy.cu, a tiny module
            CUDA_CHECK(cudaDeviceSynchronize());
            return "a kernel launch (common/busy.cu)";
    }
    return "";
}

// A program's first steps, in a process that has made no CUDA call yet. After each one,
// tell_observer(step) tells whoever watches the device's memory from outside what was just done,
// and returns when it has looked. Returns the module loading mode the driver took.
CUmoduleLoadingMode walkthrough(const Plan& plan,
                                const std::function<void(const char*)>& tell_observer) {
    // 1. How CUDA loads modules is read when CUDA starts in the process: before any CUDA call.
    setenv("CUDA_MODULE_LOADING", plan.loading, 1);

    // 2. A device query: the driver starts, and no context is made. It says which mode it took.
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    const auto cuModuleGetLoadingMode = DRIVER_FUNCTION(cuModuleGetLoadingMode);
    CUmoduleLoadingMode mode{};
    CU_CHECK(cuModuleGetLoadingMode(&mode));
    tell_observer("cudaGetDeviceCount(&count)");

    // 3. The first call that needs a device creates the current device's primary context. With
    //    EAGER loading every module of the program is loaded into it at once, this file's array
    //    included. With LAZY loading a module waits for the first use of one of its kernels or
    //    variables (one with __managed__ variables is loaded at once all the same); this file's
    //    has none, so its array waits too.
    tell_observer(first_call(plan));

    // 4. The device the program meant: cudaSetDevice creates its context, if none exists yet.
    if (plan.first != First::set_device) {
        CUDA_CHECK(cudaSetDevice(plan.device));
        tell_observer("then cudaSetDevice(device)");
    }
    if (!plan.kernels) return mode;

    // 5. Memory the program does ask for, to compare with.
    const std::size_t count_values = (std::size_t{64} << 20) / sizeof(std::uint32_t);
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMalloc(&data, count_values * sizeof(std::uint32_t)));
    tell_observer("cudaMalloc(&data, 64 MiB)");

    // 6. The first launch of a kernel of a small module (common/patterns.cu): lazy loading loads
    //    that module now, and it holds next to nothing.
    fill_on_device(data, count_values, 1);
    tell_observer("first launch of a kernel of common/patterns.cu");

    // 7. The first launch of any kernel of this file: lazy loading loads the whole module now,
    //    its 128 MiB array included, although this kernel never touches it.
    empty_kernel<<<1, 1>>>();
    CUDA_CHECK_LAUNCH_SYNC();
    tell_observer("first launch of a kernel of this file");

    // 8. The kernel that uses the array finds it in place: nothing more is loaded.
    write_array<<<static_cast<unsigned>(array_bytes / 4096 / 256), 256>>>();
    CUDA_CHECK_LAUNCH_SYNC();
    tell_observer("the kernel that writes the array");

    CUDA_CHECK(cudaFree(data));
    return mode;
}

}  // namespace

#ifndef TUTORIAL_CHECKS
// Built alone:
//   nvcc -std=c++17 -I. 02_pinned/hidden_memory.cu common/standalone.cu -o build/hidden_memory
//   (or in 02_pinned/: nvcc -std=c++17 -I.. hidden_memory.cu ../common/standalone.cu
//       -o ../build/hidden_memory)  (on the same line)
//   ./hidden_memory
// runs the walkthrough in three fresh processes (this program again, `observed LAZY 0` and so
// on), LAZY and EAGER with cudaSetDevice first, then LAZY with cudaMemGetInfo first, and prints
// what device 0 lost at each step.
#include "common/process.hpp"

#include <cstdio>
#include <cstring>
#include <string>

// The observed process: says each step on its standard output ("step <name>") and waits for a
// line on its standard input.
int observed_process(const char* loading, bool mem_get_info_first) {
    const Plan plan{loading, mem_get_info_first ? First::mem_get_info : First::set_device, 0,
                    !mem_get_info_first};
    const CUmoduleLoadingMode mode = walkthrough(plan, [](const char* step) {
        std::printf("step %s\n", step);
        std::fflush(stdout);
        char go[8];
        if (std::fgets(go, sizeof go, stdin) == nullptr) std::exit(0);  // the observer is gone
    });
    std::printf("the driver's loading mode: %s\n",
                mode == CU_MODULE_EAGER_LOADING ? "EAGER" : "LAZY");
    return 0;
}

// The observer: starts the observed process as a worker (common/process.hpp: its standard input
// and output a Unix socket to this process), and after each step it names reads device 0's free
// memory with its own context, then says go.
void observe(const char* loading, bool mem_get_info_first) {
    const tutorial::Worker observed = tutorial::start_worker(
        {"/proc/self/exe", "observed", loading, mem_get_info_first ? "1" : "0"});
    std::size_t free_before = 0, free_now = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
    std::printf("CUDA_MODULE_LOADING=%s: what device 0 lost at each step\n", loading);
    std::string line;
    while (tutorial::read_line(observed.socket, &line, 60.0)) {  // a step takes seconds at most
        if (line.rfind("step ", 0) != 0) {
            std::printf("  (%s)\n", line.c_str());
            continue;
        }
        CUDA_CHECK(cudaMemGetInfo(&free_now, &total));
        std::printf("  %-50s %6.0f MiB\n", line.c_str() + 5,
                    (double(free_before) - free_now) / 1048576);
        free_before = free_now;
        if (!tutorial::send_all(observed.socket, "go\n", 3)) break;
    }
    tutorial::wait_for(observed);
}

int main(int argc, char** argv) {
    if (argc == 4 && std::strcmp(argv[1], "observed") == 0)
        return observed_process(argv[2], std::strcmp(argv[3], "1") == 0);
    CUDA_CHECK(cudaSetDevice(0));  // this process's own context, before anything is measured
    observe("LAZY", false);
    observe("EAGER", false);
    observe("LAZY", true);
    return 0;
}
#endif
