// Chapter 06: the driver's virtual memory management API.
#include "common/cli.hpp"
#include "sections.hpp"

int main(int argc, char** argv) {
    using tutorial::GiB;
    using tutorial::MiB;
    using tutorial::Section;
    using tutorial::Takes;
    const tutorial::Chapter chapter{
        "06_vmm",
        "Virtual memory management: create, reserve, map, access, grow, alias",
        {
            Section{"support", "VMM attributes and the allocation granularity", run_support},
            Section{"basics", "create, reserve, map, access, use, tear down", run_basics,
                    Takes{}.size(1, 4 * GiB)},
            Section{"growable", "realloc for device memory: map more, copy nothing", run_growable},
            Section{"aliasing", "one allocation at two addresses; the appendix's foo1/foo2",
                    run_aliasing},
            Section{"access_control", "no access, read-only, read-write (fault)",
                    run_access_control},
            Section{"granularity_errors", "misaligned sizes, addresses, offsets; round_up",
                    run_granularity_errors},
            Section{"remapping", "map, unmap, map again; never over a mapping; unmap, then free",
                    run_remapping},
            Section{"compression", "compressible memory: granted? faster?", run_compression,
                    Takes{}.size(1, 4 * GiB).iters()},
            // The stream-ordered allocator: pools of VMM memory.
            Section{"stream_ordered", "cudaMallocAsync/cudaFreeAsync: what waits, what is reused",
                    run_stream_ordered, Takes{}.size(16, 1 * GiB).holds(2, 0)},
            Section{"pool_threshold", "the default pool gives memory back at every synchronize",
                    run_pool_threshold, Takes{}.size(2 * MiB, 4 * GiB).holds(1, 0)},
            Section{"pools", "a pool of one's own: properties, isolation, maxSize", run_pools,
                    Takes{}.size(2 * MiB, 4 * GiB).holds(2, 0)},
            Section{"graph_memory", "allocation and free nodes in CUDA graphs; trim; auto-free",
                    run_graph_memory, Takes{}.size(2 * MiB, 4 * GiB).holds(3, 0).iters()},
            // Several GPUs: each needs 2 or more and reports SKIP with one.
            Section{"peer_access_control",
                    "EnablePeerAccess maps everything; cuMemSetAccess one range (2+ GPUs)",
                    run_peer_access_control},
            Section{"striped", "one virtual range backed by memory on every GPU (2+ GPUs)",
                    run_striped},
            Section{"pool_access",
                    "a pool's memory for another GPU: cudaMemPoolSetAccess (2+ GPUs)",
                    run_pool_access},
        },
        {
            {"use_after_release", child_use_after_release},
            {"no_access", child_no_access},
            {"read_only", child_read_only},
            {"misaligned_calls", child_misaligned_calls},
            {"mapping_misuse", child_mapping_misuse},
            {"peer_vmm_grant", child_peer_vmm_grant},
            {"pool_limit", child_pool_limit},
            {"graph_memory_misuse", child_graph_memory_misuse},
            {"pool_peer_read", child_pool_peer_read},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
