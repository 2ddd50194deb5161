// Chapter 02: pageable vs page-locked (pinned) host memory.
#include "common/cli.hpp"
#include "sections.hpp"

namespace {

// The sections that take --size use it for host buffers that are pinned and copied whole: a
// whole number of 4 KiB pages, and no more than a few GiB of this machine's memory.
std::string check_size(const tutorial::Options& options) {
    return tutorial::check_size_limits(options, 4 << 10, std::size_t{4} << 30);
}

}  // namespace

int main(int argc, char** argv) {
    using tutorial::Section;
    const tutorial::Chapter chapter{
        "02_pinned",
        "Pageable vs page-locked (pinned) host memory: flags, bandwidth, overlap",
        {
            Section{"properties", "the device attributes pinned memory depends on", run_properties},
            Section{"basics", "device, pageable and pinned memory, a value through all three",
                    run_basics},
            Section{"bandwidth", "copy GB/s from pageable, pinned, write-combined, registered",
                    run_bandwidth, true, check_size},
            Section{"flags", "every cudaHostAlloc / cudaHostRegister flag, read back", run_flags},
            Section{"write_combined", "CPU read and write speed of write-combined memory",
                    run_write_combined, true, check_size},
            Section{"async", "when cudaMemcpyAsync returns; overlap over K streams", run_async,
                    true, check_size},
            Section{"alloc_cost", "what pinning costs, and when it pays off", run_alloc_cost, true,
                    check_size},
            Section{"misuse", "wrong free calls, pinning twice, read-only writes (fault)",
                    run_misuse},
        },
        {
            {"mismatched_calls", child_mismatched_calls},
            {"free_pinned", child_free_pinned},
            {"write_read_only", child_write_read_only},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
