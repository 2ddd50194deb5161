// Chapter 05: prefetching and memory advice for managed memory.
#include "common/cli.hpp"
#include "sections.hpp"

namespace {

// The sections read buffers 16 bytes at a time and keep managed allocations to a few GiB.
std::string check_size(const tutorial::Options& options) {
    return tutorial::check_size_limits(options, 16, std::size_t{4} << 30);
}

}  // namespace

int main(int argc, char** argv) {
    using tutorial::Section;
    const tutorial::Chapter chapter{
        "05_prefetch_advise",
        "Prefetching and memory advice: cudaMemPrefetchAsync, cudaMemAdvise, measured",
        {
            Section{"properties", "what prefetching and advice can do on this device",
                    run_properties},
            Section{"fault_vs_prefetch", "page faults vs prefetch vs cudaMemcpy, both ways",
                    run_fault_vs_prefetch, true, check_size},
            Section{"prefetch_flow", "the seed's foo(stream): prefetch, kernel, prefetch back",
                    run_prefetch_flow, true, check_size},
            Section{"read_mostly", "cudaMemAdviseSetReadMostly: copies on both sides",
                    run_read_mostly, true, check_size},
            Section{"preferred_location", "cudaMemAdviseSetPreferredLocation: map, not migrate",
                    run_preferred_location, true, check_size},
            Section{"accessed_by", "cudaMemAdviseSetAccessedBy: the seed's write/append",
                    run_accessed_by, true, check_size},
            Section{"range_attributes", "cudaMemRangeGetAttribute(s) after each advice",
                    run_range_attributes},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
