// The skeleton every chapter's main() uses: a table of sections, run in order or by name.
//
//   int main(int argc, char** argv) {
//       const tutorial::Chapter chapter{"03_managed", "Managed memory", {
//           {"aplusb", "a + b three ways: explicit copies, cudaMallocManaged, __managed__"},
//       }};
//       return tutorial::run_chapter(chapter, argc, argv);
//   }
//
// The table is the one list of a chapter's sections: CMake reads it for the sources (the lesson
// <section>.cu and its checks, checks/<section>.cu). Each checks file defines the section's run
// function and registers it by name, `TUTORIAL_SECTION(aplusb, run_aplusb);`, and so its child
// roles, `TUTORIAL_CHILD(managed_copies, child_managed_copies);`: no declarations to keep.
//
// Each section prints a header, narrates, states its lessons as claims (Context::claim, one
// CLAIM line each) and ends with exactly one verdict line made by Context::verdict (PASS/FAIL)
// or Context::skip (SKIP). run_chapter turns the verdicts into the
// exit code: 1 if anything failed, 0 if something passed, 77 if everything was skipped.
#pragma once

#include "common/harness/claim.hpp"
#include "common/harness/cli.hpp"

#include <string>
#include <vector>

namespace tutorial {

enum class Result { pass, fail, skip };

// Exit codes shared by every program in the course.
constexpr int exit_success = 0;
constexpr int exit_failure = 1;   // a verdict was FAIL, or a CUDA call failed
constexpr int exit_usage = 2;     // bad command line
constexpr int exit_skipped = 77;  // no usable device, or a capability the sections need is missing

class Context {
public:
    Context(const char* chapter, const char* section, const Options& options, int device);

    const Options& options;
    const int device;  // the CUDA device the sections run on (already current), or -1

    bool quick() const { return options.quick; }
    std::size_t size_or(std::size_t default_bytes) const;
    int iters_or(int default_iters) const;
    int workers_or(int default_workers) const;

    // Prints the claim's CLAIM line (claim.hpp). A claim NOT held makes the verdict FAIL.
    // Returns false only for a claim not held. `why_not_judged`: a capability this device lacks.
    bool claim(const Claim& claim, const std::string& why_not_judged = "");

    // Prints "PASS <chapter>/<section>: <what>" or "FAIL ...". `what` names what was compared.
    // The verdict is FAIL when `ok` is false or any claim of the section did not hold.
    Result verdict(bool ok, const std::string& what);
    // Prints "SKIP: <chapter>/<section>: <reason>"; after a claim NOT held, the FAIL verdict
    // instead (what the section judged stands).
    Result skip(const std::string& reason);

    int verdicts() const { return verdicts_; }
    Result result() const { return result_; }

private:
    const char* chapter_;
    const char* section_;
    int verdicts_ = 0;
    int claims_not_held_ = 0;
    Result result_ = Result::fail;
};

struct Section {
    const char* name;
    const char* summary;
    Takes takes = {};  // which of --size, --iters, --workers it uses, and their limits (cli.hpp)
    bool needs_device = true;
    Result (*run)(Context&) = nullptr;  // nullptr: the one TUTORIAL_SECTION registered by name
};

// A role the program can play when a section starts it again as a child process (child.hpp).
// Its function gets the arguments after the role and returns the child's exit code.
struct ChildRole {
    const char* name;
    int (*run)(const std::vector<std::string>& args);
};

struct Chapter {
    const char* name;
    const char* title;
    std::vector<Section> sections;
    std::vector<ChildRole> child_roles = {};
    const char* exercise_file = nullptr;  // an exercise: the file the learner edits
};

int run_chapter(const Chapter& chapter, int argc, char** argv);

// What TUTORIAL_SECTION and TUTORIAL_CHILD do: record a run function under a name, before main.
bool register_section(const char* name, Result (*run)(Context&));
bool register_child(const char* name, int (*run)(const std::vector<std::string>& args));

#define TUTORIAL_SECTION(name, function)                  \
    [[maybe_unused]] const bool tutorial_section_##name = \
        ::tutorial::register_section(#name, function)
#define TUTORIAL_CHILD(name, function) \
    [[maybe_unused]] const bool tutorial_child_##name = ::tutorial::register_child(#name, function)

}  // namespace tutorial
