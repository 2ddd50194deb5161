// The sections of chapter 01, one source file each, and the child roles they start.
#pragma once

#include "common/chapter.hpp"

#include <string>
#include <vector>

tutorial::Result run_attributes(tutorial::Context& ctx);
tutorial::Result run_memcpy_default(tutorial::Context& ctx);
tutorial::Result run_host_pointer_in_kernel(tutorial::Context& ctx);
tutorial::Result run_threads(tutorial::Context& ctx);
tutorial::Result run_other_process(tutorial::Context& ctx);
tutorial::Result run_peer_access(tutorial::Context& ctx);
tutorial::Result run_peer_bandwidth(tutorial::Context& ctx);
tutorial::Result run_portable_pinned(tutorial::Context& ctx);

int child_wrong_kind(const std::vector<std::string>& args);
int child_use_foreign_pointer(const std::vector<std::string>& args);
int child_peer_refusals(const std::vector<std::string>& args);        // peer_access
int child_peer_read_too_early(const std::vector<std::string>& args);  // peer_access
