// Unit tests of common/: the same harness the chapters use, turned on itself.
#include "tests.hpp"

int main(int argc, char** argv) {
    using tutorial::GiB;
    using tutorial::KiB;
    using tutorial::MiB;
    using tutorial::Section;
    using tutorial::Takes;
    const tutorial::Chapter chapter{
        "common_tests",
        "Unit tests of the course's shared helpers",
        {
            Section{"parse_size",
                    "sizes with binary suffixes, good and bad",
                    {},
                    false,
                    test_parse_size},
            Section{"parse_options", "the shared command line", {}, false, test_parse_options},
            Section{"format", "format() and format_bytes()", {}, false, test_format},
            Section{
                "csv_tables", "a table written by --csv, read back", {}, false, test_csv_tables},
            // Takes options only so that the tests can give it values beyond its limits.
            Section{"section_options", "what a section takes, described and checked",
                    Takes{}.size(4 * KiB, GiB).iters(21).workers(2, 16), false,
                    test_section_options},
            Section{"error_line",
                    "the line CUDA_CHECK prints, and its exit code",
                    {},
                    false,
                    test_error_line},
            Section{"child_runner",
                    "children that exit, crash, hang and echo",
                    {},
                    false,
                    test_child_runner},
            Section{"passed_descriptor",
                    "a descriptor handed to a child",
                    {},
                    false,
                    test_passed_descriptor},
            Section{"child_deadlines",
                    "a child's own read deadline, one deadline for several children, SIGPIPE",
                    {},
                    false,
                    test_child_deadlines},
            Section{"worker_process",
                    "common/process: a worker, its channel, a descriptor, its end and its death",
                    {},
                    false,
                    test_worker_process},
            Section{"median", "median() and HostTimer", {}, false, test_median},
            Section{"event_timer",
                    "EventTimer against a kernel of known duration",
                    {},
                    true,
                    test_event_timer},
            Section{"driver_calls",
                    "driver functions looked up through the runtime",
                    {},
                    true,
                    test_driver_calls},
            // Its limit is far above any GPU's memory, so that the tests reach the device's own.
            Section{"device_memory", "free_device_memory around a cudaMalloc of --size",
                    Takes{}.size(MiB, std::size_t{64} << 40), true, test_device_memory},
            Section{"pattern_kernels",
                    "fill, mismatch count and sum kernels against the formula",
                    {},
                    true,
                    test_pattern_kernels},
        },
        {
            {"exit", child_exit},
            {"abort", child_abort},
            {"segfault", child_segfault},
            {"hang", child_hang},
            {"echo", child_echo},
            {"write_passed", child_write_passed},
            {"failing_call", child_failing_call},
            {"read_line", child_read_line},
            {"answer_worker", child_answer_worker},
            {"say_and_exit", child_say_and_exit},
            {"silent_worker", child_silent_worker},
            {"ready_worker", child_ready_worker},
            {"middle_worker", child_middle_worker},
        }};
    return tutorial::run_chapter(chapter, argc, argv);
}
