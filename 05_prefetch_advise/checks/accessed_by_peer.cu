// Checks of section accessed_by_peer: GPU 0 reads the data ../accessed_by_peer.cu placed on GPU 1
// twice, then GPU 1 reads it, without and with the advice (each read timed by events), and
// whether the AccessedBy attribute lists GPU 0.
#include "05_prefetch_advise/accessed_by_peer.cu"

#include "../helpers/managed.hpp"
#include "common/device.hpp"
#include "common/harness/chapter.hpp"
#include "common/harness/report.hpp"
#include "common/harness/requires.hpp"
#include "common/timing.hpp"

#include <cstdio>

using tutorial::format;

namespace {

struct PeerReads {
    double first_ms = 0, second_ms = 0;  // GPU 0's two reads of the whole buffer
    double owner_ms = 0;                 // GPU 1 reading it afterwards
    bool reader_listed = false;          // AccessedBy names GPU 0
    int wrong = 0;                       // sums that were not the data's
};

PeerReads read_from_peer(std::size_t count, bool advise) {
    const std::size_t bytes = count * sizeof(std::uint32_t);
    PeerReads r;
    std::uint32_t* data = data_on_owner(count, advise);
    r.reader_listed = listed_as_accessed_by(data, bytes, reader);
    const std::uint64_t expected = pattern_sum(count, seed);
    CUDA_CHECK(cudaSetDevice(reader));
    const DeviceSum first = timed_device_sum(data, count);
    const DeviceSum second = timed_device_sum(data, count);
    CUDA_CHECK(cudaSetDevice(owner));
    const DeviceSum back_home = timed_device_sum(data, count);
    r.first_ms = first.ms;
    r.second_ms = second.ms;
    r.owner_ms = back_home.ms;
    r.wrong = (first.sum != expected) + (second.sum != expected) + (back_home.sum != expected);
    CUDA_CHECK(cudaFree(data));
    return r;
}

}  // namespace

tutorial::Result run_accessed_by_peer(tutorial::Context& ctx) {
    const int gpus = tutorial::device_count();
    if (gpus < 2) return ctx.skip(format("needs 2 GPUs; this machine has %d", gpus));
    // Without peer access, enabling it (or a peer read) would stop the run: say why instead.
    const std::string no_peer = tutorial::why_no_peer_access(gpus);
    if (!no_peer.empty()) return ctx.skip(no_peer);
    for (int g : {reader, owner}) {
        if (const char* why = why_no_gpu_prefetch(g); *why) return ctx.skip(why);
    }
    const std::size_t bytes = ctx.size_or(ctx.quick() ? (64 << 20) : (256 << 20));
    const std::size_t count = bytes / sizeof(std::uint32_t);
    std::printf(
        "%s of managed memory, prefetched to GPU %d. A kernel on GPU %d adds it all up twice, "
        "then\n"
        "a kernel on GPU %d adds it up. Once without advice, once after\n"
        "cudaMemAdvise(data, n, cudaMemAdviseSetAccessedBy, GPU %d).\n\n",
        tutorial::format_bytes(bytes).c_str(), owner, reader, owner, reader);
    const PeerReads without = read_from_peer(count, false);
    const PeerReads with = read_from_peer(count, true);
    CUDA_CHECK(cudaSetDevice(ctx.device));

    tutorial::Table table({{"advice"},
                           {"GPU 0 first read, GB/s", tutorial::Align::right},
                           {"GPU 0 second read, GB/s", tutorial::Align::right},
                           {"then GPU 1 reads, GB/s", tutorial::Align::right}});
    for (const auto& [name, r] : {std::pair{"none", &without}, {"AccessedBy(GPU 0)", &with}}) {
        table.add_row({name, format("%.1f", tutorial::gb_per_s(bytes, r->first_ms)),
                       format("%.1f", tutorial::gb_per_s(bytes, r->second_ms)),
                       format("%.1f", tutorial::gb_per_s(bytes, r->owner_ms))});
    }
    table.print();
    std::printf(
        "\nWithout advice GPU 0's first read faults and migrates every page to GPU 0; its second\n"
        "read is local, and GPU 1 must fault the pages back. With AccessedBy, GPU 0's page\n"
        "tables point at GPU 1's memory (the cudaMemAdvise entry: the advice moves nothing and\n"
        "keeps a mapping): both reads go over the link between the GPUs (NVLink on H100/H200\n"
        "SXM: 478 GB/s one way) and the data stays on GPU 1, which then reads it at device\n"
        "speed.\n\n");
    // These claims measure pages moving on access, which hardware-coherent systems may skip.
    const std::string coherent = tutorial::why_hardware_coherent(0);
    // The entry: the ids of the devices that have AccessedBy set on the whole range.
    ctx.claim(tutorial::documented(
        "cudaMemRangeGetAttribute(AccessedBy) lists GPU 0 exactly where it was advised",
        with.reader_listed && !without.reader_listed,
        format("%s with the advice, %s without", with.reader_listed ? "listed" : "not listed",
               without.reader_listed ? "listed" : "not listed"),
        "the advice was not recorded for the range",
        "Runtime API reference: cudaMemRangeGetAttribute"));
    ctx.claim(
        tutorial::at_least(
            "with AccessedBy, GPU 0's first read beats the faulting read (without / with)",
            without.first_ms / with.first_ms, 1.5, "x",
            "the faults were as cheap as mapped reads, or the mapping was built on first touch"),
        coherent);
    ctx.claim(
        tutorial::at_least(
            "without advice the first read moves the data to GPU 0: its second read is much faster "
            "(first / second)",
            without.first_ms / without.second_ms, 3.0, "x",
            "the driver mapped the pages remotely instead of migrating them"),
        coherent);
    ctx.claim(tutorial::at_least("with AccessedBy the data stays on GPU 1: GPU 1 reads it "
                                 "afterwards much faster than it "
                                 "does after GPU 0 took the pages (without / with)",
                                 without.owner_ms / with.owner_ms, 3.0, "x",
                                 "the pages migrated to GPU 0 despite the advice"),
              coherent);
    return ctx.verdict(without.wrong + with.wrong == 0,
                       "all six reads returned the data's sum, with and without the advice");
}

TUTORIAL_SECTION(accessed_by_peer, run_accessed_by_peer);
