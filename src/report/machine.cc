#include "report/machine.h"

#include <cstdio>

#include "support/json_text.h"
#include "support/parallel.h"

namespace envdoctor::report {

namespace {

using nlohmann::json;

// Things (packages, files) are added, removed or changed; facts (LD_LIBRARY_PATH, the driver)
// always change, from or to none.
void render_changes(std::string& out, const char* title, const std::vector<snapshot::Change>& changes,
                    bool facts = false) {
  if (changes.empty()) return;
  out += std::string(title) + "\n";
  for (const snapshot::Change& c : changes) {
    if (facts)
      out += "  ~ " + c.subject + ": " + c.before.value_or("(none)") + " \u2192 " + c.after.value_or("(none)") + "\n";
    else if (!c.before) out += "  + " + c.subject + " " + *c.after + "\n";
    else if (!c.after) out += "  - " + c.subject + " " + *c.before + "\n";
    else out += "  ~ " + c.subject + ": " + *c.before + " \u2192 " + *c.after + "\n";
    for (const std::string& f : c.files) out += "      for " + f + "\n";
  }
}

void render_findings(std::string& out, const char* title, const std::vector<snapshot::FindingChange>& findings) {
  if (findings.empty()) return;
  out += std::string(title) + "\n";
  for (const snapshot::FindingChange& f : findings) {
    out += "  " + f.severity + std::string(f.severity.size() < 8 ? 8 - f.severity.size() : 1, ' ') + f.code;
    if (!f.file.empty()) out += " " + f.file;
    if (!f.package.empty()) out += " (" + f.package + ")";
    out += "\n    " + f.message + "\n";
  }
}

json changes_json(const std::vector<snapshot::Change>& changes, bool with_files = false) {
  json out = json::array();
  for (const snapshot::Change& c : changes) {
    json j = {{"subject", c.subject},
              {"before", c.before ? json(*c.before) : json(nullptr)},
              {"after", c.after ? json(*c.after) : json(nullptr)}};
    if (with_files) j["files"] = c.files;
    out.push_back(std::move(j));
  }
  return out;
}

json findings_json(const std::vector<snapshot::FindingChange>& findings) {
  json out = json::array();
  for (const snapshot::FindingChange& f : findings)
    out.push_back({{"code", f.code},
                   {"severity", f.severity},
                   {"file", f.file.empty() ? json(nullptr) : json(f.file)},
                   {"package", f.package.empty() ? json(nullptr) : json(f.package)},
                   {"library", f.library.empty() ? json(nullptr) : json(f.library)},
                   {"message", f.message}});
  return out;
}

// Prometheus label values escape backslash, double quote and newline (exposition format).
std::string label(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace

std::string render_snapshot(const json& snapshot) {
  // snapshot.dump(2), member by member on all cores (support/json_text.h writes what dump does).
  if (!snapshot.is_object() || snapshot.empty()) return support::dump_json(snapshot, 2) + "\n";
  std::vector<std::pair<std::string, const json*>> members;
  for (const auto& [key, value] : snapshot.items()) members.emplace_back(key, &value);
  std::vector<std::string> dumps(members.size());
  support::parallel_for(members.size(), [&](size_t i) {
    std::string& out = dumps[i];
    out = "  " + json(members[i].first).dump() + ": ";
    support::append_json(out, *members[i].second, 2, 1);
  });
  std::string out = "{\n";
  for (size_t i = 0; i < dumps.size(); ++i) out += dumps[i] + (i + 1 < dumps.size() ? ",\n" : "\n");
  return out + "}\n";
}

namespace {

// "before.json: /v/bin/python (Python 3.11.7), sha256:5d1c...": which environment a side is of.
std::string side_text(const snapshot::Side& side, const std::string& digest) {
  std::string out = side.source == "-" ? "this environment now (-)" : side.source;
  out += ": " + (side.python.empty() ? side.prefix : side.python);
  if (!side.version.empty()) out += " (Python " + side.version + ")";
  return out + ", " + digest;
}

json side_json(const snapshot::Side& side) {
  auto or_null = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  return {{"source", side.source},
          {"prefix", or_null(side.prefix)},
          {"python", or_null(side.python)},
          {"version", or_null(side.version)}};
}

}  // namespace

std::string render_diff_text(const snapshot::Diff& d) {
  std::string out = "A " + side_text(d.a, d.digest_a) + "\nB " + side_text(d.b, d.digest_b) + "\n";
  if (d.a.prefix != d.b.prefix) out += "two environments: a path inside either prefix is compared relative to it\n";
  if (d.same()) return out + "no differences\n";
  out += "\n";
  render_changes(out, "interpreter", d.environment, true);
  render_changes(out, "packages", d.packages);
  render_changes(out, "files", d.files);
  render_changes(out, "resolutions", d.resolutions);
  render_changes(out, "loader", d.loader, true);
  render_changes(out, "cuda", d.cuda, true);
  render_findings(out, "findings new on B", d.new_findings);
  render_findings(out, "findings gone on B", d.gone_findings);
  out += "\n";
  out += std::to_string(d.new_errors);
  out += d.new_errors == 1 ? " error new on B\n" : " errors new on B\n";
  return out;
}

std::string render_diff_json(const snapshot::Diff& d) {
  json out = {{"schema", 1},
              {"digests", {{"a", d.digest_a}, {"b", d.digest_b}}},
              {"environments", {{"a", side_json(d.a)}, {"b", side_json(d.b)}}},
              {"same", d.same()},
              {"environment", changes_json(d.environment)},
              {"packages", changes_json(d.packages)},
              {"files", changes_json(d.files)},
              {"resolutions", changes_json(d.resolutions, true)},
              {"loader", changes_json(d.loader)},
              {"cuda", changes_json(d.cuda)},
              {"new_findings", findings_json(d.new_findings)},
              {"gone_findings", findings_json(d.gone_findings)},
              {"new_errors", d.new_errors}};
  return out.dump(2) + "\n";
}

namespace {

// What an nhc line and the first cause's labels name: the library, else the file, inside the
// environment's site directories as the package's RECORD spells it (a drain reason is short).
std::string subject(const Report& report, const checks::Finding& f) {
  if (f.library) return *f.library;
  if (f.file.empty()) return "-";
  for (const std::string& site : report.site_packages)
    if (f.file.size() > site.size() + 1 && f.file.starts_with(site) && f.file[site.size()] == '/')
      return f.file.substr(site.size() + 1);
  return f.file;
}

// The errors to report, causes first: those that follow from no other finding; when every
// error follows from a warning, the errors themselves.
std::vector<const checks::Finding*> error_causes(const Report& report) {
  std::vector<const checks::Finding*> causes, all;
  for (const checks::Finding& f : report.findings) {
    if (f.severity != checks::Severity::kError) continue;
    all.push_back(&f);
    if (!f.caused_by) causes.push_back(&f);
  }
  return causes.empty() ? all : causes;
}

// What the nhc line names: the error causes; without errors, on a GPU node, the packages that
// fall back silently (a job that wants the GPU runs on the CPU there, and the GPU sits idle);
// none: OK.
std::vector<const checks::Finding*> nhc_reasons(const Report& report) {
  std::vector<const checks::Finding*> causes = error_causes(report);
  if (causes.empty() && report.gpu_node) return report.silent_fallbacks();
  return causes;
}

}  // namespace

std::string render_nhc(const Report& report) {
  std::vector<const checks::Finding*> causes = nhc_reasons(report);
  if (causes.empty()) return "envdoctor: OK\n";
  const checks::Finding& first = *causes.front();
  std::string out = std::string("envdoctor: ") + checks::code_name(first.code) + " " + subject(report, first) + " " +
                    first.package.value_or("-");
  if (causes.size() > 1) out += " (+" + std::to_string(causes.size() - 1) + " more)";
  return out + "\n";
}

int nhc_status(const Report& report) { return nhc_reasons(report).empty() ? 0 : 1; }

std::string render_prom(const Report& report, const PromFacts& facts) {
  std::string env = "environment=\"" + label(report.python) + "\"";
  std::string out;
  auto family = [&](const char* name, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n";
  };
  family("envdoctor_check_ok", "1 when every native library of the environment will load (no errors), else 0.");
  out += "envdoctor_check_ok{" + env + "} " + (report.errors() == 0 ? "1" : "0") + "\n";
  // The cause first: what the nhc line names, then how many causes there are to fix.
  std::vector<const checks::Finding*> causes = error_causes(report);
  family("envdoctor_causes", "Errors that follow from no other finding: fixing these fixes the rest.");
  out += "envdoctor_causes{" + env + "} " + std::to_string(causes.size()) + "\n";
  if (!causes.empty()) {
    const checks::Finding& first = *causes.front();
    family("envdoctor_first_cause_info", "The first cause, as the nhc line names it (code, library or file, package).");
    out += "envdoctor_first_cause_info{" + env + ",code=\"" + checks::code_name(first.code) + "\",subject=\"" +
           label(subject(report, first)) + "\",package=\"" + label(first.package.value_or("")) + "\"} 1\n";
  }
  // The packages that would run without their GPU path: the GPU sits idle under them.
  std::vector<const checks::Finding*> fallbacks = report.silent_fallbacks();
  family("envdoctor_silent_fallbacks",
         "Packages that import but fall back silently and run without their GPU path (silent-fallback).");
  out += "envdoctor_silent_fallbacks{" + env + "} " + std::to_string(fallbacks.size()) + "\n";
  if (!fallbacks.empty())
    family("envdoctor_silent_fallback_info", "Each package that falls back silently, and the library it cannot load.");
  for (const checks::Finding* f : fallbacks)
    out += "envdoctor_silent_fallback_info{" + env + ",package=\"" + label(f->package.value_or("")) + "\",subject=\"" +
           label(subject(report, *f)) + "\"} 1\n";
  family("envdoctor_check_seconds", "Wall time of the check, in seconds.");
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.6f", facts.seconds);
  out += "envdoctor_check_seconds{" + env + "} " + seconds + "\n";
  family("envdoctor_findings", "Findings of the check, by code and severity (DESIGN.md's codes).");
  // Every code at both severities, zeros included, so that a finding going away is a change
  // of value, not a series vanishing.
  for (checks::Code code : checks::kAllCodes)
    for (checks::Severity severity : {checks::Severity::kError, checks::Severity::kWarning}) {
      size_t n = 0;
      for (const checks::Finding& f : report.findings) n += f.code == code && f.severity == severity;
      out += "envdoctor_findings{" + env + ",code=\"" + checks::code_name(code) + "\",severity=\"" +
             checks::severity_name(severity) + "\"} " + std::to_string(n) + "\n";
    }
  family("envdoctor_snapshot_info", "The environment's snapshot digest (envdoctor snapshot --digest), as a label.");
  out += "envdoctor_snapshot_info{" + env + ",digest=\"" + label(facts.digest) + "\"} 1\n";
  return out;
}

}  // namespace envdoctor::report
