// What the driver moved: the Unified Memory counters, read through CUPTI (harness).
//
// A managed-memory lesson ("the kernel's first touch pulled the pages over", "after the prefetch
// nothing moved") is best judged by what the driver itself reports having moved, not by how long
// a step took. CUPTI's Unified Memory counter activity reports every migration (bytes each way,
// and why), every GPU and CPU page fault, and the driver's thrashing remedies. UmCounters turns
// them on and sums what one step caused:
//
//   tutorial::UmCounters counters;
//   if (!counters.available()) return ctx.skip(counters.why_not());
//   const tutorial::UmTraffic t = counters.measure([&] { touch<<<blocks, 256>>>(data, n); });
//   // t.htod.total == bytes pulled to the GPU, t.gpu_page_faults > 0 for a first touch
//
// CUPTI is loaded when the first UmCounters is made (dlopen), never linked: libcupti needs the
// NVIDIA driver, and every program of the course must start, and say SKIP, without one. Loading
// tries $TUTORIAL_CUPTI_LIBRARY if set (and only it), else the library beside the toolkit CMake
// found, else the plain soname (libcupti.so.13). Built with -DTUTORIAL_CUPTI=OFF, or where CMake
// found no cupti.h, available() is always false ("built without CUPTI").
//
// Sizes are in MiB (2^20 bytes) throughout: managed memory migrates whole pages (4 KiB, 64 KiB,
// 2 MiB), so a 64 MiB buffer reads "64.0 MiB" and not "67.1 MB".
//
// Observed on driver 580.159.04 (H100, CUDA 13.0), 64 MiB of managed memory: the CPU's first
// writes 192 CPU faults and nothing moved; a kernel's first touch 64.0 MiB host to device (about
// 14 MiB to serve faults, the rest moved ahead of them) and 407 to 576 GPU faults; the CPU reading
// it back 64.0 MiB device to host and 192 CPU faults; a prefetch to the GPU 64.0 MiB, requested,
// no fault; a kernel after it nothing. At 256 MiB the kernel's first touch reported 230.1 MiB and
// no GPU fault at all, with no record counted as dropped: records can be lost silently when one
// step makes very many. Keep measured steps at 64 MiB or so, and see um_records_lost().
#pragma once

#include "common/harness/report.hpp"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace tutorial {

// Bytes moved one way, and why the driver moved them (CUPTI's migration cause). The causes add
// up to `total` unless the driver gave no cause.
struct UmBytes {
    std::uint64_t total = 0;
    std::uint64_t requested = 0;        // an explicit call asked for it: cudaMemPrefetchAsync
    std::uint64_t on_fault = 0;         // to serve a page fault (coherence)
    std::uint64_t speculative = 0;      // the driver moved more than faulted, ahead of use
    std::uint64_t evicted = 0;          // pushed out of GPU memory to make room for other data
    std::uint64_t access_counters = 0;  // hot pages moved on the GPU's access counters
};

// What moved during one measured step.
struct UmTraffic {
    bool counted = false;  // false when the counters were not available: everything below is 0
    UmBytes htod;          // host to device
    UmBytes dtoh;          // device to host
    UmBytes dtod;          // device to device (between GPUs)
    // GPU page faults: the sum of the fault records' values (each record names one faulting page
    // and counts the fault groups for it), and the number of those records.
    std::uint64_t gpu_page_faults = 0;
    std::uint64_t gpu_fault_records = 0;
    // CPU page faults on managed memory: one record each (its value is the faulting
    // instruction's address, not a count).
    std::uint64_t cpu_page_faults = 0;
    // The driver's remedies when CPU and GPU keep taking the same pages from each other: one
    // record each for thrashing detected, a processor throttled, memory mapped remotely instead
    // of migrated.
    std::uint64_t thrashing = 0;
    std::uint64_t throttling = 0;
    std::uint64_t remote_maps = 0;
    // Records CUPTI dropped for want of buffer space while this step ran: the counts above are
    // then too low. Always 0 unless something is wrong.
    std::uint64_t dropped_records = 0;
};

// Only one UmCounters may exist at a time: CUPTI's activity records are process-wide.
class UmCounters {
public:
    // Loads CUPTI, then turns the counters on for every device. Needs the CUDA driver (the
    // counters can only be configured once it is initialised: this calls cudaGetDeviceCount,
    // and cudaFree(nullptr) if CUPTI says it is not ready yet). Never fails: check available().
    UmCounters();
    ~UmCounters();
    UmCounters(const UmCounters&) = delete;
    UmCounters& operator=(const UmCounters&) = delete;

    bool available() const { return why_not_.empty(); }
    // Why the counters are not available, in one line ("" when they are): built without
    // CUPTI, under compute-sanitizer, CUPTI not loaded (and why), no usable device, another tool
    // holding CUPTI's activity interface (with CUPTI's error name).
    const std::string& why_not() const { return why_not_; }
    // Where CUPTI came from and how it was set up, for a report: "CUPTI 130001 from
    // /usr/local/cuda/lib64/libcupti.so.13". Counters the driver refused are named here.
    const std::string& setup() const { return setup_; }
    // The counter kinds CUPTI refused to turn on ("" when it took them all), by CUPTI's names:
    // "GPU_PAGE_FAULT (CUPTI_ERROR_...)". A claim that reads one of them cannot be judged; see
    // why_not_counted.
    const std::string& refused() const { return refused_; }

    // The positive control, made once when the counters start: 2 MiB of managed memory written
    // by the CPU and read by a kernel must move to the GPU. Until the counters have shown bytes
    // that must move, "nothing moved" and "no fault" cannot be told from counters that are
    // silent. control() is what they counted; control_line() says it in one line, for a section
    // to print before its counted steps; why_not_counted gives the reason where it failed.
    const UmTraffic& control() const { return control_; }
    std::string control_line() const;
    // "" when the control saw the bytes move (and a GPU page fault, where that counter is on),
    // else why not.
    const std::string& control_problem() const { return control_problem_; }

    // Records that came after their step had been counted (at the start of the next step or at
    // the end): each step waits for its records to stop arriving before it is counted, and any
    // that still come late are counted here, for the report.
    std::uint64_t late_records() const;

    // Runs `step`, waits for the device (cudaDeviceSynchronize), and returns what moved while it
    // ran. Anything recorded before the step is set aside first (see stray_records()). Without
    // the counters the step still runs, and the result has counted == false.
    UmTraffic measure(const std::function<void()>& step);
    // The same in two halves, for a step that is not one function (StepTraffic,
    // common/harness/steps.hpp): start() sets aside what came before; stop() waits for the device
    // and returns what moved since start().
    void start();
    UmTraffic stop();

    // Records that arrived outside any measure(): before the first, or between two. Non-zero
    // after a step means some of its records came late and were not counted with it.
    std::uint64_t stray_records() const;

private:
    void run_control();

    std::string why_not_;
    std::string setup_;
    std::string refused_;
    UmTraffic control_;
    std::string control_problem_;
    std::uint64_t late_ = 0;
    bool enabled_ = false;
};

// A table of steps and what moved in each: um_columns("step") gives the columns, um_cells the
// row for one step. MiB each way (host to device, device to host, device to device), GPU page
// faults (record values summed), CPU page faults, and the thrashing remedies (thrashing /
// throttling / remote maps); "-" where nothing was counted.
std::vector<Column> um_columns(const std::string& first_header);
std::vector<std::string> um_cells(const std::string& first_cell, const UmTraffic& traffic);

// One line: "64.0 MiB host to device, 0.0 MiB device to host, 431 GPU page faults, 0 CPU page
// faults" (and device to device, thrashing, throttling, remote maps and dropped records, when not
// zero), or "not counted".
std::string describe(const UmTraffic& traffic);

// Whether the traffic shows records evidently lost: bytes moved to serve GPU page faults with
// no GPU fault counted, or bytes moved to serve CPU faults with no CPU fault counted. Returns
// the reason, or "" when nothing points to a loss (which does not prove that none happened).
std::string um_records_lost(const UmTraffic& traffic);

// Why a claim counted from `steps` cannot be judged here, or "" when it can: the counters cannot
// be read (counters.why_not()), CUPTI refused a counter kind the claim reads (the bytes each way
// and the page faults, and `also_reads`: "BYTES_TRANSFER_DTOD", "THRASHING", "THROTTLING",
// "REMOTE_MAP" for a claim that reads those; counters.refused()), the
// positive control saw nothing move (counters.control_problem()), `hardware` says why this device
// may rightly do otherwise, or the records of one of the steps were evidently lost
// (um_records_lost). Pass it to ctx.claim.
std::string why_not_counted(const UmCounters& counters,
                            std::initializer_list<const UmTraffic*> steps,
                            const std::string& hardware = "",
                            const std::vector<std::string>& also_reads = {});

// Bytes as MiB with one decimal: "64.0".
std::string mib(std::uint64_t bytes);

}  // namespace tutorial
