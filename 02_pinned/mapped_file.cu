// Section mapped_file: a file mapped into memory, as servers map model weights, then pinned.
// Built alone, from the course's folder (mkdir -p build first), then ./build/mapped_file:
//   nvcc -std=c++17 -I. 02_pinned/mapped_file.cu common/standalone.cu -o build/mapped_file
//   (or in 02_pinned/: nvcc -std=c++17 -I.. mapped_file.cu ../common/standalone.cu
//       -o ../build/mapped_file)  (on the same line)
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/step.hpp"

#include <sys/mman.h>
#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr std::uint32_t file_seed = 23;  // what the file holds: pattern(i, 23)

// The walkthrough's steps: phases of the story, each one timed wherever steps are watched.
constexpr tutorial::Step read_file{"reading the file into malloc memory"};
constexpr tutorial::Step upload_unpinned{"upload from the mapping, unpinned"};
constexpr tutorial::Step pin_mapping{"pinning the read-only mapping (cudaHostRegister)"};
constexpr tutorial::Step upload_pinned{"upload from the mapping, pinned"};

// Which mappings of a file cudaHostRegister pins, with which flags; what each way of loading it
// costs. What the walkthrough found:
struct Found {
    bool file_made = false;                        // false: $TMPDIR had no room for the file
    int read_only_supported = 0;                   // cudaDevAttrHostRegisterReadOnlySupported
    cudaError_t read_only = cudaErrorUnknown;      // the shared read-only mapping, ReadOnly flag
    cudaError_t default_flags = cudaErrorUnknown;  // the same mapping, default flags
    cudaError_t private_copy = cudaErrorUnknown;   // a private writable mapping, default flags
    std::size_t wrong_read = 0;                    // values read wrong from the file (read())
    std::size_t wrong_unpinned = 0;  // values uploaded wrong from the unpinned mapping
    std::size_t wrong_pinned = 0;    // values uploaded wrong once pinned
    std::size_t wrong_kernel = 0;    // values a kernel read wrong through the device pointer
    std::size_t wrong_private = 0;   // values uploaded wrong from the private mapping
};

void system_call(bool ok, const char* what);
bool whole(int fd, void* data, std::size_t bytes, bool write);
int make_file(std::size_t bytes);
void* map_file(int fd, std::size_t bytes, int protection, int flags);
std::size_t upload_and_check(std::uint32_t* device, const void* host, std::size_t bytes,
                             const tutorial::Step& step);

Found walkthrough(std::size_t bytes, int device) {
    Found found;
    const std::size_t count = bytes / sizeof(std::uint32_t);
    std::uint32_t* on_device = nullptr;
    CUDA_CHECK(cudaMalloc(&on_device, bytes));
    CUDA_CHECK(cudaDeviceGetAttribute(&found.read_only_supported,
                                      cudaDevAttrHostRegisterReadOnlySupported, device));
    // 1. The "weights": a file of known values, written once and then only read.
    const int fd = make_file(bytes);
    found.file_made = fd >= 0;
    if (!found.file_made) {
        CUDA_CHECK(cudaFree(on_device));
        return found;
    }

    // 2. The way a program without a mapping loads them: read() into memory of its own.
    std::vector<std::uint32_t> copy(count);
    {
        const tutorial::During during(read_file);
        system_call(whole(fd, copy.data(), bytes, false), "pread");
    }
    found.wrong_read = mismatches_on_host(copy.data(), count, file_seed);

    // 3. The way an inference server does: map the file shared and read-only, and upload
    //    straight from the mapping (pageable: the driver stages it through its own buffers).
    void* weights = map_file(fd, bytes, PROT_READ, MAP_SHARED);
    found.wrong_unpinned = upload_and_check(on_device, weights, bytes, upload_unpinned);

    // 4. Pin the mapping. Read-only pages need cudaHostRegisterReadOnly, where the device
    //    supports it; Mapped gives the kernel's address for it.
    if (found.read_only_supported == 1) {
        {
            const tutorial::During during(pin_mapping);
            found.read_only =
                cudaHostRegister(weights, bytes, cudaHostRegisterReadOnly | cudaHostRegisterMapped);
        }
        if (found.read_only == cudaSuccess) {
            // 5. Uploads from it now run at the pinned rate, and a kernel reads the file's pages
            //    in place, through the device pointer cudaHostGetDevicePointer passes back.
            found.wrong_pinned = upload_and_check(on_device, weights, bytes, upload_pinned);
            std::uint32_t* in_place = nullptr;
            CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&in_place), weights, 0));
            found.wrong_kernel = mismatches_on_device(in_place, count, file_seed);
            CUDA_CHECK(cudaHostUnregister(weights));
        } else {
            (void)cudaGetLastError();  // an answer, not a failure: shown with the others
        }
    }

    // 6. The same read-only mapping with the default flags: what does cudaHostRegister answer?
    found.default_flags = cudaHostRegister(weights, bytes, cudaHostRegisterDefault);
    if (found.default_flags == cudaSuccess) {
        CUDA_CHECK(cudaHostUnregister(weights));
    } else {
        (void)cudaGetLastError();
    }
    munmap(weights, bytes);

    // 7. A private writable mapping of the same file registers with the default flags: pinning
    //    writes no page, but the pages it pins are the process's own copies, not the file's.
    void* own_copy = map_file(fd, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE);
    found.private_copy = cudaHostRegister(own_copy, bytes, cudaHostRegisterDefault);
    if (found.private_copy == cudaSuccess) {
        CUDA_CHECK(cudaMemcpy(on_device, own_copy, bytes, cudaMemcpyHostToDevice));
        found.wrong_private = mismatches_on_device(on_device, count, file_seed);
        CUDA_CHECK(cudaHostUnregister(own_copy));
    } else {
        (void)cudaGetLastError();
    }
    munmap(own_copy, bytes);
    close(fd);
    CUDA_CHECK(cudaFree(on_device));
    return found;
}

// A failed system call ends the lesson with its reason (these are not what it teaches).
void system_call(bool ok, const char* what) {
    if (ok) return;
    std::perror(what);  // "what: the reason"
    std::exit(1);
}

// All of `bytes` read from (or written to) the file from its start: one pread or pwrite moves at
// most about 2 GiB, so larger files take several.
bool whole(int fd, void* data, std::size_t bytes, bool write) {
    auto* at = static_cast<char*>(data);
    for (std::size_t done = 0; done < bytes;) {
        const ssize_t moved = write ? pwrite(fd, at + done, bytes - done, done)
                                    : pread(fd, at + done, bytes - done, done);
        if (moved <= 0) return false;
        done += static_cast<std::size_t>(moved);
    }
    return true;
}

// A file of `bytes` holding pattern(i, file_seed), in $TMPDIR (or /tmp), already unlinked: it
// goes away with its last descriptor and mapping, whatever happens to the program. -1 where
// there is no room for it.
int make_file(std::size_t bytes) {
    const char* dir = std::getenv("TMPDIR");
    std::string path =
        std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/mapped_file_XXXXXX";
    const int fd = mkstemp(path.data());
    if (fd < 0) return -1;
    unlink(path.c_str());
    std::vector<std::uint32_t> values(bytes / sizeof(std::uint32_t));
    fill_on_host(values.data(), values.size(), file_seed);
    if (!whole(fd, values.data(), bytes, true)) {
        close(fd);
        return -1;
    }
    return fd;
}

void* map_file(int fd, std::size_t bytes, int protection, int flags) {
    void* at = mmap(nullptr, bytes, protection, flags, fd, 0);
    system_call(at != MAP_FAILED, "mmap");
    return at;
}

// One cudaMemcpy of the whole mapping to the device, as the step `step`; the values checked.
std::size_t upload_and_check(std::uint32_t* device, const void* host, std::size_t bytes,
                             const tutorial::Step& step) {
    {
        const tutorial::During during(step);
        CUDA_CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
    }
    return mismatches_on_device(device, bytes / sizeof(std::uint32_t), file_seed);
}

}  // namespace

#ifndef TUTORIAL_CHECKS
int main() {
    const std::size_t bytes = std::size_t{256} << 20;
    walkthrough(bytes, 0);      // a warm-up: the kernels loaded, the file's pages cached once
    tutorial::StepTimes times;  // each step's time: the learner's instrument (common/step.hpp)
    Found found;
    for (int round = 0; round < 5; ++round) found = walkthrough(bytes, 0);  // medians of five
    if (!found.file_made) {
        std::printf("SKIP: mapped_file: no room for a 256 MiB file in $TMPDIR (or /tmp)\n");
        return 77;
    }
    times.print();
    std::printf(
        "256 MiB file, mapped read-only: cudaHostRegister(ReadOnly) %s, default flags %s; "
        "a private writable mapping: %s\n",
        found.read_only_supported == 1 ? cudaGetErrorName(found.read_only) : "(not supported here)",
        cudaGetErrorName(found.default_flags), cudaGetErrorName(found.private_copy));
    const std::size_t wrong = found.wrong_read + found.wrong_unpinned + found.wrong_pinned +
                              found.wrong_kernel + found.wrong_private;
    std::printf("values read wrong, every way: %zu\n", wrong);
    if (found.read_only == cudaSuccess) {
        // The card's number: the upload from the pinned mapping against the unpinned one.
        const double unpinned_ms = times.median_ms(upload_unpinned);
        const double pinned_ms = times.median_ms(upload_pinned);
        std::printf(
            "upload %.1f GB/s pinned against %.1f GB/s unpinned: %.2fx; pinning took "
            "%.1f ms (%.0f ms per GiB), reading the file %.1f ms\n",
            bytes / pinned_ms / 1e6, bytes / unpinned_ms / 1e6, unpinned_ms / pinned_ms,
            times.median_host_ms(pin_mapping),
            times.median_host_ms(pin_mapping) * (1 << 30) / bytes, times.median_host_ms(read_file));
    }
    return wrong == 0 ? 0 : 1;
}
#endif
