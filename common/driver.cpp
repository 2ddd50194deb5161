#include "common/driver.hpp"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace tutorial {

void* find_driver_function(const char* name, const char** problem) {
    void* address = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t status =
        cudaGetDriverEntryPointByVersion(name, &address, CUDA_VERSION, cudaEnableDefault, &found);
    if (status != cudaSuccess) {
        if (problem != nullptr) *problem = cudaGetErrorName(status);
        return nullptr;
    }
    if (found != cudaDriverEntryPointSuccess) {
        if (problem != nullptr) {
            *problem = found == cudaDriverEntryPointVersionNotSufficent
                           ? "the installed driver is older than this function"
                           : "no such driver function";
        }
        return nullptr;
    }
    return address;
}

void* require_driver_function(const char* name) {
    const char* problem = "unknown";
    void* address = find_driver_function(name, &problem);
    if (address == nullptr) {
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
