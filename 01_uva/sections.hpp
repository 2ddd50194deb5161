// The sections of chapter 01, one source file each.
#pragma once

#include "common/chapter.hpp"

tutorial::Result run_properties(tutorial::Context& ctx);
