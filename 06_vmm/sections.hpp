// The sections of chapter 06, one source file each.
#pragma once

#include "common/chapter.hpp"

#include <string>
#include <vector>

tutorial::Result run_support(tutorial::Context& ctx);
tutorial::Result run_basics(tutorial::Context& ctx);
tutorial::Result run_growable(tutorial::Context& ctx);
tutorial::Result run_aliasing(tutorial::Context& ctx);
tutorial::Result run_access_control(tutorial::Context& ctx);
tutorial::Result run_granularity_errors(tutorial::Context& ctx);
tutorial::Result run_remapping(tutorial::Context& ctx);
tutorial::Result run_compression(tutorial::Context& ctx);
tutorial::Result run_peer_access_control(tutorial::Context& ctx);
tutorial::Result run_striped(tutorial::Context& ctx);
tutorial::Result run_stream_ordered(tutorial::Context& ctx);
tutorial::Result run_pool_threshold(tutorial::Context& ctx);
tutorial::Result run_pools(tutorial::Context& ctx);
tutorial::Result run_graph_memory(tutorial::Context& ctx);
tutorial::Result run_pool_access(tutorial::Context& ctx);

// Child roles.
int child_use_after_release(const std::vector<std::string>& args);  // basics
int child_no_access(const std::vector<std::string>& args);         // access_control
int child_read_only(const std::vector<std::string>& args);         // access_control
int child_misaligned_calls(const std::vector<std::string>& args);  // granularity_errors
int child_mapping_misuse(const std::vector<std::string>& args);    // remapping
int child_peer_vmm_grant(const std::vector<std::string>& args);    // peer_access_control
int child_pool_limit(const std::vector<std::string>& args);        // pools
int child_graph_memory_misuse(const std::vector<std::string>& args);  // graph_memory
int child_pool_peer_read(const std::vector<std::string>& args);    // pool_access
