// The sections of chapter 07, one source file each.
#pragma once

#include "common/chapter.hpp"

#include <string>
#include <vector>

tutorial::Result run_properties(tutorial::Context& ctx);
tutorial::Result run_master_workers(tutorial::Context& ctx);
tutorial::Result run_ipc_events(tutorial::Context& ctx);
tutorial::Result run_vmm_fd(tutorial::Context& ctx);
tutorial::Result run_pitfalls(tutorial::Context& ctx);
tutorial::Result run_robustness(tutorial::Context& ctx);
tutorial::Result run_bench(tutorial::Context& ctx);
tutorial::Result run_pool_ipc(tutorial::Context& ctx);
tutorial::Result run_which_memory(tutorial::Context& ctx);
tutorial::Result run_cross_gpu(tutorial::Context& ctx);

// Child roles.
int child_slice_worker(const std::vector<std::string>& args);        // master_workers, robustness
int child_consumer(const std::vector<std::string>& args);            // ipc_events
int child_fd_importer(const std::vector<std::string>& args);         // vmm_fd
int child_ipc_misuse(const std::vector<std::string>& args);          // pitfalls
int child_open_and_peek(const std::vector<std::string>& args);       // pitfalls
int child_bench_ipc(const std::vector<std::string>& args);           // bench
int child_bench_pipe(const std::vector<std::string>& args);          // bench
int child_doomed_master(const std::vector<std::string>& args);       // robustness
int child_stuck_worker(const std::vector<std::string>& args);        // robustness
int child_cross_gpu_worker(const std::vector<std::string>& args);    // cross_gpu
int child_pool_importer(const std::vector<std::string>& args);       // pool_ipc
int child_pool_late_importer(const std::vector<std::string>& args);  // pool_ipc
int child_share_exporter(const std::vector<std::string>& args);      // which_memory
int child_share_worker(const std::vector<std::string>& args);        // which_memory
