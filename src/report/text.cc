#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "report/explain.h"
#include "report/report.h"
#include "support/text.h"

namespace envdoctor::report {

namespace {

struct Style {
  bool on;
  std::string red() const { return on ? "\x1b[1;31m" : ""; }
  std::string yellow() const { return on ? "\x1b[1;33m" : ""; }
  std::string bold() const { return on ? "\x1b[1m" : ""; }
  std::string dim() const { return on ? "\x1b[2m" : ""; }
  std::string reset() const { return on ? "\x1b[0m" : ""; }
};

// Paths and messages come from files: control characters are shown escaped, never sent to the
// terminal as they are.
std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string plural(size_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

const std::string kContainerGroup = "\x01container";

// --image: which image, which of its digests, and how its Python was chosen.
std::string image_line(const image::ImageFacts& image) {
  std::string digest = !image.digest.empty() ? image.digest : image.config_digest;
  using Source = image::ImageFacts::InterpreterSource;
  std::string source = image::interpreter_source_name(image.interpreter_source);
  std::string how = image.interpreter_source == Source::kPath ? "python3 on its PATH"
                    : image.interpreter_source == Source::kEntrypoint || image.interpreter_source == Source::kCmd
                        ? "its " + source
                        : source;
  std::string chosen = image.interpreter.empty() ? "the environment at " + image.prefix + " (" + how + ")"
                                                 : image.interpreter + " (" + how + ")";
  return "image " + printable(image.reference) + " (" + image.format + (digest.empty() ? "" : ", " + digest) + ", " +
         plural(image.layers, "layer") + "): its Python is " + printable(chosen);
}

// The findings by package, in the findings' order (new, errors, then warnings first). Causes
// before consequences: a package whose findings explain others' comes first, and in each package
// what follows from nothing comes before what follows from something.
struct Groups {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const checks::Finding*>> findings;
  std::map<std::string, std::string> installers;
};

Groups group_findings(const Report& report) {
  Groups g;
  for (const checks::Finding& f : report.findings) {
    // The toolkit's refusal is the container's, before any package loads.
    std::string key = f.code == checks::Code::kContainerRequirementUnmet ? kContainerGroup : f.package.value_or("");
    if (!g.findings.count(key)) g.order.push_back(key);
    g.findings[key].push_back(&f);
    if (f.installer) g.installers[key] = *f.installer;
  }
  std::stable_partition(g.order.begin(), g.order.end(), [&](const std::string& pkg) {
    return std::any_of(report.findings.begin(), report.findings.end(), [&](const checks::Finding& f) {
      return f.caused_by && f.caused_by->package.value_or("") == pkg;
    });
  });
  for (auto& [pkg, group] : g.findings)
    std::stable_partition(group.begin(), group.end(), [](const checks::Finding* f) { return !f->caused_by; });
  return g;
}

// A line of `prefix` and `text`, wrapped at spaces to `width` columns, continued under `indent`.
std::string wrapped(const std::string& prefix, const std::string& text, size_t width, const std::string& indent) {
  size_t room = width > indent.size() + 20 ? width - std::max(prefix.size(), indent.size()) : 20;
  return prefix + support::wrap_words(text, room, indent);
}

void render_finding(std::ostream& out, const Style& s, const checks::Finding& f, size_t width) {
  bool error = f.severity == checks::Severity::kError;
  out << "  " << (error ? s.red() + "error  " : s.yellow() + "warning") << s.reset() << " " << checks::code_name(f.code)
      << (f.is_new ? " [new]" : "") << "\n";
  if (!f.file.empty()) out << "    " << s.dim() << printable(f.file) << s.reset() << "\n";
  if (f.caused_by)
    out << wrapped("    caused by: ",
                   std::string(checks::code_name(f.caused_by->code)) + " " + printable(f.caused_by->file) +
                       (f.caused_by->library ? " " + printable(*f.caused_by->library) : "") +
                       (f.caused_by->package ? " (" + printable(*f.caused_by->package) + ")" : ""),
                   width, "      ")
        << "\n";
  out << wrapped("    ", printable(f.message), width, "      ") << "\n";
  // The hint explains, wrapped for reading; the command is one line, to be pasted as it is.
  if (!f.hint.empty()) out << "    hint: " << support::wrap(printable(f.hint), width - 10, "          ") << "\n";
  if (!f.fix_command.empty()) out << "    fix: " << printable(f.fix_command) << "\n";
}

// One package's findings under its name, at most options.max_per_code of each code.
void render_group(std::ostream& out, const Style& s, const TextOptions& options, const Groups& g,
                  const std::string& pkg) {
  const auto& group = g.findings.at(pkg);
  bool any_error = std::any_of(group.begin(), group.end(),
                               [](const checks::Finding* f) { return f->severity == checks::Severity::kError; });
  if (options.only_errors && !any_error) return;
  out << "\n"
      << s.bold()
      << (pkg.empty()              ? "(files no package owns)"
          : pkg == kContainerGroup ? "(the container, at its start)"
                                   : pkg)
      << s.reset();
  if (auto it = g.installers.find(pkg); it != g.installers.end()) out << " (installed by " << it->second << ")";
  out << "\n";
  std::map<std::string, size_t> shown;
  std::map<std::string, size_t> hidden;
  for (const checks::Finding* f : group) {
    if (options.only_errors && f->severity != checks::Severity::kError) continue;
    if (shown[checks::code_name(f->code)]++ >= options.max_per_code) {
      ++hidden[checks::code_name(f->code)];
      continue;
    }
    render_finding(out, s, *f, options.width);
  }
  for (const auto& [code, n] : hidden) out << "  ... and " << n << " more " << code << " (--json lists all)\n";
}

// The packages that import and run without their GPU path (silent-fallback), named under the
// counts: a warning that leaves a GPU idle is seen at a glance, and under --only-errors too.
void render_fallbacks(std::ostream& out, const Style& s, const Report& report, size_t width) {
  std::vector<const checks::Finding*> fallbacks = report.silent_fallbacks();
  if (fallbacks.empty()) return;
  std::string names;
  for (const checks::Finding* f : fallbacks) names += (names.empty() ? "" : ", ") + f->package.value_or(f->file);
  std::string text = (report.errors()              ? ""
                      : report.needs_absent_driver ? "Every library here will load where the NVIDIA driver is, but "
                                                   : "Every library here will load, but ") +
                     plural(fallbacks.size(), "package") +
                     (fallbacks.size() == 1 ? " falls back silently and runs without its GPU path: "
                                            : " fall back silently and run without their GPU path: ") +
                     printable(names) + " (silent-fallback)";
  out << s.yellow() << wrapped("", text, width, "  ") << s.reset() << "\n";
}

// The verdict: all clear, or the counts (with causes and consequences), and what a change did.
void render_summary(std::ostream& out, const Style& s, const Report& report, size_t width) {
  size_t e = report.errors(), w = report.warnings();
  if (e == 0 && w == 0)
    out << s.bold()
        << (report.needs_absent_driver ? "All clear: every library here will load where the NVIDIA driver is."
                                       : "All clear: every library here will load.")
        << s.reset() << "\n";
  else {
    out << (e ? s.red() : s.yellow()) << plural(e, "error") << ", " << plural(w, "warning") << s.reset();
    // What has to be fixed: the findings that follow from no other.
    if (size_t causes = report.causes(); causes < e + w)
      out << " (" << plural(causes, "cause") << ", " << plural(e + w - causes, "consequence") << ")";
    out << "\n";
  }
  render_fallbacks(out, s, report, width);
  if (report.change) {
    const scenarios::ChangeSummary& c = *report.change;
    out << s.bold() << plural(c.new_errors, "new error") << " (" << c.old_errors << " already there)";
    if (c.fixed_errors) out << "; this change fixes " << plural(c.fixed_errors, "error");
    out << s.reset() << "\n";
  }
}

// An environment of the root or image that was not checked, and the command that checks it.
std::string other_environment_line(const python::OtherEnvironment& other) {
  std::string what =
      !other.problem.empty() ? other.problem : "Python " + other.version + ", " + plural(other.packages, "package");
  return "not checked: the environment at " + printable(other.prefix) + " (" + printable(what) +
         "): " + printable(other.command);
}

}  // namespace

std::string render_text(const Report& report, const TextOptions& options) {
  Style s{options.color};
  std::ostringstream out;
  // The environment's line: the interpreter in bold, its words after it, wrapped as a whole.
  std::string head = wrapped("",
                             report.python + " (Python " + report.version +
                                 (report.installer.empty() ? "" : ", managed by " + report.installer) + "): " +
                                 plural(report.packages, "package") + ", " + plural(report.elf_files, "ELF file"),
                             options.width, "  ");
  out << s.bold() << head.substr(0, report.python.size()) << s.reset() << head.substr(report.python.size()) << "\n";
  if (report.image) out << wrapped("", image_line(*report.image), options.width, "  ") << "\n";
  // Each ends in the command that checks it, to be pasted whole: not wrapped.
  for (const python::OtherEnvironment& other : report.other_environments) out << other_environment_line(other) << "\n";
  if (report.change) {
    // The scenario, as pip would carry it out: "+tinypure 0.1 (wheel), \u2212provlib 1.0".
    std::string scenario;
    for (const std::string& a : report.change->added) scenario += (scenario.empty() ? "+" : ", +") + a;
    for (const std::string& r : report.change->removed) scenario += (scenario.empty() ? "\u2212" : ", \u2212") + r;
    out << wrapped("what if: ", printable(scenario), options.width, "  ") << "\n";
  }
  Groups groups = group_findings(report);
  for (const std::string& pkg : groups.order) render_group(out, s, options, groups, pkg);
  if (!report.notes.empty()) out << "\n";
  for (const std::string& note : report.notes)
    out << wrapped("note: ", printable(note), options.width, "      ") << "\n";
  out << "\n";
  render_summary(out, s, report, options.width);
  // Last, where to read what each code printed above means, in the order they first appeared.
  std::vector<std::string_view> codes;
  for (const std::string& pkg : groups.order)
    for (const checks::Finding* f : groups.findings.at(pkg))
      if (std::find(codes.begin(), codes.end(), checks::code_name(f->code)) == codes.end())
        codes.push_back(checks::code_name(f->code));
  if (!codes.empty()) out << explain_pointer(codes);
  return out.str();
}

// `envdoctor ps PID`: the process, one line per ELF object (path, SONAME, owner, how found), then
// the findings as `check` prints them.
std::string render_ps_text(const queries::LiveExamination& process, const TextOptions& options) {
  Style s{options.color};
  std::ostringstream out;
  out << s.bold() << "process " << process.pid << s.reset() << ": " << printable(process.exe);
  if (!process.python.empty())
    out << " (Python " << printable(process.python_version) << " environment of " << printable(process.python) << ")";
  out << ", " << plural(process.objects.size(), "ELF object") << " mapped\n";
  out << "  LD_LIBRARY_PATH: " << (process.ld_library_path ? printable(*process.ld_library_path) : "(unset)") << "\n";
  for (const queries::LiveObject& o : process.objects) {
    out << "  " << printable(o.path);
    if (o.deleted) out << " " << s.yellow() << "(deleted)" << s.reset();
    if (o.replaced) out << " " << s.yellow() << "(replaced on disk)" << s.reset();
    out << "\n    ";
    if (o.soname) out << printable(*o.soname) << "; ";
    if (!o.owner.empty()) out << printable(o.owner) << "; ";
    out << printable(o.found) << "\n";
    if (!o.mapped_as.empty()) out << "    mapped as " << printable(o.mapped_as) << " (deleted)\n";
  }
  if (!process.differences.empty()) {
    out << "\n" << s.bold() << "Loaded other than check predicts:" << s.reset() << "\n";
    for (const queries::LiveDifference& d : process.differences) {
      out << "  " << printable(d.soname) << ": loaded " << printable(d.loaded);
      if (!d.loaded_owner.empty()) out << " (" << printable(d.loaded_owner) << ")";
      out << "\n    check predicts ";
      for (size_t i = 0; i < d.predicted.size(); ++i) out << (i ? ", " : "") << printable(d.predicted[i]);
      if (!d.predicted_by.empty()) out << " (" << printable(d.predicted_by) << ")";
      out << "\n";
    }
  }
  size_t errors = 0;
  for (const checks::Finding& f : process.findings) errors += f.severity == checks::Severity::kError;
  out << "\n";
  for (const checks::Finding& f : process.findings) {
    bool error = f.severity == checks::Severity::kError;
    out << (error ? s.red() + "error  " : s.yellow() + "warning") << s.reset() << " " << checks::code_name(f.code)
        << "\n    " << printable(f.message) << "\n";
    if (!f.hint.empty())
      out << "    hint: " << support::wrap(printable(f.hint), options.width - 10, "          ") << "\n";
    if (!f.fix_command.empty()) out << "    fix: " << printable(f.fix_command) << "\n";
  }
  if (process.findings.empty())
    out << s.bold() << "Nothing replaced on disk, no library loaded twice." << s.reset() << "\n";
  else out << plural(errors, "error") << ", " << plural(process.findings.size() - errors, "warning") << "\n";
  return out.str();
}

}  // namespace envdoctor::report
