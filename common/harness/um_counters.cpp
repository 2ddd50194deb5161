#include "common/harness/um_counters.hpp"

#include "common/check.hpp"
#include "common/patterns.hpp"
#include "common/harness/claim.hpp"
#include "common/text.hpp"

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <string>
#include <utility>
#include <vector>

#if TUTORIAL_CUPTI
#include <cupti.h>  // for its types and constants only: every function is found with dlsym
#include <dlfcn.h>
#endif

namespace tutorial {
namespace {

#if TUTORIAL_CUPTI

// CUPTI's records are process-wide: one recorder at a time.
std::atomic<bool> recorder_in_use{false};

// The CUPTI functions the recorder calls, found in the loaded library. Each pointer has the type
// of the function cupti.h declares, so the calls below read as CUPTI's documentation writes them.
struct Cupti {
    std::string path;     // where it was loaded from
    std::string problem;  // why it could not be loaded, or ""
    bool callbacks_registered = false;
    decltype(&::cuptiGetVersion) GetVersion = nullptr;
    decltype(&::cuptiGetResultString) GetResultString = nullptr;
    decltype(&::cuptiActivityRegisterCallbacks) ActivityRegisterCallbacks = nullptr;
    decltype(&::cuptiActivityConfigureUnifiedMemoryCounter) ActivityConfigureUnifiedMemoryCounter =
        nullptr;
    decltype(&::cuptiActivityEnable) ActivityEnable = nullptr;
    decltype(&::cuptiActivityDisable) ActivityDisable = nullptr;
    decltype(&::cuptiActivityFlushAll) ActivityFlushAll = nullptr;
    decltype(&::cuptiActivityGetNextRecord) ActivityGetNextRecord = nullptr;
    decltype(&::cuptiActivityGetNumDroppedRecords) ActivityGetNumDroppedRecords = nullptr;
};

// What the records delivered so far add up to. CUPTI hands buffers over on its own worker
// thread as well as inside cuptiActivityFlushAll, so every access holds the mutex.
struct Tally {
    std::mutex mutex;
    UmTraffic traffic;
    std::uint64_t records = 0;  // since the last reset
    std::uint64_t stray = 0;    // records that arrived outside any measure()
};

Tally& tally() {
    static Tally* const t = new Tally;  // never destroyed: CUPTI may deliver a buffer at exit
    return *t;
}

Cupti& cupti();

// The libraries to try, in order: $TUTORIAL_CUPTI_LIBRARY alone when set, else the one beside
// the toolkit CMake found, then the soname as the dynamic loader finds it.
std::vector<std::string> cupti_candidates() {
    const char* chosen = std::getenv("TUTORIAL_CUPTI_LIBRARY");
    if (chosen != nullptr && *chosen != '\0') return {chosen};
    std::vector<std::string> candidates;
#ifdef TUTORIAL_CUPTI_LIBRARY_PATH
    candidates.push_back(TUTORIAL_CUPTI_LIBRARY_PATH);
#endif
#ifdef TUTORIAL_CUPTI_SONAME
    candidates.push_back(TUTORIAL_CUPTI_SONAME);
#else
    candidates.push_back("libcupti.so");
#endif
    return candidates;
}

template <typename Function>
bool find(void* library, const char* name, Function& function, std::string& problem) {
    function = reinterpret_cast<Function>(dlsym(library, name));
    if (function == nullptr && problem.empty()) problem = name;
    return function != nullptr;
}

Cupti load_cupti() {
    Cupti c;
    void* library = nullptr;
    std::string tried;
    for (const std::string& candidate : cupti_candidates()) {
        library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (library != nullptr) {
            c.path = candidate;
            break;
        }
        const char* error = dlerror();
        tried += (tried.empty() ? "" : "; ") + std::string(error != nullptr ? error : candidate);
    }
    if (library == nullptr) {
        c.problem = "CUPTI could not be loaded (" + tried + ")";
        return c;
    }
    std::string missing;
    find(library, "cuptiGetVersion", c.GetVersion, missing);
    find(library, "cuptiGetResultString", c.GetResultString, missing);
    find(library, "cuptiActivityRegisterCallbacks", c.ActivityRegisterCallbacks, missing);
    find(library, "cuptiActivityConfigureUnifiedMemoryCounter",
         c.ActivityConfigureUnifiedMemoryCounter, missing);
    find(library, "cuptiActivityEnable", c.ActivityEnable, missing);
    find(library, "cuptiActivityDisable", c.ActivityDisable, missing);
    find(library, "cuptiActivityFlushAll", c.ActivityFlushAll, missing);
    find(library, "cuptiActivityGetNextRecord", c.ActivityGetNextRecord, missing);
    find(library, "cuptiActivityGetNumDroppedRecords", c.ActivityGetNumDroppedRecords, missing);
    // The library stays loaded for the life of the process: CUPTI keeps a worker thread.
    if (!missing.empty()) c.problem = "CUPTI at " + c.path + " has no " + missing;
    return c;
}

Cupti& cupti() {
    static Cupti c = load_cupti();
    return c;
}

std::string result_name(CUptiResult result) {
    const char* name = nullptr;
    if (cupti().GetResultString == nullptr ||
        cupti().GetResultString(result, &name) != CUPTI_SUCCESS || name == nullptr) {
        return "CUPTI error " + std::to_string(static_cast<int>(result));
    }
    return name;
}

void add_bytes(UmBytes& bytes, std::uint64_t value, std::uint32_t cause) {
    bytes.total += value;
    switch (cause) {
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_USER: bytes.requested += value; break;
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE:
            bytes.on_fault += value;
            break;
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_PREFETCH:
            bytes.speculative += value;
            break;
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_EVICTION: bytes.evicted += value; break;
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_ACCESS_COUNTERS:
            bytes.access_counters += value;
            break;
        default: break;
    }
}

// One record into the tally. What `value` means depends on the counter (cupti_activity.h,
// CUpti_ActivityUnifiedMemoryCounter3): bytes for the transfers, the number of fault groups for
// a GPU page fault, the faulting instruction's address for a CPU page fault.
void add_record(UmTraffic& t, const CUpti_ActivityUnifiedMemoryCounter3& r) {
    switch (r.counterKind) {
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
            add_bytes(t.htod, r.value, r.flags);
            break;
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH:
            add_bytes(t.dtoh, r.value, r.flags);
            break;
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD:
            add_bytes(t.dtod, r.value, r.flags);
            break;
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT:
            t.gpu_page_faults += r.value;
            ++t.gpu_fault_records;
            break;
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT:
            ++t.cpu_page_faults;
            break;
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING: ++t.thrashing; break;
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING: ++t.throttling; break;
        case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP: ++t.remote_maps; break;
        default: break;
    }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    constexpr size_t bytes = std::size_t{1} << 20;
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, bytes));  // records need 8-byte alignment
    *size = *buffer != nullptr ? bytes : 0;
    *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    Tally& t = tally();
    std::lock_guard<std::mutex> lock(t.mutex);
    CUpti_Activity* record = nullptr;
    while (cupti().ActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind != CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) continue;
        add_record(t.traffic,
                   *reinterpret_cast<const CUpti_ActivityUnifiedMemoryCounter3*>(record));
        ++t.records;
    }
    std::free(buffer);
}

// Delivers every record CUPTI holds (finished or not) to buffer_completed. A failure here means
// the counts cannot be trusted: one line on stderr and exit 1, as CUDA_CHECK does.
void flush_all() {
    const CUptiResult result = cupti().ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (result != CUPTI_SUCCESS) {
        std::fprintf(stderr, "%s:%d: cuptiActivityFlushAll failed: %s\n", __FILE__, __LINE__,
                     result_name(result).c_str());
        std::exit(1);
    }
}

// Flushes until the records stop coming: the driver can hand a step's last records to CUPTI
// after the device is idle, so one flush may miss them. At most about 20 ms.
void flush_until_settled() {
    Tally& t = tally();
    std::uint64_t before = 0;
    for (int i = 0; i < 10; ++i) {
        flush_all();
        {
            std::lock_guard<std::mutex> lock(t.mutex);
            if (i > 0 && t.records == before) return;
            before = t.records;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

struct CounterKind {
    CUpti_ActivityUnifiedMemoryCounterKind kind;
    const char* name;
};

constexpr CounterKind counter_kinds[] = {
    {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD, "BYTES_TRANSFER_HTOD"},
    {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH, "BYTES_TRANSFER_DTOH"},
    {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD, "BYTES_TRANSFER_DTOD"},
    {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, "GPU_PAGE_FAULT"},
    {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT, "CPU_PAGE_FAULT_COUNT"},
    {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING, "THRASHING"},
    {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING, "THROTTLING"},
    {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP, "REMOTE_MAP"},
};
constexpr int counter_count = sizeof counter_kinds / sizeof counter_kinds[0];

CUpti_ActivityUnifiedMemoryCounterConfig counter_config(
    CUpti_ActivityUnifiedMemoryCounterKind kind) {
    CUpti_ActivityUnifiedMemoryCounterConfig config{};
    // The scope and device are ignored since CUDA 7.0: the counters cover every device.
    config.scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
    config.kind = kind;
    config.deviceId = 0;
    config.enable = 1;
    return config;
}

// Turns every counter on at once; where CUPTI refuses that, each on its own, so that one counter
// this platform lacks does not cost the others. Returns "" when at least one is on; `refused`
// names those that are not. CUPTI wants the driver initialised first: it says CUPTI_ERROR_NOT_READY
// before that, and then cudaFree(nullptr) makes the device's context and the call is repeated.
std::string configure_counters(std::string& refused, std::string& note) {
    CUpti_ActivityUnifiedMemoryCounterConfig all[counter_count];
    for (int i = 0; i < counter_count; ++i) all[i] = counter_config(counter_kinds[i].kind);
    CUptiResult result = cupti().ActivityConfigureUnifiedMemoryCounter(all, counter_count);
    if (result == CUPTI_ERROR_NOT_READY) {
        const cudaError_t status = cudaFree(nullptr);
        if (status != cudaSuccess) {
            return std::string(
                       "the device's context could not be made (cudaFree(nullptr) "
                       "returned ") +
                   cudaGetErrorName(status) + ")";
        }
        note =
            "; configured once cudaFree(nullptr) had made the context (CUPTI_ERROR_NOT_READY "
            "before)";
        result = cupti().ActivityConfigureUnifiedMemoryCounter(all, counter_count);
    }
    if (result == CUPTI_SUCCESS) return "";
    const std::string all_refused = result_name(result);
    int on = 0;
    for (int i = 0; i < counter_count; ++i) {
        CUpti_ActivityUnifiedMemoryCounterConfig one = counter_config(counter_kinds[i].kind);
        const CUptiResult r = cupti().ActivityConfigureUnifiedMemoryCounter(&one, 1);
        if (r == CUPTI_SUCCESS) {
            ++on;
        } else {
            refused += (refused.empty() ? "" : ", ") + std::string(counter_kinds[i].name) + " (" +
                       result_name(r) + ")";
        }
    }
    if (on > 0) return "";
    return "CUPTI would not configure the Unified Memory counters (" + all_refused + ")";
}

// Why recording cannot start, or "" once it has: CUPTI loaded, a device, the counters on and
// the activity kind enabled.
std::string start_recording(std::string& setup, std::string& refused) {
    if (!cupti().problem.empty()) return cupti().problem;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);  // initialises the driver
    if (status != cudaSuccess || count == 0) {
        cudaGetLastError();  // leave no error behind for a later CUDA_CHECK_LAUNCH
        return std::string("no usable CUDA device (cudaGetDeviceCount returned ") +
               cudaGetErrorName(status) + ")";
    }
    if (!cupti().callbacks_registered) {
        const CUptiResult r = cupti().ActivityRegisterCallbacks(buffer_requested, buffer_completed);
        if (r != CUPTI_SUCCESS) {
            return "CUPTI would not take the record buffers (cuptiActivityRegisterCallbacks "
                   "returned " +
                   result_name(r) + ")";
        }
        cupti().callbacks_registered = true;
    }
    std::string note;
    std::string problem = configure_counters(refused, note);
    if (!problem.empty()) return problem;
    const CUptiResult r = cupti().ActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    if (r != CUPTI_SUCCESS) {
        const char* injection = std::getenv("CUDA_INJECTION64_PATH");
        return "CUPTI would not record Unified Memory activity (cuptiActivityEnable returned " +
               result_name(r) + ")" +
               (injection != nullptr && *injection != '\0'
                    ? std::string("; a profiler holds CUPTI (CUDA_INJECTION64_PATH=") + injection +
                          ")"
                    : std::string(""));
    }
    uint32_t version = 0;
    cupti().GetVersion(&version);
    setup = format("CUPTI %u from %s", version, cupti().path.c_str()) + note;
    if (!refused.empty()) setup += "; not counted: " + refused;
    return "";
}

#endif  // TUTORIAL_CUPTI

}  // namespace

UmCounters::UmCounters() {
#if TUTORIAL_CUPTI
    if (!why_timing_not_judged().empty()) {
        why_not_ =
            "the Unified Memory counters are not read under compute-sanitizer, which "
            "instruments the program and may hold CUPTI itself";
        return;
    }
    if (recorder_in_use.exchange(true)) {
        why_not_ = "another UmCounters is recording (CUPTI's records are process-wide)";
        return;
    }
    why_not_ = start_recording(setup_, refused_);
    enabled_ = why_not_.empty();
    if (!enabled_) recorder_in_use = false;
    if (enabled_) run_control();
#elif TUTORIAL_CUPTI_NOT_FOUND
    why_not_ = "built without CUPTI: CMake found no cupti.h beside the CUDA Toolkit's headers";
#else
    why_not_ = "built without CUPTI (configured with -DTUTORIAL_CUPTI=OFF)";
#endif
}

UmCounters::~UmCounters() {
#if TUTORIAL_CUPTI
    if (!enabled_) return;
    cupti().ActivityDisable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    cupti().ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    Tally& t = tally();
    {
        std::lock_guard<std::mutex> lock(t.mutex);
        t.stray += t.records;
        late_ += t.records;
        t.records = 0;
        t.traffic = UmTraffic{};
    }
    recorder_in_use = false;
#endif
}

UmTraffic UmCounters::measure(const std::function<void()>& step) {
    start();
    step();
    return stop();
}

void UmCounters::start() {
#if TUTORIAL_CUPTI
    if (!enabled_) return;
    Tally& t = tally();
    // Until the records of what ran before stop coming: a late record of the work just before a
    // step (a warm-up's faults) must not be charged to the step.
    flush_until_settled();
    size_t dropped = 0;
    cupti().ActivityGetNumDroppedRecords(nullptr, 0, &dropped);  // resets the count
    std::lock_guard<std::mutex> lock(t.mutex);
    // Records here came after the last step was counted (or from work between steps).
    t.stray += t.records;
    late_ += t.records;
    t.records = 0;
    t.traffic = UmTraffic{};
#endif
}

UmTraffic UmCounters::stop() {
#if TUTORIAL_CUPTI
    if (enabled_) {
        Tally& t = tally();
        CUDA_CHECK(cudaDeviceSynchronize());
        flush_until_settled();
        size_t dropped = 0;
        cupti().ActivityGetNumDroppedRecords(nullptr, 0, &dropped);
        std::lock_guard<std::mutex> lock(t.mutex);
        UmTraffic traffic = t.traffic;
        traffic.counted = true;
        traffic.dropped_records = dropped;
        t.records = 0;
        t.traffic = UmTraffic{};
        return traffic;
    }
#endif
    // The same order as with the counters on; with no usable device there is nothing to wait for.
    const cudaError_t waited = cudaDeviceSynchronize();
    if (waited != cudaErrorNoDevice && waited != cudaErrorInsufficientDriver) CUDA_CHECK(waited);
    return UmTraffic{};
}

void UmCounters::run_control() {
    // 2 MiB of managed memory, written by the CPU (its pages are made in host memory), then read
    // by a kernel on the current device: every byte must move to the GPU.
    constexpr std::size_t bytes = std::size_t{2} << 20;
    constexpr std::size_t count = bytes / sizeof(std::uint32_t);
    std::uint32_t* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, bytes));
    fill_on_host(data, count, 7);
    const std::uint64_t expected = pattern_sum(count, 7);
    std::uint64_t sum = 0;
    control_ = measure([&] { sum = sum_on_device(data, count); });
    CUDA_CHECK(cudaFree(data));
    late_ = 0;  // the control's own records are not the sections'
    const bool faults_counted = refused_.find("GPU_PAGE_FAULT") == std::string::npos;
    if (sum != expected) {
        control_problem_ = "the counters' positive control read wrong values";
    } else if (control_.htod.total < bytes * 9 / 10) {
        control_problem_ = "the counters' positive control saw " + mib(control_.htod.total) +
                           " MiB move to the GPU of 2.0 MiB that had to (the counters are silent "
                           "here, or this GPU reads host memory in place)";
    } else if (faults_counted && control_.gpu_page_faults == 0) {
        control_problem_ = "the counters' positive control moved 2.0 MiB without a GPU page fault "
                           "counted: fault records are lost here";
    }
}

std::string UmCounters::control_line() const {
    if (!available()) return "The driver's Unified Memory counters: " + why_not_;
    return "Positive control (2 MiB written by the CPU, read by a kernel; it must move): " +
           describe(control_) + (control_problem_.empty() ? "" : ". " + control_problem_);
}

std::uint64_t UmCounters::late_records() const {
#if TUTORIAL_CUPTI
    Tally& t = tally();
    std::lock_guard<std::mutex> lock(t.mutex);
    return late_ + t.records;
#else
    return 0;
#endif
}

std::uint64_t UmCounters::stray_records() const {
#if TUTORIAL_CUPTI
    Tally& t = tally();
    std::lock_guard<std::mutex> lock(t.mutex);
    return t.stray;
#else
    return 0;
#endif
}

std::string um_records_lost(const UmTraffic& t) {
    if (!t.counted) return "";
    if (t.htod.on_fault > 0 && t.gpu_fault_records == 0) {
        return mib(t.htod.on_fault) +
               " MiB moved to the GPU to serve page faults, but no GPU "
               "page fault was recorded: records were lost";
    }
    if (t.dtoh.on_fault > 0 && t.cpu_page_faults == 0) {
        return mib(t.dtoh.on_fault) +
               " MiB moved to the CPU to serve page faults, but no CPU "
               "page fault was recorded: records were lost";
    }
    if (t.dropped_records > 0) {
        return std::to_string(t.dropped_records) + " records dropped for want of buffer space";
    }
    return "";
}

std::string mib(std::uint64_t bytes) {
    return format("%.1f", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

std::vector<Column> um_columns(const std::string& first_header) {
    return {{first_header},
            {"HtoD MiB", Align::right},
            {"DtoH MiB", Align::right},
            {"DtoD MiB", Align::right},
            {"GPU faults", Align::right},
            {"CPU faults", Align::right},
            {"thrash/throttle/remote", Align::right}};
}

std::vector<std::string> um_cells(const std::string& first_cell, const UmTraffic& t) {
    if (!t.counted) return {first_cell, "-", "-", "-", "-", "-", "-"};
    return {first_cell,
            mib(t.htod.total),
            mib(t.dtoh.total),
            mib(t.dtod.total),
            std::to_string(t.gpu_page_faults),
            std::to_string(t.cpu_page_faults),
            format("%llu/%llu/%llu", static_cast<unsigned long long>(t.thrashing),
                   static_cast<unsigned long long>(t.throttling),
                   static_cast<unsigned long long>(t.remote_maps))};
}

std::string describe(const UmTraffic& t) {
    if (!t.counted) return "not counted";
    std::string text = mib(t.htod.total) + " MiB host to device, " + mib(t.dtoh.total) +
                       " MiB device to host, " + std::to_string(t.gpu_page_faults) +
                       " GPU page faults, " + std::to_string(t.cpu_page_faults) +
                       " CPU page faults";
    if (t.dtod.total > 0) text += ", " + mib(t.dtod.total) + " MiB device to device";
    if (t.thrashing > 0) text += ", " + std::to_string(t.thrashing) + " thrashing";
    if (t.throttling > 0) text += ", " + std::to_string(t.throttling) + " throttling";
    if (t.remote_maps > 0) text += ", " + std::to_string(t.remote_maps) + " remote maps";
    if (t.dropped_records > 0) {
        text += ", " + std::to_string(t.dropped_records) + " records dropped (counts too low)";
    }
    return text;
}

std::string why_not_counted(const UmCounters& counters,
                            std::initializer_list<const UmTraffic*> steps,
                            const std::string& hardware,
                            const std::vector<std::string>& also_reads) {
    if (!counters.available()) return counters.why_not();
    // Every counted claim reads bytes each way or faults; the others only where a claim says so.
    std::vector<std::string> reads = {"BYTES_TRANSFER_HTOD", "BYTES_TRANSFER_DTOH",
                                      "GPU_PAGE_FAULT", "CPU_PAGE_FAULT_COUNT"};
    reads.insert(reads.end(), also_reads.begin(), also_reads.end());
    for (const std::string& kind : reads) {
        if (counters.refused().find(kind + " (") != std::string::npos)
            return "CUPTI refused the " + kind + " counter, which this claim reads";
    }
    if (!counters.control_problem().empty()) return counters.control_problem();
    if (!hardware.empty()) return hardware;
    for (const UmTraffic* step : steps) {
        if (std::string lost = um_records_lost(*step); !lost.empty()) return lost;
    }
    return "";
}

}  // namespace tutorial
