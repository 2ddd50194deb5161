// Exercise ex07_share (chapter 07_ipc): lend a device buffer to another process.
//
// The owner process has a buffer in device memory and starts a worker process, which is to
// double every value of that buffer in place: no copy, the worker's kernel writes the owner's
// memory. A device pointer means nothing in another process (the `other_process` section of
// chapter 01_uva shows it fail), so the owner exports a handle, the worker opens the handle and
// gets its own address of the same memory, and closes it when done (the `master_workers`
// section of this chapter does this with N workers). Write both sides.
//
// The check (exercises/check/share.cu) fills 64 MiB, calls share() in the owner, hands the handle
// to a fresh worker process, which calls worker(), and passes when
//   - every value in the owner's buffer is then twice what it was,
//   - the worker closed what it opened (its mapping is gone when worker() returns).
// Run it: cmake --build build --target ex07_share && ./build/bin/ex07_share
//    or:  ctest --preset exercise -R 07_ipc
#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

__global__ void double_values(std::uint32_t* data, std::size_t count) {
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        data[i] *= 2;
    }
}

// In the owner process: a handle another process can open. device_buffer is from cudaMalloc.
cudaIpcMemHandle_t share(void* device_buffer) {
    cudaIpcMemHandle_t handle{};
    // TODO 1: cudaIpcGetMemHandle(&handle, device_buffer).
    (void)device_buffer;
    return handle;
}

// In the worker process: double the `count` values of the shared buffer, in place.
void worker(const cudaIpcMemHandle_t& handle, std::size_t count) {
    // TODO 2: open the handle: cudaIpcOpenMemHandle(&pointer, handle,
    //         cudaIpcMemLazyEnablePeerAccess) gives this process's address of the buffer.
    // TODO 3: launch double_values on it, and wait for the kernel (cudaDeviceSynchronize).
    // TODO 4: cudaIpcCloseMemHandle(pointer): a worker that lives on must not keep the mapping.
    (void)handle;
    (void)count;
}
