// Calling the CUDA driver API (cu* functions) without linking against libcuda.
//
// Chapters 06 and 07 use driver calls such as cuMemCreate. Linking them against libcuda.so would
// make the programs impossible to even start on a machine without the NVIDIA driver (the loader
// stops before main), so `--help`, `--list` and the "no device: SKIP" path could not work there.
// Instead we ask the CUDA runtime, which is linked statically and loads the driver only when it is
// first needed, for the address of each driver function:
//
//   const auto cuMemCreate = DRIVER_FUNCTION(cuMemCreate);
//   CU_CHECK(cuMemCreate(&handle, size, &prop, 0));
//
// The local variable has the same name and type as the function declared in <cuda.h>, so the call
// sites read exactly like the driver API documentation. The lookup asks for the function as of the
// headers we compiled against (CUDA_VERSION), or as of the driver where the driver is older (a
// newer toolkit on an older driver, which CUDA's minor-version compatibility allows).
#pragma once

#include <cuda.h>

namespace tutorial {

// The address of driver function `name` (e.g. "cuMemCreate"), or nullptr when the driver or the
// function is missing. `problem`, when given, receives a short explanation on failure.
void* find_driver_function(const char* name, const char** problem = nullptr);

// Like find_driver_function, but a missing function is fatal (one line on stderr, exit 1).
void* require_driver_function(const char* name);

// The name of a driver result, such as "CUDA_ERROR_INVALID_VALUE" ("?" if the driver cannot say).
const char* driver_error_name(CUresult result);

template <typename Function>
Function driver_function(const char* name) {
    return reinterpret_cast<Function>(require_driver_function(name));
}

}  // namespace tutorial

#define DRIVER_FUNCTION(name) ::tutorial::driver_function<decltype(&::name)>(#name)
