// Chapter 06: the driver's virtual memory management API.
#include "common/harness/chapter.hpp"

int main(int argc, char** argv) {
    using tutorial::GiB;
    using tutorial::MiB;
    using tutorial::Section;
    using tutorial::Takes;
    const tutorial::Chapter chapter{
        "06_vmm",
        "Virtual memory management: create, reserve, map, access, grow, alias",
        {
            Section{"support", "VMM attributes and the allocation granularity"},
            Section{"basics", "create, reserve, map, access, use, tear down",
                    Takes{}.size(1, 4 * GiB).holds(1, 0)},
            Section{"growable", "realloc for device memory: map more, copy nothing"},
            Section{"fragmentation", "a caching allocator's free pieces, and the expandable segment",
                    Takes{}.size(2 * MiB, 4 * GiB, 192 * MiB).holds(1, 0)},
            Section{"aliasing", "one allocation at two addresses; the appendix's foo1/foo2"},
            Section{"access_control", "no access, read-only, read-write (fault)"},
            Section{"granularity_errors", "misaligned sizes, addresses, offsets; round_up"},
            Section{"remapping", "map, unmap, map again; never over a mapping; unmap, then free"},
            Section{"sleep_wake", "give the memory back, keep the addresses: unmap, release, remap",
                    Takes{}.size(2 * MiB, 4 * GiB).holds(1, 1)},
            Section{"compression", "compressible memory: granted? faster?",
                    Takes{}.size(1, 4 * GiB).holds(1, 0).iters()},
            // The stream-ordered allocator: pools of VMM memory.
            Section{"stream_ordered", "cudaMallocAsync/cudaFreeAsync: what waits, what is reused",
                    Takes{}.size(16, 1 * GiB).holds(2, 0)},
            Section{"pool_threshold", "the default pool gives memory back at every synchronize",
                    Takes{}.size(2 * MiB, 4 * GiB).holds(1, 0)},
            Section{"pool_cost", "what a pool's release threshold costs a loop that synchronizes",
                    Takes{}.size(2 * MiB, 256 * MiB).holds(1, 1).iters(2, 40)},
            Section{"pools", "a pool of one's own: properties, isolation, maxSize",
                    Takes{}.size(2 * MiB, 4 * GiB).holds(2, 0)},
            Section{"wrong_stream_free",
                    "the free on the wrong stream: what a late reader gets; the reuse rules",
                    Takes{}.size(2 * MiB, 1 * GiB).holds(3, 0)},
            Section{"address_limit",
                    "out of memory with memory free: an address-space limit (RLIMIT_AS)"},
            Section{"graph_memory", "allocation and free nodes in CUDA graphs; trim; auto-free",
                    Takes{}.size(2 * MiB, 4 * GiB).holds(3, 0).iters()},
            // Several GPUs: each needs 2 or more and reports SKIP with one.
            Section{"peer_access_control",
                    "EnablePeerAccess maps everything; cuMemSetAccess one range (2+ GPUs)"},
            Section{"striped", "one virtual range backed by memory on every GPU (2+ GPUs)"},
            Section{"pool_access",
                    "a pool's memory for another GPU: cudaMemPoolSetAccess (2+ GPUs)"},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
