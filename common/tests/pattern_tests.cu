// The known-data kernels of common/patterns.cu, which most sections use to fill and check memory.
// The sum kernel is the course's one kernel with shared memory and a barrier, so this test is
// where compute-sanitizer's racecheck and synccheck examine it (common/cmake/tutorial.cmake).
#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/harness/report.hpp"
#include "tests.hpp"

#include <cstdint>

using tutorial::Context;
using tutorial::Result;

Result test_pattern_kernels(Context& ctx) {
    // Enough 16-byte vectors for every thread's unrolled loads, and a tail that is not a whole
    // round of them.
    constexpr std::size_t count = 4 * ((std::size_t{1} << 20) + 123);
    constexpr std::uint32_t seed = 7;
    constexpr std::size_t changed = 12345;  // an element set to 0 afterwards
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMalloc(&data, count * sizeof *data));
    fill_on_device(data, count, seed);
    const std::size_t mismatches_before = mismatches_on_device(data, count, seed);
    const std::uint64_t sum_before = sum_on_device(data, count);
    CUDA_CHECK(cudaMemset(data + changed, 0, sizeof *data));
    const std::size_t mismatches_after = mismatches_on_device(data, count, seed);
    const std::uint64_t sum_after = sum_on_device(data, count);
    CUDA_CHECK(cudaFree(data));

    const std::uint64_t expected = pattern_sum(count, seed);
    const std::uint64_t expected_after = expected - pattern(changed, seed);
    tutorial::Table table({{"after"}, {"mismatches", tutorial::Align::right},
                           {"kernel's sum", tutorial::Align::right},
                           {"expected sum", tutorial::Align::right}});
    table.add_row({"fill", std::to_string(mismatches_before), std::to_string(sum_before),
                   std::to_string(expected)});
    table.add_row({"one element zeroed", std::to_string(mismatches_after),
                   std::to_string(sum_after), std::to_string(expected_after)});
    table.print();
    const bool ok = mismatches_before == 0 && sum_before == expected && mismatches_after == 1 &&
                    sum_after == expected_after;
    return ctx.verdict(ok, "the kernels' mismatch counts and sums match the pattern's formula, "
                           "before and after one element changed");
}
