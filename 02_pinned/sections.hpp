// The sections of chapter 02, one source file each.
#pragma once

#include "common/chapter.hpp"

#include <string>
#include <vector>

tutorial::Result run_properties(tutorial::Context& ctx);
tutorial::Result run_basics(tutorial::Context& ctx);
tutorial::Result run_context(tutorial::Context& ctx);
tutorial::Result run_error_checks(tutorial::Context& ctx);
tutorial::Result run_bandwidth(tutorial::Context& ctx);
tutorial::Result run_flags(tutorial::Context& ctx);
tutorial::Result run_write_combined(tutorial::Context& ctx);
tutorial::Result run_async(tutorial::Context& ctx);
tutorial::Result run_alloc_cost(tutorial::Context& ctx);
tutorial::Result run_batch_copies(tutorial::Context& ctx);
tutorial::Result run_pinning_at_scale(tutorial::Context& ctx);
tutorial::Result run_misuse(tutorial::Context& ctx);

// Child roles of `context`, `error_checks` and `misuse`.
int child_context_steps(const std::vector<std::string>& args);
int child_context_without_set_device(const std::vector<std::string>& args);
int child_tutorial_program(const std::vector<std::string>& args);
int child_mismatched_calls(const std::vector<std::string>& args);
int child_free_pinned(const std::vector<std::string>& args);
int child_pin_under_memlock(const std::vector<std::string>& args);
int child_write_read_only(const std::vector<std::string>& args);
int child_batch_misuse(const std::vector<std::string>& args);  // batch_copies
