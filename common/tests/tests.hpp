// Sections of the common_tests program (each file holds a few).
#pragma once

#include "common/harness/chapter.hpp"

#include <string>
#include <vector>

tutorial::Result test_parse_size(tutorial::Context& ctx);
tutorial::Result test_parse_options(tutorial::Context& ctx);
tutorial::Result test_format(tutorial::Context& ctx);
tutorial::Result test_csv_tables(tutorial::Context& ctx);
tutorial::Result test_section_options(tutorial::Context& ctx);
tutorial::Result test_error_line(tutorial::Context& ctx);
tutorial::Result test_child_runner(tutorial::Context& ctx);
tutorial::Result test_passed_descriptor(tutorial::Context& ctx);
tutorial::Result test_child_deadlines(tutorial::Context& ctx);
tutorial::Result test_worker_process(tutorial::Context& ctx);
tutorial::Result test_median(tutorial::Context& ctx);
tutorial::Result test_event_timer(tutorial::Context& ctx);
tutorial::Result test_driver_calls(tutorial::Context& ctx);
tutorial::Result test_device_memory(tutorial::Context& ctx);
tutorial::Result test_pattern_kernels(tutorial::Context& ctx);

// Child roles the tests start.
int child_exit(const std::vector<std::string>& args);
int child_abort(const std::vector<std::string>& args);
int child_segfault(const std::vector<std::string>& args);
int child_hang(const std::vector<std::string>& args);
int child_echo(const std::vector<std::string>& args);
int child_write_passed(const std::vector<std::string>& args);
int child_failing_call(const std::vector<std::string>& args);
int child_read_line(const std::vector<std::string>& args);
int child_answer_worker(const std::vector<std::string>& args);
int child_say_and_exit(const std::vector<std::string>& args);
int child_silent_worker(const std::vector<std::string>& args);
int child_ready_worker(const std::vector<std::string>& args);
int child_middle_worker(const std::vector<std::string>& args);
