// The sections of chapter 04, one source file each.
#pragma once

#include "common/chapter.hpp"

#include <string>
#include <vector>

tutorial::Result run_properties(tutorial::Context& ctx);
tutorial::Result run_attach_host(tutorial::Context& ctx);
tutorial::Result run_attach_wrong_variable(tutorial::Context& ctx);
tutorial::Result run_threads(tutorial::Context& ctx);
tutorial::Result run_modular(tutorial::Context& ctx);

// Child roles.
int child_wrong_variable(const std::vector<std::string>& args);    // attach_wrong_variable
int child_attach_rules(const std::vector<std::string>& args);      // attach_wrong_variable
int child_construct_global(const std::vector<std::string>& args);  // modular
