// Rendering, the last stage: the same findings as text for people or as JSON for programs
// (DESIGN.md, "Findings (JSON)"). Renderers compute nothing; they only format.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checks/finding.h"
#include "imports/extension_load.h"
#include "queries/cuda_summary.h"
#include "queries/live_checks.h"
#include "queries/single_file.h"
#include "queries/why.h"
#include "scenarios/pip_plan.h"
#include "scenarios/simulation.h"

namespace envdoctor::report {

struct Report {
  std::string python;   // the interpreter examined
  std::string version;  // its version, "3.11.7"
  std::vector<std::string> site_packages;
  size_t packages = 0;
  size_t elf_files = 0;
  std::string installer;                  // who manages the environment: "conda", "debian", "uv", "pip"; "" unknown
  std::vector<checks::Finding> findings;  // sorted, de-duplicated
  std::vector<std::string> notes;         // what was not checked, and why (text only)
  bool needs_absent_driver = false;       // files need the NVIDIA driver's libraries, and no driver is here
  // The node has the NVIDIA driver (its kernel module's version is known, or --driver gave one):
  // a GPU node, where a package that falls back to the CPU leaves the GPU idle (render_nhc).
  bool gpu_node = false;
  std::optional<scenarios::ChangeSummary> change;  // with --with/--without: the scenario and its balance
  std::optional<image::ImageFacts> image;          // --image: the image and the interpreter it chose
  // Under --root or --image: the environments there that were not checked, each with its command.
  std::vector<python::OtherEnvironment> other_environments;
  std::vector<python::SiteCode> site_code_not_run;  // what site.py would have run and was not

  size_t errors() const;
  size_t warnings() const;
  size_t causes() const;  // findings that follow from no other (checks/causes.h)
  // The packages that fall back silently (silent-fallback: they import, and run without what
  // they could not load): the first such finding of each package, in the findings' order.
  std::vector<const checks::Finding*> silent_fallbacks() const;
};

// The environment examined and what one run of the checks found there.
Report environment_report(const environment::Environment& env, checks::CheckRun run);

std::string render_json(const Report& report);

struct TextOptions {
  bool color = false;
  size_t max_per_code = 5;   // a package with 500 missing files shows 5 and a count (--all: no limit)
  bool only_errors = false;  // --only-errors: warnings are counted in the summary but not listed
  // The widest a line may be (the terminal's; report::kTextWidth where the output is none): hints,
  // messages and notes wrap at spaces; a path alone, and a fix to paste, stay whole.
  size_t width = 104;
};
inline constexpr size_t kTextWidth = 104;
std::string render_text(const Report& report, const TextOptions& options);

// `envdoctor pip`: pip's plan, the verdict, and the prediction it rests on (the environment as
// the change leaves it, what the change brings marked new; unset when it could not be checked).
struct PipReport {
  const scenarios::PipPlan* plan = nullptr;
  scenarios::PipVerdict verdict = scenarios::PipVerdict::kSafe;
  std::optional<Report> prediction;
  std::string force_command;  // the same command with --force, for the refusal's last line
  bool predict_only = false;  // a prediction that runs nothing (the MCP tool predict_install)
};
// data/schemas/pip.schema.json; "prediction" is a check document (check.schema.json).
std::string render_pip_json(const PipReport& report);
// The plan, the findings the change brings (in check's text), and the verdict.
std::string render_pip_text(const PipReport& report, const TextOptions& options);

// `envdoctor cuda`.
std::string render_cuda_json(const queries::CudaSummary& summary);
std::string render_cuda_text(const queries::CudaSummary& summary);

// `ldd` and `tree`: the line after an extension module's listing that says where its C API
// references went ("\t61 Python C API symbols bound by /usr/bin/python3.11, as at import\n",
// "\t61 symbols left to the interpreter (...)\n"); "" when it has none.
std::string render_extension_summary(const imports::ExtensionLoad& ext);

// `ldd` and `tree` for one file: what goes to stdout (the listing, and an extension module's
// summary) and what to stderr (why it could not be loaded, or the errors to print, one a line).
struct FileText {
  std::string out;
  std::string err;
};
// ldd's listing in ld.so's order, after a "FILE:" line when `header` (several files given).
FileText render_ldd_file(const queries::SingleFileLoad& load, bool header);
// tree's: each object's dependencies below it (the first time it appears), each with the rule
// that found it, and for a library not found the paths considered.
FileText render_tree_file(const queries::SingleFileLoad& load);

// `envdoctor why`.
std::string render_why_text(const queries::WhyAnswer& answer, size_t width = kTextWidth);
// data/schemas/why.schema.json (the MCP tool `why`); `name` as asked.
std::string render_why_json(const queries::WhyAnswer& answer, const std::string& name);

// data/schemas/ldd.schema.json: for each file, ldd's listing, tree's, and the same facts as data
// (the MCP tool `inspect_library`).
std::string render_files_json(const std::vector<queries::SingleFileLoad>& loads);

// `envdoctor ps PID`: the objects a running process has mapped, and the findings about them.
std::string render_ps_json(const queries::LiveExamination& process);
std::string render_ps_text(const queries::LiveExamination& process, const TextOptions& options);

}  // namespace envdoctor::report
