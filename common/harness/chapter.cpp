#include "common/harness/chapter.hpp"

#include "common/check.hpp"
#include "common/device.hpp"
#include "common/harness/child.hpp"
#include "common/harness/report.hpp"
#include "common/text.hpp"

#include <cuda_runtime.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>

namespace tutorial {

Context::Context(const char* chapter, const char* section, const Options& options_, int device_)
    : options(options_), device(device_), chapter_(chapter), section_(section) {}

std::size_t Context::size_or(std::size_t default_bytes) const {
    return options.size != 0 ? options.size : default_bytes;
}

int Context::iters_or(int default_iters) const {
    return options.iters != 0 ? options.iters : default_iters;
}

int Context::workers_or(int default_workers) const {
    return options.workers != 0 ? options.workers : default_workers;
}

namespace {

// TUTORIAL_CLAIM_LOG=<file>: each claim's outcome, one line each, "<chapter>/<section> <id>
// <outcome>", for the tests (run_test.cmake), which name claims by their identifiers rather than
// by their sentences. Nothing is written without the variable.
void log_claim(const char* chapter, const char* section, const Claim& claim,
               ClaimOutcome outcome) {
    const char* path = std::getenv("TUTORIAL_CLAIM_LOG");
    if (path == nullptr || *path == '\0') return;
    const char* word = outcome == ClaimOutcome::held         ? "held"
                       : outcome == ClaimOutcome::not_held   ? "not_held"
                       : outcome == ClaimOutcome::not_judged ? "not_judged"
                       : claim.measured >= claim.threshold   ? "observed"
                                                             : "observed_otherwise";
    std::ofstream log(path, std::ios::app);
    log << chapter << '/' << section << ' ' << (claim.id.empty() ? "-" : claim.id) << ' ' << word
        << '\n';
}

}  // namespace

bool Context::claim(const Claim& claim, const std::string& why_not_judged) {
    const ClaimOutcome outcome = judge_claim(claim, why_not_judged);
    log_claim(chapter_, section_, claim, outcome);
    const bool not_held = outcome == ClaimOutcome::not_held;
    claims_not_held_ += not_held ? 1 : 0;
    return !not_held;
}

Result Context::verdict(bool ok, const std::string& what) {
    ok = ok && claims_not_held_ == 0;
    std::printf("%s %s/%s: %s%s\n", ok ? "PASS" : "FAIL", chapter_, section_, what.c_str(),
                claims_not_held_ == 0 ? ""
                                      : format("; %d claim%s not held", claims_not_held_,
                                               claims_not_held_ == 1 ? "" : "s")
                                            .c_str());
    ++verdicts_;
    result_ = ok ? Result::pass : Result::fail;
    return result_;
}

Result Context::skip(const std::string& reason) {
    // A section that found a claim false cannot be skipped: what it judged stands.
    if (claims_not_held_ > 0) return verdict(false, "not finished: " + reason);
    std::printf("SKIP: %s/%s: %s\n", chapter_, section_, reason.c_str());
    ++verdicts_;
    result_ = Result::skip;
    return result_;
}

namespace {

void print_help(const Chapter& chapter) {
    std::printf("Usage: %s [SECTION...] [OPTIONS]\n", chapter.name);
    std::printf("%s\n\nSections (all of them, in this order, when none is named):\n",
                chapter.title);
    for (const Section& section : chapter.sections) {
        std::printf("  %-24s %s\n", section.name, section.summary);
        const std::string takes = describe(section.takes);
        if (!takes.empty()) std::printf("  %-24s takes %s\n", "", takes.c_str());
    }
    // Only the options some section of this chapter takes.
    bool size = false, iters = false, workers = false;
    for (const Section& section : chapter.sections) {
        size |= section.takes.takes_size;
        iters |= section.takes.takes_iters;
        workers |= section.takes.takes_workers;
    }
    std::printf(
        "\nOptions:\n"
        "  --list                   list the sections, one per line, and exit\n"
        "  --limits                 each section's option limits in plain numbers (for scripts)\n"
        "  --device N               run on CUDA device N (default 0)\n");
    if (size) {
        std::printf(
            "  --size SIZE              buffer size, with a binary suffix: 4KiB, 256MiB, 1GiB\n"
            "                           (default: each section's own)\n");
    }
    if (iters) std::printf("  --iters N                timed repetitions (per section)\n");
    if (workers) std::printf("  --workers N              worker processes (per section)\n");
    std::printf(
        "  --quick                  small sizes and few repetitions, as the tests run it\n"
        "  --csv DIR                also write every table to DIR as a CSV file (DIR is made\n"
        "                           with the first table; its parent must exist)\n"
        "  --pause                  wait for Enter after each section (at a terminal)\n"
        "  --help                   show this help and exit\n"
        "%s",
        size || iters || workers
            ? "--size, --iters and --workers go only to the sections listed above as taking them,\n"
              "and are refused when none of the sections to be run does.\n"
            : "");
    std::printf(
        "\nExit codes: 0 every verdict PASS, 1 a verdict FAIL or a CUDA error, 2 bad command "
        "line,\n"
        "77 skipped (no usable CUDA device, or a capability the sections need is missing).\n");
}

const Section* find_section(const Chapter& chapter, const std::string& name) {
    for (const Section& section : chapter.sections) {
        if (name == section.name) return &section;
    }
    return nullptr;
}

// "unknown section 'bandwith' (did you mean 'bandwidth'? --list shows them all)": the closest
// section name, when it is close enough to be a slip of the keyboard.
std::string unknown_section(const Chapter& chapter, const std::string& name) {
    std::vector<std::string> names;
    for (const Section& section : chapter.sections) names.emplace_back(section.name);
    const std::string closest = closest_name(name, names);
    return "unknown section " + quoted_argument(name) +
           (closest.empty() ? " (see --list)"
                            : " (did you mean '" + closest + "'? --list shows them all)");
}

// The sections a command line selects: those it names, in its order, or all of them.
std::vector<const Section*> select_sections(const Chapter& chapter, const Options& options) {
    std::vector<const Section*> selected;
    for (const std::string& name : options.sections)
        selected.push_back(find_section(chapter, name));
    if (selected.empty()) {
        for (const Section& section : chapter.sections) selected.push_back(&section);
    }
    return selected;
}

// The options a section may take, in one table: its flag, whether a section takes it, its value
// in the options (0: each section's own default), and what a section runs with instead.
struct SectionOption {
    const char* flag;
    const char* default_words;
    bool (*taken_by)(const Takes&);
    std::size_t (*value)(const Options&);
    void (*reset)(Options&);
};

const SectionOption section_options[] = {
    {"--size", "its default size", [](const Takes& t) { return t.takes_size; },
     [](const Options& o) { return o.size; }, [](Options& o) { o.size = 0; }},
    {"--iters", "its default number of repetitions", [](const Takes& t) { return t.takes_iters; },
     [](const Options& o) { return static_cast<std::size_t>(o.iters); },
     [](Options& o) { o.iters = 0; }},
    {"--workers", "its default number of workers", [](const Takes& t) { return t.takes_workers; },
     [](const Options& o) { return static_cast<std::size_t>(o.workers); },
     [](Options& o) { o.workers = 0; }},
};

// The options with only `option`'s value kept, the others at "each section's default".
Options only(const Options& options, const SectionOption& option) {
    Options one = options;
    for (const SectionOption& other : section_options) {
        if (&other != &option) other.reset(one);
    }
    return one;
}

// What each selected section runs with: the command line's options, except, when the whole
// chapter runs (no section named), a value outside a section's limits, which that section leaves
// at its own default, saying so in its note.
struct Plan {
    const Section* section;
    Options options;
    std::string note;  // "" or "<section>: --size 1 GiB is more than 256 MiB; it runs at ..."
};

// The options given on the command line among --size, --iters and --workers.
std::vector<const SectionOption*> given_options(const Options& options) {
    std::vector<const SectionOption*> given;
    for (const SectionOption& option : section_options) {
        if (option.value(options) != 0) given.push_back(&option);
    }
    return given;
}

// An option given on the command line that none of the selected sections uses: the one-line
// problem, or "".
std::string check_unused_options(const Chapter& chapter, const Options& options,
                                 const std::vector<Plan>& plans) {
    for (const SectionOption* option : given_options(options)) {
        bool used = false;
        for (const Plan& plan : plans) used = used || option->taken_by(plan.section->takes);
        if (used) continue;
        std::string takers;
        for (const Section& section : chapter.sections) {
            if (option->taken_by(section.takes))
                takers += (takers.empty() ? "" : ", ") + std::string(section.name);
        }
        return std::string(option->flag) + ": " +
               (takers.empty()
                    ? "no section of this chapter takes it"
                    : "none of the sections to be run takes it (sections that do: " + takers + ")");
    }
    return "";
}

// Section by section, the problem with an option's value (check_limits, or a --size the memory
// cannot hold: `problem_of`). Sections named on the command line: the first problem, which
// refuses the command line. The whole chapter (none named): a section with a problem runs at its
// own default for that option, its plan's note says so, and only a value that no section taking
// the option can use is refused.
template <typename ProblemOf>
std::string fit_option(const Options& options, const SectionOption& option,
                       std::vector<Plan>& plans, ProblemOf problem_of) {
    std::string first_problem;
    int takers = 0;
    int fitting = 0;
    for (Plan& plan : plans) {
        // A section already left at its default for this option has nothing more to check.
        if (!option.taken_by(plan.section->takes) || option.value(plan.options) == 0) continue;
        ++takers;
        const std::string problem = problem_of(plan);
        if (problem.empty()) {
            ++fitting;
            continue;
        }
        const std::string line = std::string(plan.section->name) + ": " + problem;
        if (!options.sections.empty()) return line;
        if (first_problem.empty()) first_problem = line;
        option.reset(plan.options);
        plan.note += (plan.note.empty() ? "" : "\n") + line + "; it runs at " +
                     option.default_words + " instead";
    }
    return takers > 0 && fitting == 0 ? first_problem : "";
}

// The options' values against each selected section's limits (see fit_option).
std::string check_section_options(const Options& options, std::vector<Plan>& plans) {
    for (const SectionOption* option : given_options(options)) {
        const std::string problem = fit_option(options, *option, plans, [&](const Plan& plan) {
            return check_limits(only(options, *option), plan.section->takes);
        });
        if (!problem.empty()) return problem;
    }
    return "";
}

int run_child_role(const Chapter& chapter, int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "%s: %s needs a role\n", chapter.name, child_flag);
        return exit_usage;
    }
    for (const ChildRole& role : chapter.child_roles) {
        if (std::strcmp(role.name, argv[2]) == 0) {
            return role.run(std::vector<std::string>(argv + 3, argv + argc));
        }
    }
    std::fprintf(stderr, "%s: unknown child role %s\n", chapter.name,
                 quoted_argument(argv[2]).c_str());
    return exit_usage;
}

// The first line of each CSV file: what ran, where, when.
std::string csv_comment(const std::string& device, int argc, char** argv) {
    char date[32] = "";
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    std::string command;
    for (int i = 0; i < argc; ++i) command += (i > 0 ? " " : "") + std::string(argv[i]);
    return device + "; " + date + "; command: " + command;
}

// --pause: waits for Enter between sections. Only at a terminal: a pipe or a file on standard
// input (CTest, a script) would either block the run or feed it keystrokes nobody typed.
void pause_after(const char* section) {
    std::printf("\n[--pause] %s is done. Press Enter for the next section.", section);
    std::fflush(stdout);
    std::string line;
    std::getline(std::cin, line);
}

// Makes options.device current and prints what it is. Returns exit_usage for a device number or
// size this machine cannot satisfy; otherwise 0, with `device` set to -1 and `why_not` explaining
// when there is no usable device (the sections that need one will then skip). `description`: the
// device, driver and runtime in one line, for the CSV files.
int select_device(const char* chapter, const Options& options, int& device, std::string& why_not,
                  std::string& description) {
    device = -1;
    why_not = why_no_usable_device();
    if (!why_not.empty()) return 0;
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    if (options.device >= count) {
        std::fprintf(stderr,
                     "%s: --device %d: this machine has %d CUDA device%s, numbered from 0\n",
                     chapter, options.device, count, count == 1 ? "" : "s");
        return exit_usage;
    }
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, options.device));
    if (options.size > prop.totalGlobalMem) {
        std::fprintf(stderr, "%s: --size %s is larger than the %s of memory on device %d\n",
                     chapter, format_bytes(options.size).c_str(),
                     format_bytes(prop.totalGlobalMem).c_str(), options.device);
        return exit_usage;
    }
    int driver = 0;
    int runtime = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    std::printf(
        "Device %d: %s, compute capability %d.%d, %d SMs, %s; CUDA driver %d.%d, runtime %d.%d\n",
        options.device, prop.name, prop.major, prop.minor, prop.multiProcessorCount,
        format_bytes(prop.totalGlobalMem).c_str(), driver / 1000, driver % 1000 / 10,
        runtime / 1000, runtime % 1000 / 10);
    description = format(
        "device %d %s (compute capability %d.%d); driver %s (CUDA %d.%d); "
        "runtime %d.%d",
        options.device, prop.name, prop.major, prop.minor, kernel_module_version().c_str(),
        driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    if (prop.major * 10 + prop.minor < 75) {
        why_not = "device " + std::to_string(options.device) + " has compute capability " +
                  std::to_string(prop.major) + "." + std::to_string(prop.minor) +
                  "; this course needs 7.5 or newer";
        return 0;
    }
    CUDA_CHECK(cudaSetDevice(options.device));
    device = options.device;
    return 0;
}

// What the kernel says the host can still give without swapping (MemAvailable), or 0 if unknown.
std::size_t available_host_memory() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::size_t kib = 0;
    while (meminfo >> key >> kib) {
        if (key == "MemAvailable:") return kib * 1024;
        meminfo.ignore(64, '\n');
    }
    return 0;
}

// A --size the selected sections cannot hold at once (Takes::holds) in the memory that is free
// now: the problem, in one line, or "" (fit_option: the whole chapter runs such a section at its
// default size). Checked once the device is chosen, before any section.
std::string check_memory(const Options& options, std::vector<Plan>& plans) {
    const std::size_t device_free = free_device_memory();
    const std::size_t host_free = available_host_memory();
    return fit_option(options, section_options[0], plans, [&](const Plan& plan) -> std::string {
        const Takes& t = plan.section->takes;
        const std::size_t size = plan.options.size;
        const auto problem = [&](int buffers, std::size_t free, const char* where) {
            return "--size " + format_bytes(size) + " means " + std::to_string(buffers) +
                   " buffer(s) of it in " + where + " memory at once, and only " +
                   format_bytes(free) + " is free";
        };
        if (t.device_buffers > 0 && t.device_buffers * size > device_free) {
            return problem(t.device_buffers, device_free, "device");
        }
        if (t.host_buffers > 0 && host_free > 0 && t.host_buffers * size > host_free) {
            return problem(t.host_buffers, host_free, "host");
        }
        return "";
    });
}

// The planned sections this run can start. Without a usable device, those that need one are
// skipped all at once: one SKIP line with the reason, one with their names (not one per section:
// a tour of the course on a machine without a GPU would repeat the same reason 50 times).
std::vector<const Plan*> sections_to_run(const Chapter& chapter, const std::vector<Plan>& plans,
                                         int device, const std::string& no_device, int& skipped) {
    std::vector<const Plan*> runnable;
    std::string names;
    for (const Plan& plan : plans) {
        if (plan.section->needs_device && device < 0) {
            names += (names.empty() ? "" : ", ") + std::string(plan.section->name);
            ++skipped;
        } else {
            runnable.push_back(&plan);
        }
    }
    if (skipped > 0) {
        std::printf("SKIP: %s: %s\n      %d section%s not run: %s\n", chapter.name,
                    no_device.c_str(), skipped, skipped == 1 ? "" : "s", names.c_str());
        if (chapter.exercise_file != nullptr) {
            std::printf("      the exercise to work on meanwhile: %s (its TODOs say what to "
                        "write)\n",
                        chapter.exercise_file);
        }
    }
    return runnable;
}

// The command line's problem, if any, before any CUDA call: parsing, section names, the options'
// values against the sections' limits (which may leave some sections of a whole-chapter run at
// their defaults: `plans`), and the --csv folder.
std::string check_command_line(const Chapter& chapter, int argc, char** argv, Options& options,
                               std::vector<Plan>& plans) {
    std::string problem = parse_options(argc, argv, options);
    if (!problem.empty()) return problem;
    for (const std::string& name : options.sections) {
        if (find_section(chapter, name) == nullptr) return unknown_section(chapter, name);
    }
    if (options.help || options.list || options.limits) return "";
    for (const Section* section : select_sections(chapter, options)) {
        plans.push_back(Plan{section, options, ""});
    }
    problem = check_unused_options(chapter, options, plans);
    if (problem.empty()) problem = check_section_options(options, plans);
    if (problem.empty() && !options.csv_dir.empty()) {
        problem = prepare_csv_dir(options.csv_dir);
        if (!problem.empty()) problem = "--csv: " + problem;
    }
    return problem;
}

// Prints, once, what each section does instead of a value it cannot use (fit_option).
void print_notes(std::vector<Plan>& plans) {
    for (Plan& plan : plans) {
        if (!plan.note.empty()) std::printf("%s\n", plan.note.c_str());
        plan.note.clear();
    }
}

// Runs the sections in order; counts their verdicts.
void run_sections(const Chapter& chapter, const std::vector<const Plan*>& to_run, bool pause,
                  int device, int& passed, int& failed, int& skipped) {
    for (std::size_t i = 0; i < to_run.size(); ++i) {
        const Section* section = to_run[i]->section;
        if (pause && i > 0) pause_after(to_run[i - 1]->section->name);
        std::printf("\n=== %s/%s: %s ===\n", chapter.name, section->name, section->summary);
        start_table_group(std::string(chapter.name) + "_" + section->name);
        Context context(chapter.name, section->name, to_run[i]->options, device);
        section->run(context);
        Result result = context.result();
        if (context.verdicts() != 1) {
            // A section must end in exactly one verdict; anything else is a bug in the section.
            std::printf("FAIL %s/%s: the section printed %d verdicts instead of exactly one\n",
                        chapter.name, section->name, context.verdicts());
            result = Result::fail;
        }
        passed += result == Result::pass;
        failed += result == Result::fail;
        skipped += result == Result::skip;
    }
}

// The end of a --csv run: how many files went where.
void report_csv_files(const Options& options) {
    if (options.csv_dir.empty()) return;
    const int files = csv_files_written();
    if (files > 0) {
        std::printf("\n%d CSV file%s written to %s\n", files, files == 1 ? "" : "s",
                    absolute_path(options.csv_dir).c_str());
    } else {
        // The folder is made with the first table: without one it was not, unless it was there.
        struct stat info {};
        const bool there = stat(options.csv_dir.c_str(), &info) == 0;
        std::printf("\nNo table was printed, so no CSV file was written (%s %s).\n",
                    absolute_path(options.csv_dir).c_str(),
                    there ? "is as it was" : "was not made");
    }
}

std::vector<Section>& registered_sections() {
    static std::vector<Section> sections;
    return sections;
}

std::vector<ChildRole>& registered_children() {
    static std::vector<ChildRole> children;
    return children;
}

// The chapter's table with each section's registered run function, and the registered child
// roles added. "" or what does not match: a table entry nothing registered, or a registered
// section the table lacks (both are mistakes in adding a section, found before anything runs).
std::string resolve(const Chapter& table, Chapter& chapter) {
    chapter = table;
    for (Section& section : chapter.sections) {
        for (const Section& registered : registered_sections()) {
            if (section.run == nullptr && std::strcmp(section.name, registered.name) == 0)
                section.run = registered.run;
        }
        if (section.run == nullptr)
            return format(
                "section %s is in the table, but no checks file registers it "
                "(TUTORIAL_SECTION(%s, run_%s))",
                section.name, section.name, section.name);
    }
    for (const Section& registered : registered_sections()) {
        bool listed = false;
        for (const Section& section : chapter.sections)
            listed |= std::strcmp(section.name, registered.name) == 0;
        if (!listed)
            return format("section %s is registered but not in the chapter's table (main.cpp)",
                          registered.name);
    }
    for (const ChildRole& role : registered_children()) chapter.child_roles.push_back(role);
    return "";
}

}  // namespace

bool register_section(const char* name, Result (*run)(Context&)) {
    registered_sections().push_back(Section{name, "", {}, true, run});
    return true;
}

bool register_child(const char* name, int (*run)(const std::vector<std::string>& args)) {
    registered_children().push_back(ChildRole{name, run});
    return true;
}

int run_chapter(const Chapter& table, int argc, char** argv) {
    // Line buffering keeps our lines in order with stderr and with child processes' output even
    // when the output goes to a pipe (as under CTest).
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    Chapter chapter;
    const std::string unmatched = resolve(table, chapter);
    if (!unmatched.empty()) {
        std::fprintf(stderr, "%s: %s\n", table.name, unmatched.c_str());
        return exit_failure;
    }

    if (argc >= 2 && std::strcmp(argv[1], child_flag) == 0)
        return run_child_role(chapter, argc, argv);

    Options options;
    std::vector<Plan> plans;
    const std::string problem = check_command_line(chapter, argc, argv, options, plans);
    if (!problem.empty()) {
        std::fprintf(stderr, "%s: %s\n", chapter.name, problem.c_str());
        return exit_usage;
    }
    if (options.help) {
        print_help(chapter);
        return exit_success;
    }
    if (options.list) {
        for (const Section& section : chapter.sections) {
            std::printf("%-24s %s\n", section.name, section.summary);
        }
        return exit_success;
    }
    if (options.limits) {
        // One line per section, in bytes and counts (0: the option is not taken), for scripts
        // such as .ci/sweep-inputs, which tries each section at the edges of what it accepts.
        std::printf("section size_multiple size_min size_max iters_min iters_max workers_min "
                    "workers_max\n");
        for (const Section& section : chapter.sections) {
            const Takes& t = section.takes;
            std::printf("%s %zu %zu %zu %d %d %d %d\n", section.name,
                        t.takes_size ? t.size_multiple : 0,
                        t.takes_size ? std::max(t.size_min, t.size_multiple) : 0,
                        t.takes_size ? t.size_max : 0, t.takes_iters ? t.iters_min : 0,
                        t.takes_iters ? t.iters_max : 0, t.takes_workers ? t.workers_min : 0,
                        t.takes_workers ? t.workers_max : 0);
        }
        return exit_success;
    }

    std::printf("%s: %s\n", chapter.name, chapter.title);
    print_notes(plans);
    bool any_needs_device = false;
    for (const Plan& plan : plans) any_needs_device |= plan.section->needs_device;
    int device = -1;
    std::string no_device;
    std::string description = "no GPU used";
    if (any_needs_device) {
        const int status = select_device(chapter.name, options, device, no_device, description);
        if (status != 0) return status;
    }
    if (!options.csv_dir.empty()) {
        write_tables_to(options.csv_dir, csv_comment(description, argc, argv));
        std::printf("Tables are also written as CSV files to %s\n",
                    absolute_path(options.csv_dir).c_str());
    }
    const bool pause = options.pause && isatty(STDIN_FILENO);
    if (options.pause && !pause) {
        std::printf(
            "--pause: standard input is not a terminal, so the sections run on without "
            "pausing.\n");
    }
    if (device >= 0 && options.size != 0) {
        const std::string too_big = check_memory(options, plans);
        if (!too_big.empty()) {
            std::fprintf(stderr, "%s: %s\n", chapter.name, too_big.c_str());
            return exit_usage;
        }
        print_notes(plans);
    }

    int passed = 0;
    int failed = 0;
    int skipped = 0;
    run_sections(chapter, sections_to_run(chapter, plans, device, no_device, skipped), pause,
                 device, passed, failed, skipped);
    // Under compute-sanitizer, how many devices this run made a context on: the tool reports a
    // chapter's __managed__ variables once per context, and the sanitizer tests allow that many
    // reports for each (run_test.cmake reads this line).
    if (device >= 0 && std::getenv("TUTORIAL_UNDER_SANITIZER") != nullptr) {
        int with_context = 0;
        for (int d = 0; d < device_count(); ++d) with_context += primary_context_active(d) ? 1 : 0;
        std::printf("\n(CUDA contexts on %d device%s)\n", with_context,
                    with_context == 1 ? "" : "s");
    }
    // Destroying the context lets compute-sanitizer's leak check see that everything was freed.
    if (device >= 0) CUDA_CHECK(cudaDeviceReset());
    report_csv_files(options);
    std::printf("\n%s: %d passed, %d failed, %d skipped\n", chapter.name, passed, failed, skipped);
    if (failed > 0) return exit_failure;
    return passed > 0 ? exit_success : exit_skipped;
}

}  // namespace tutorial
