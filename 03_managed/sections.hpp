// The sections of chapter 03, one source file each.
#pragma once

#include "common/chapter.hpp"

#include <string>
#include <vector>

tutorial::Result run_aplusb(tutorial::Context& ctx);
tutorial::Result run_printme(tutorial::Context& ctx);
tutorial::Result run_managed_globals(tutorial::Context& ctx);
tutorial::Result run_properties(tutorial::Context& ctx);
tutorial::Result run_first_touch(tutorial::Context& ctx);
tutorial::Result run_concurrency(tutorial::Context& ctx);
tutorial::Result run_thrash(tutorial::Context& ctx);
tutorial::Result run_memcpy_memset(tutorial::Context& ctx);
tutorial::Result run_system_allocator(tutorial::Context& ctx);
tutorial::Result run_fork(tutorial::Context& ctx);

// Child roles.
int child_touch_managed_variable(const std::vector<std::string>& args);  // managed_globals
int child_touch_during_kernel(const std::vector<std::string>& args);     // concurrency
int child_managed_copies(const std::vector<std::string>& args);          // memcpy_memset
int child_system_memory(const std::vector<std::string>& args);           // system_allocator
int child_fork_after_init(const std::vector<std::string>& args);         // fork
int child_fork_before_init(const std::vector<std::string>& args);        // fork
int child_use_cuda(const std::vector<std::string>& args);                // fork
