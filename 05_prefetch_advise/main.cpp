// Chapter 05: prefetching and memory advice for managed memory.
#include "common/harness/chapter.hpp"

int main(int argc, char** argv) {
    using tutorial::GiB;
    using tutorial::MiB;
    using tutorial::Section;
    using tutorial::Takes;
    // Buffers read 16 bytes at a time; managed allocations kept to a few GiB, and to what the
    // GPU has free (holds: how many buffers of --size a section has at once on the device and on
    // the host; managed memory beyond the free device memory would oversubscribe the GPU).
    const Takes size = Takes{}.size(16, 4 * GiB);
    const tutorial::Chapter chapter{
        "05_prefetch_advise",
        "Prefetching and memory advice: cudaMemPrefetchAsync, cudaMemAdvise, measured",
        {
            Section{"properties", "what prefetching and advice can do on this device"},
            Section{"fault_vs_prefetch", "page faults vs prefetch vs cudaMemcpy, both ways",
                    Takes{size}.holds(2, 2).iters()},
            Section{"prefetch_flow",
                    "the Unified Memory appendix's foo(stream): prefetch, kernel, back",
                    Takes{size}.holds(1, 1).iters()},
            Section{"read_mostly", "cudaMemAdviseSetReadMostly: copies on both sides",
                    Takes{size}.holds(1, 1).iters()},
            Section{"preferred_location", "cudaMemAdviseSetPreferredLocation: map, not migrate",
                    Takes{size}.holds(1, 1)},
            // The appendix's ints hold 2 * (a + b + i): at most 1 GiB keeps that inside an int.
            Section{"accessed_by", "cudaMemAdviseSetAccessedBy on the appendix's write/append",
                    Takes{}.size(16, 1 * GiB).holds(1, 1).iters()},
            Section{"range_attributes", "cudaMemRangeGetAttribute(s) after each advice"},
            // CUDA 13.0's batch calls for managed memory. A walkthrough of discard moves its
            // buffer eight times: at most 20 of them.
            Section{"discard", "dead data: discarded, its pages move without it",
                    Takes{}.size(4 * MiB, 4 * GiB).holds(2, 2).iters(1, 20)},
            Section{"prefetch_batch", "many ranges: a loop of prefetches, one batch call, the span",
                    Takes{}.iters()},
            // Device memory and the L2 cache: no managed memory.
            Section{"l2_persist", "keeping a hot table in L2: the persisting access policy window"},
            // Several GPUs: each needs 2 or more and reports SKIP with one.
            Section{"read_mostly_gpus", "ReadMostly copies on every GPU, the appendix's loop (2+)",
                    Takes{size}.holds(1, 1).iters()},
            Section{"accessed_by_peer", "GPU 0 reads GPU 1's pages: faults vs AccessedBy (2+)",
                    Takes{size}.holds(1, 1)},
            Section{"prefetch_between_gpus", "cudaMemPrefetchAsync GPU to GPU vs a peer copy (2+)",
                    Takes{size}.holds(1, 1).iters()},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
