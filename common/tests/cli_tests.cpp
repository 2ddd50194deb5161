#include "common/harness/cli.hpp"
#include "common/harness/report.hpp"
#include "tests.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using tutorial::Context;
using tutorial::Result;
using tutorial::Table;

Result test_parse_size(Context& ctx) {
    struct Good {
        const char* text;
        std::size_t bytes;
    };
    const Good good[] = {
        {"1", 1},
        {"4096", 4096},
        {"7B", 7},
        {"4KiB", 4096},
        {"256MiB", 256ull << 20},
        {"256mib", 256ull << 20},
        {"2GiB", 2ull << 30},
        {"1TiB", 1ull << 40},
        {"16777215TiB", 16777215ull << 40},
    };
    struct Bad {
        const char* text;
        const char* message;  // must appear in the error
    };
    const Bad bad[] = {
        {"", "invalid size ''"},
        {"0", "must be greater than zero"},
        {"0MiB", "must be greater than zero"},
        {"-4KiB", "is negative"},
        {"1.5GiB", "invalid size '1.5GiB'"},
        {"12XB", "invalid size '12XB'"},
        {"MiB", "invalid size 'MiB'"},
        {"256MB", "ambiguous size '256MB'"},
        {"4k", "ambiguous size '4k'"},
        {"16777216TiB", "too large"},
        {"99999999999999999999", "too large"},
        {"4 KiB", "invalid size '4 KiB'"},
    };

    Table table({{"input"}, {"expected"}, {"got"}, {"ok"}});
    int wrong = 0;
    for (const Good& g : good) {
        std::size_t bytes = 0;
        const std::string problem = tutorial::parse_size(g.text, bytes);
        const bool ok = problem.empty() && bytes == g.bytes;
        wrong += ok ? 0 : 1;
        table.add_row({g.text, std::to_string(g.bytes),
                       problem.empty() ? std::to_string(bytes) : problem, ok ? "yes" : "NO"});
    }
    for (const Bad& b : bad) {
        std::size_t bytes = 0;
        const std::string problem = tutorial::parse_size(b.text, bytes);
        const bool ok = problem.find(b.message) != std::string::npos;
        wrong += ok ? 0 : 1;
        table.add_row({std::string("'") + b.text + "'", b.message,
                       problem.empty() ? "accepted" : problem, ok ? "yes" : "NO"});
    }
    table.print();
    const int cases = static_cast<int>(std::size(good) + std::size(bad));
    return ctx.verdict(wrong == 0, tutorial::format("%d of %d size strings parsed as expected",
                                                    cases - wrong, cases));
}

Result test_parse_options(Context& ctx) {
    struct Case {
        std::vector<const char*> argv;
        const char* problem;  // "" when the line is valid
    };
    const Case cases[] = {
        {{"x"}, ""},
        {{"x", "a", "b", "--device", "1", "--size=64KiB", "--iters", "5", "--quick"}, ""},
        {{"x", "--list"}, ""},
        {{"x", "-h"}, ""},
        {{"x", "--size"}, "option --size needs a value"},
        {{"x", "--quick=yes"}, "option '--quick' takes no value"},
        {{"x", "--iters", "0"}, "--iters: number '0' is out of range"},
        {{"x", "--iters", "5x"}, "--iters: invalid number '5x'"},
        {{"x", "--workers", "0"}, "--workers: number '0' is out of range"},
        {{"x", "--workers=4"}, ""},
        {{"x", "--device", "-1"}, "--device: number '-1' is out of range"},
        {{"x", "--device", "99999999999999999999"}, "out of range"},
        {{"x", "--bogus"}, "unknown option '--bogus'"},
        // Control characters are shown as codes, never sent to the terminal.
        {{"x", "--bogus\x1b[2J"}, "unknown option '--bogus\\x1b[2J'"},
        {{"x", "--iters", "1\n2"}, "--iters: invalid number '1\\x0a2'"},
        {{"x", "-"}, ""},  // a lone "-" is a (bad) section name, left to run_chapter to reject
    };
    int wrong = 0;
    for (const Case& c : cases) {
        tutorial::Options options;
        const std::string problem =
            tutorial::parse_options(static_cast<int>(c.argv.size()), c.argv.data(), options);
        const bool ok = std::string(c.problem).empty()
                            ? problem.empty()
                            : problem.find(c.problem) != std::string::npos;
        if (!ok) {
            ++wrong;
            std::printf("  unexpected result for argument %zu: '%s'\n", c.argv.size() - 1,
                        problem.c_str());
        }
    }
    // The full valid line must have landed in the fields.
    const char* full[] = {"x",       "a", "b",      "--device", "1", "--size=64KiB",
                          "--iters", "5", "--quick"};
    tutorial::Options options;
    tutorial::parse_options(9, full, options);
    const bool fields = options.sections == std::vector<std::string>{"a", "b"} &&
                        options.device == 1 && options.size == 65536 && options.iters == 5 &&
                        options.quick && !options.list;
    std::printf("%zu command lines checked; fields of the full line %s\n", std::size(cases),
                fields ? "as expected" : "WRONG");
    return ctx.verdict(
        wrong == 0 && fields,
        tutorial::format("%d of %zu command lines gave the expected result, and the "
                         "parsed fields match",
                         static_cast<int>(std::size(cases)) - wrong, std::size(cases)));
}

Result test_format(Context& ctx) {
    struct Case {
        std::string got;
        std::string expected;
    };
    const Case cases[] = {
        {tutorial::format_bytes(100), "100 B"},
        {tutorial::format_bytes(4096), "4 KiB"},
        {tutorial::format_bytes(256ull << 20), "256 MiB"},
        {tutorial::format_bytes(3ull << 29), "1.5 GiB"},
        {tutorial::format("%d|%.2f|%s", 7, 2.5, "x"), "7|2.50|x"},
        {tutorial::format("%s", std::string(300, 'a').c_str()), std::string(300, 'a')},
    };
    Table table({{"got"}, {"expected"}});
    int wrong = 0;
    for (const Case& c : cases) {
        wrong += c.got == c.expected ? 0 : 1;
        table.add_row({c.got.substr(0, 20), c.expected.substr(0, 20)});
    }
    table.print();
    return ctx.verdict(
        wrong == 0, tutorial::format("%d of %zu formatted strings match",
                                     static_cast<int>(std::size(cases)) - wrong, std::size(cases)));
}

Result test_section_options(Context& ctx) {
    using tutorial::GiB;
    using tutorial::KiB;
    using tutorial::Takes;
    struct Described {
        Takes takes;
        const char* expected;
    };
    const Described described[] = {
        {Takes{}, ""},
        {Takes{}.size(4 * KiB, 4 * GiB).iters(),
         "--size (a multiple of 4 KiB, at most 4 GiB), --iters (1 to 100)"},
        {Takes{}.size(1, 4 * GiB), "--size (at most 4 GiB)"},
        {Takes{}.iters(21), "--iters (21 to 100)"},
        {Takes{}.iters(21, 10000), "--iters (21 to 10000)"},
        {Takes{}.workers(2, 16), "--workers (2 to 16)"},
    };
    int wrong = 0;
    for (const Described& d : described) {
        const std::string got = tutorial::describe(d.takes);
        if (got != d.expected) {
            ++wrong;
            std::printf("  describe: expected '%s', got '%s'\n", d.expected, got.c_str());
        }
    }
    struct Limited {
        std::size_t size;
        int iters;
        int workers;
        const char* problem;  // "" when the values suit the section
    };
    const Takes takes = Takes{}.size(4 * KiB, 4 * GiB).iters(21).workers(2, 16);
    const Limited limited[] = {
        {0, 0, 0, ""},
        {8 * KiB, 21, 16, ""},
        {5000, 0, 0, "--size 4.9 KiB (5000 bytes) is not a multiple of 4 KiB"},
        {4097, 0, 0, "--size 4.0 KiB (4097 bytes) is not a multiple of 4 KiB"},
        {8 * GiB, 0, 0, "--size 8 GiB is more than 4 GiB"},
        {0, 5, 0, "--iters 5 is less than 21"},
        {0, 101, 0, "--iters 101 is more than 100"},
        {0, 0, 1, "--workers 1 is less than 2"},
        {0, 0, 17, "--workers 17 is more than 16"},
    };
    for (const Limited& l : limited) {
        tutorial::Options options;
        options.size = l.size;
        options.iters = l.iters;
        options.workers = l.workers;
        const std::string got = tutorial::check_limits(options, takes);
        if (got != l.problem) {
            ++wrong;
            std::printf("  check_limits: expected '%s', got '%s'\n", l.problem, got.c_str());
        }
    }
    // A section that does not take an option has no limits on it (run_chapter refuses the option
    // when no section to be run takes it).
    tutorial::Options huge;
    huge.size = 1;
    huge.iters = 1;
    huge.workers = 1000;
    wrong += tutorial::check_limits(huge, Takes{}).empty() ? 0 : 1;
    const int cases = static_cast<int>(std::size(described) + std::size(limited)) + 1;
    std::printf("%d descriptions and limit checks compared\n", cases);
    return ctx.verdict(wrong == 0, tutorial::format("%d of %d descriptions and limit checks gave "
                                                    "the expected text",
                                                    cases - wrong, cases));
}

// Run with --csv DIR: prints a table whose cells need quoting, then reads back the file that
// Table::print wrote and compares it line by line with what RFC 4180 says it must hold.
Result test_csv_tables(Context& ctx) {
    if (ctx.options.csv_dir.empty()) return ctx.skip("run it with --csv DIR");
    Table table({{"memory"}, {"GB/s", tutorial::Align::right}, {"note"}});
    table.named("fake");
    table.add_row({"pinned", "54.9", "plain"});
    table.add_row({"pageable, 4 KiB", "12.0", "say \"hi\""});
    table.add_row({"two\nlines", "", "last"});
    const std::string path = ctx.options.csv_dir + "/common_tests_csv_tables_fake.csv";
    std::remove(path.c_str());  // a file left by an earlier run must not pass for this one's
    table.print();
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    const std::string got = text.str();
    const std::string comment_start = "# no GPU used; ";
    const std::string expected_rows =
        "memory,GB/s,note\n"
        "pinned,54.9,plain\n"
        "\"pageable, 4 KiB\",12.0,\"say \"\"hi\"\"\"\n"
        "\"two\nlines\",,last\n";
    const std::size_t comment_end = got.find('\n');
    const std::string comment = got.substr(0, comment_end);
    const std::string rows = comment_end == std::string::npos ? "" : got.substr(comment_end + 1);
    const bool comment_ok = comment.rfind(comment_start, 0) == 0 &&
                            comment.find("; command: ") != std::string::npos &&
                            comment.find("--csv") != std::string::npos;
    std::printf("%s:\n%s", path.c_str(), got.c_str());
    return ctx.verdict(comment_ok && rows == expected_rows,
                       comment_ok
                           ? (rows == expected_rows ? "the comment and every row as expected"
                                                    : "the rows differ from RFC 4180 quoting")
                           : "the first line is not the expected comment");
}
