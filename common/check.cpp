#include "common/check.hpp"

#include "common/device.hpp"
#include "common/driver.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tutorial {

std::string error_line(const char* file, int line, const char* call, cudaError_t error) {
    return std::string(file) + ":" + std::to_string(line) + ": " + call +
           " failed: " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")";
}

std::string error_line(const char* file, int line, const char* call, CUresult error) {
    // The names of driver errors live in the driver itself; if there is no driver to ask, the
    // number is all we can print.
    const char* name = nullptr;
    const char* text = nullptr;
    using NameFunction = decltype(&::cuGetErrorName);
    using TextFunction = decltype(&::cuGetErrorString);
    const auto get_name = reinterpret_cast<NameFunction>(find_driver_function("cuGetErrorName"));
    const auto get_text = reinterpret_cast<TextFunction>(find_driver_function("cuGetErrorString"));
    if (get_name == nullptr || get_name(error, &name) != CUDA_SUCCESS) name = nullptr;
    if (get_text == nullptr || get_text(error, &text) != CUDA_SUCCESS) text = nullptr;
    const std::string what = name != nullptr
                                 ? std::string(name) + " (" + (text != nullptr ? text : "?") + ")"
                                 : "CUresult " + std::to_string(static_cast<int>(error)) +
                                       " (no driver loaded to name it)";
    return std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + what;
}

bool skip_without_device = false;

void skip_if_no_usable_device() {
    if (!skip_without_device) return;
    const std::string why = why_no_usable_device();
    if (why.empty()) return;
    std::fflush(stdout);
    std::printf("SKIP: %s: %s\n", program_invocation_short_name, why.c_str());
    std::exit(77);
}

void fail_cuda_call(const char* file, int line, const char* call, cudaError_t error) {
    skip_if_no_usable_device();
    std::fflush(stdout);  // keep the program's earlier output ahead of the error line
    std::fprintf(stderr, "%s\n", error_line(file, line, call, error).c_str());
    std::exit(1);
}

void fail_cuda_call(const char* file, int line, const char* call, CUresult error) {
    skip_if_no_usable_device();
    std::fflush(stdout);
    std::fprintf(stderr, "%s\n", error_line(file, line, call, error).c_str());
    std::exit(1);
}

}  // namespace tutorial
