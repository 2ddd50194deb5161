// The sections of chapter 05, one source file each.
#pragma once

#include "common/chapter.hpp"

tutorial::Result run_properties(tutorial::Context& ctx);
tutorial::Result run_fault_vs_prefetch(tutorial::Context& ctx);
tutorial::Result run_prefetch_flow(tutorial::Context& ctx);
tutorial::Result run_read_mostly(tutorial::Context& ctx);
tutorial::Result run_preferred_location(tutorial::Context& ctx);
tutorial::Result run_accessed_by(tutorial::Context& ctx);
tutorial::Result run_range_attributes(tutorial::Context& ctx);
tutorial::Result run_discard(tutorial::Context& ctx);
tutorial::Result run_prefetch_batch(tutorial::Context& ctx);
tutorial::Result run_read_mostly_gpus(tutorial::Context& ctx);
tutorial::Result run_accessed_by_peer(tutorial::Context& ctx);
tutorial::Result run_prefetch_between_gpus(tutorial::Context& ctx);

// Child roles (run in a separate process; see common/child.hpp).
int child_advise_malloc(const std::vector<std::string>& args);          // properties
int child_discard_misuse(const std::vector<std::string>& args);         // discard
int child_prefetch_batch_misuse(const std::vector<std::string>& args);  // prefetch_batch
