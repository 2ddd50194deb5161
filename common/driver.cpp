#include "common/driver.hpp"

#include "common/check.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace tutorial {

namespace {

// The version to ask for: the headers' (CUDA_VERSION), or the driver's where the driver is
// older. A toolkit newer than the driver is the common case (CUDA 13.x from pip on a 13.0
// driver): asking a 13.0 driver for a function "as of 13.5" finds nothing at all, while asking
// for it as of 13.0 finds the form the driver has, which for every function the course calls is
// the form these headers declare.
int version_to_ask_for() {
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess || driver <= 0) return CUDA_VERSION;
    return driver < CUDA_VERSION ? driver : CUDA_VERSION;
}

}  // namespace

void* find_driver_function(const char* name, const char** problem) {
    void* address = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    static const int version = version_to_ask_for();
    const cudaError_t status =
        cudaGetDriverEntryPointByVersion(name, &address, version, cudaEnableDefault, &found);
    if (status != cudaSuccess) {
        if (problem != nullptr) *problem = cudaGetErrorName(status);
        return nullptr;
    }
    if (found != cudaDriverEntryPointSuccess) {
        if (problem != nullptr) {
            *problem = found == cudaDriverEntryPointVersionNotSufficent
                           ? "the installed driver is older than this function: update the "
                             "NVIDIA driver to one for this toolkit's CUDA version or newer"
                           : "no such driver function in the installed driver";
        }
        return nullptr;
    }
    return address;
}

void* require_driver_function(const char* name) {
    const char* problem = "unknown";
    void* address = find_driver_function(name, &problem);
    if (address == nullptr) {
        skip_if_no_usable_device();
        std::fflush(stdout);
        std::fprintf(stderr, "cannot find driver function %s: %s\n", name, problem);
        std::exit(1);
    }
    return address;
}

const char* driver_error_name(CUresult result) {
    static const auto cuGetErrorName = DRIVER_FUNCTION(cuGetErrorName);
    const char* name = nullptr;
    return cuGetErrorName(result, &name) == CUDA_SUCCESS ? name : "?";
}

}  // namespace tutorial
