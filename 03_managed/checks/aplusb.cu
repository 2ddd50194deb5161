// Checks of section aplusb: runs ../aplusb.cu's walkthrough (the three ways), compares each with
// a + b + i and with each other, and states the lesson as a claim.
#include "03_managed/aplusb.cu"

#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"

#include <cstdio>
#include <vector>

namespace {

int wrong_values(const std::vector<int>& ret) {
    int wrong = 0;
    for (int i = 0; i < count; ++i) wrong += ret[i] != a + b + i;
    return wrong;
}

}  // namespace

tutorial::Result run_aplusb(tutorial::Context& ctx) {
    std::printf("ret[i] = %d + %d + i for i < %d, one thread per element, three ways.\n\n", a, b,
                count);
    const Found found = walkthrough();
    for (int i = 0; i < 3; ++i) {
        std::printf("%d: A+B = %d   (explicit %d, cudaMallocManaged %d, __managed__ %d)\n", i,
                    a + b + i, found.explicit_copy[i], found.managed[i], found.global[i]);
    }
    std::printf("...\n\n");

    const int wrong_explicit = wrong_values(found.explicit_copy);
    const int wrong_managed = wrong_values(found.managed);
    const int wrong_global = wrong_values(found.global);
    int disagree = 0;
    for (int i = 0; i < count; ++i) {
        disagree +=
            found.explicit_copy[i] != found.managed[i] || found.managed[i] != found.global[i];
    }
    tutorial::Table table({{"version"}, {"memory"}, {"the host waits with"}, {"wrong values"}});
    table.add_row({"explicit", "cudaMalloc + host copy", "cudaMemcpy (it waits for the kernel)",
                   tutorial::format("%d", wrong_explicit)});
    table.add_row({"managed", "cudaMallocManaged", "cudaDeviceSynchronize",
                   tutorial::format("%d", wrong_managed)});
    table.add_row({"global", "__device__ __managed__ int ret[1000]", "cudaDeviceSynchronize",
                   tutorial::format("%d", wrong_global)});
    table.print();
    std::printf(
        "\nWithout the cudaDeviceSynchronize the host could read the managed results before the\n"
        "kernel has written them: a launch returns at once, and managed memory involves no copy\n"
        "that would wait. %d of %d positions differ between the three versions.\n",
        disagree, count);
    // N.1.2: cudaMallocManaged() returns a pointer valid in host and device code (返回).
    ctx.claim(tutorial::documented(
        "host_reads_after_sync",
        "once synchronized, the host reads a kernel's results through the managed pointer itself",
        wrong_managed + wrong_global == 0,
        tutorial::format("%d wrong in cudaMallocManaged, %d in __managed__, of %d each",
                         wrong_managed, wrong_global, count),
        "the synchronization is missing, so the host read before the kernel wrote",
        tutorial::Entry{"Programming Guide, N.1.2 Simplifying GPU Programming",
                        "cudaMallocManaged()", "返回"}));
    return ctx.verdict(wrong_explicit + wrong_managed + wrong_global == 0 && disagree == 0,
                       tutorial::format("all %d values of each version equal a + b + i, and the "
                                        "three versions agree",
                                        count));
}

TUTORIAL_SECTION(aplusb, run_aplusb);
