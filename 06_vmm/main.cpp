// Chapter 06: the driver's virtual memory management API.
#include "common/cli.hpp"
#include "sections.hpp"

namespace {

std::string check_size(const tutorial::Options& options) {
    return tutorial::check_size_limits(options, 1, std::size_t{4} << 30);
}

}  // namespace

int main(int argc, char** argv) {
    using tutorial::Section;
    const tutorial::Chapter chapter{
        "06_vmm",
        "Virtual memory management: create, reserve, map, access, grow, alias",
        {
            Section{"support", "VMM attributes and the allocation granularity", run_support},
            Section{"basics", "create, reserve, map, access, use, tear down", run_basics, true,
                    check_size},
            Section{"growable", "realloc for device memory: map more, copy nothing", run_growable},
            Section{"aliasing", "one allocation at two addresses; the seed's foo1/foo2",
                    run_aliasing},
            Section{"access_control", "no access, read-only, read-write (fault)",
                    run_access_control},
            Section{"granularity_errors", "misaligned sizes, addresses, offsets; round_up",
                    run_granularity_errors},
            Section{"compression", "compressible memory: granted? faster?", run_compression, true,
                    check_size},
        },
        {
            {"no_access", child_no_access},
            {"read_only", child_read_only},
            {"misaligned_calls", child_misaligned_calls},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
