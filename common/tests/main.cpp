// Unit tests of common/: the same harness the chapters use, turned on itself.
#include "tests.hpp"

int main(int argc, char** argv) {
    using tutorial::Section;
    const tutorial::Chapter chapter{
        "common_tests",
        "Unit tests of the course's shared helpers",
        {
            Section{"parse_size", "sizes with binary suffixes, good and bad", test_parse_size,
                    false},
            Section{"parse_options", "the shared command line", test_parse_options, false},
            Section{"format", "format() and format_bytes()", test_format, false},
            Section{"error_line", "the line CUDA_CHECK prints, and its exit code", test_error_line,
                    false},
            Section{"child_runner", "children that exit, crash, hang and echo", test_child_runner,
                    false},
            Section{"child_channels", "read_line, and a descriptor passed over the socket",
                    test_child_channels, false},
            Section{"median", "median() and HostTimer", test_median, false},
            Section{"event_timer", "EventTimer against a kernel of known duration",
                    test_event_timer},
            Section{"driver_calls", "driver functions looked up through the runtime",
                    test_driver_calls},
        },
        {
            {"exit", child_exit},
            {"abort", child_abort},
            {"segfault", child_segfault},
            {"hang", child_hang},
            {"echo", child_echo},
            {"conversation", child_conversation},
            {"failing_call", child_failing_call},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
