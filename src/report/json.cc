#include <nlohmann/json.hpp>

#include <set>

#include "checks/causes.h"
#include "report/report.h"

namespace envdoctor::report {

using nlohmann::ordered_json;

namespace {

ordered_json findings_json(const std::vector<checks::Finding>& list) {
  ordered_json findings = ordered_json::array();
  for (const checks::Finding& f : list) {
    ordered_json j;
    j["code"] = checks::code_name(f.code);
    j["severity"] = checks::severity_name(f.severity);
    j["file"] = f.file;
    j["package"] = f.package ? ordered_json(*f.package) : ordered_json(nullptr);
    if (f.library) j["library"] = *f.library;
    if (f.symbol) j["symbol"] = *f.symbol;
    if (f.version) j["version"] = *f.version;
    if (f.arch) j["arch"] = *f.arch;
    if (!f.packages.empty()) j["packages"] = f.packages;
    if (f.installer) j["installer"] = *f.installer;
    j["message"] = f.message;
    j["hint"] = f.hint;
    if (!f.fix_command.empty()) j["fix_command"] = f.fix_command;
    if (f.caused_by) {
      ordered_json cause = {{"code", checks::code_name(f.caused_by->code)}, {"file", f.caused_by->file}};
      if (f.caused_by->library) cause["library"] = *f.caused_by->library;
      cause["package"] = f.caused_by->package ? ordered_json(*f.caused_by->package) : ordered_json(nullptr);
      j["caused_by"] = std::move(cause);
    }
    j["new"] = f.is_new;
    findings.push_back(std::move(j));
  }
  return findings;
}

}  // namespace

size_t Report::errors() const {
  size_t n = 0;
  for (const auto& f : findings) n += f.severity == checks::Severity::kError;
  return n;
}

size_t Report::warnings() const { return findings.size() - errors(); }

size_t Report::causes() const { return checks::count_causes(findings); }

std::vector<const checks::Finding*> Report::silent_fallbacks() const {
  std::vector<const checks::Finding*> out;
  std::set<std::string> packages;
  for (const checks::Finding& f : findings)
    if (f.code == checks::Code::kSilentFallback && packages.insert(f.package.value_or(f.file)).second)
      out.push_back(&f);
  return out;
}

Report environment_report(const environment::Environment& env, checks::CheckRun run) {
  Report r;
  r.python = env.python.executable;
  r.version = env.python.version_info.full_str();
  r.site_packages = env.inventory.site_dirs;
  r.packages = env.inventory.distributions.size();
  r.elf_files = env.elf_files.size();
  if (env.installer) r.installer = python::Distribution::tool_name(*env.installer);
  r.findings = std::move(run.findings);
  r.notes = std::move(run.notes);
  r.needs_absent_driver = run.needs_absent_driver;
  r.image = env.image;
  r.other_environments = env.other_environments;
  r.site_code_not_run = env.python.site_code_not_run;
  return r;
}

namespace {

ordered_json or_null(const std::string& s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); }

ordered_json image_json(const image::ImageFacts& image) {
  return {{"reference", image.reference},
          {"format", image.format},
          {"digest", or_null(image.digest)},
          {"config_digest", or_null(image.config_digest)},
          {"layers", image.layers},
          {"interpreter", or_null(image.interpreter)},
          {"interpreter_from", image::interpreter_source_name(image.interpreter_source)},
          {"prefix", image.prefix}};
}

ordered_json other_environments_json(const std::vector<python::OtherEnvironment>& others) {
  ordered_json out = ordered_json::array();
  for (const python::OtherEnvironment& o : others)
    out.push_back({{"prefix", o.prefix},
                   {"python", or_null(o.python)},
                   {"version", or_null(o.version)},
                   {"packages", o.packages},
                   {"problem", or_null(o.problem)},
                   {"command", o.command}});
  return out;
}

ordered_json check_document(const Report& report) {
  ordered_json out;
  out["schema"] = 1;
  out["environment"] = {{"python", report.python},
                        {"version", report.version},
                        {"site_packages", report.site_packages},
                        {"packages", report.packages},
                        {"elf_files", report.elf_files}};
  out["environment"]["installer"] = report.installer.empty() ? ordered_json(nullptr) : ordered_json(report.installer);
  if (report.image) out["environment"]["image"] = image_json(*report.image);
  out["environment"]["other_environments"] = other_environments_json(report.other_environments);
  out["environment"]["site_code_not_run"] = ordered_json::array();
  for (const python::SiteCode& c : report.site_code_not_run)
    out["environment"]["site_code_not_run"].push_back(
        {{"file", c.file}, {"line", c.line ? ordered_json(c.line) : ordered_json(nullptr)}, {"code", c.text}});
  out["findings"] = findings_json(report.findings);
  if (report.change)
    out["change"] = {{"added", report.change->added},
                     {"removed", report.change->removed},
                     {"new_errors", report.change->new_errors},
                     {"old_errors", report.change->old_errors},
                     {"fixed_errors", report.change->fixed_errors}};
  out["summary"] = {{"errors", report.errors()}, {"warnings", report.warnings()}, {"causes", report.causes()}};
  return out;
}

// Invalid UTF-8 in a path is replaced, never a throw.
std::string dump(const ordered_json& document) {
  return document.dump(1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

ordered_json pip_items(const std::vector<scenarios::PipItem>& items, bool install) {
  ordered_json out = ordered_json::array();
  for (const scenarios::PipItem& i : items) {
    ordered_json j = {{"name", i.name}, {"version", i.version}};
    if (install) {
      j["url"] = i.url;
      j["wheel"] = i.wheel;
      j["replaces"] = i.replaces.empty() ? ordered_json(nullptr) : ordered_json(i.replaces);
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

std::string render_json(const Report& report) { return dump(check_document(report)); }

std::string render_pip_json(const PipReport& report) {
  const scenarios::PipPlan& plan = *report.plan;
  ordered_json out;
  out["schema"] = 1;
  out["action"] = python::pip_action_name(plan.action);
  out["installer"] = scenarios::installer_name(plan.installer);
  out["plan"] = {{"install", pip_items(plan.install, true)},
                 {"remove", pip_items(plan.remove, false)},
                 {"not_installed", plan.not_installed}};
  out["verdict"] = scenarios::verdict_name(report.verdict);
  out["cannot_check"] = plan.cannot_check.empty() ? ordered_json(nullptr) : ordered_json(plan.cannot_check);
  if (!plan.not_found.empty()) out["not_found"] = plan.not_found;
  out["prediction"] = report.prediction ? check_document(*report.prediction) : ordered_json(nullptr);
  return dump(out);
}

namespace {

ordered_json null_if_empty(const std::string& s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); }

ordered_json edge_json(const checks::Edge& e) {
  ordered_json attempts = ordered_json::array();
  for (const loader::Attempt& a : e.attempts) attempts.push_back({{"path", a.path}, {"outcome", a.outcome}});
  return {{"consumer", e.consumer},
          {"needed", e.needed},
          {"resolved", null_if_empty(e.resolved)},
          {"rule", e.resolved.empty() ? ordered_json(nullptr) : ordered_json(loader::rule_name(e.rule))},
          {"source", null_if_empty(e.source)},
          {"attempts", std::move(attempts)}};
}

ordered_json owned_json(const queries::OwnedPath& p) { return {{"path", p.path}, {"owner", p.owner}}; }

ordered_json why_library_json(const queries::WhyLibrary& lib) {
  ordered_json copies = ordered_json::array();
  for (const queries::OwnedPath& c : lib.copies) copies.push_back(owned_json(c));
  ordered_json needed_by = ordered_json::array();
  for (const queries::WhyLibrary::Need& n : lib.needed_by) {
    ordered_json shadowed = ordered_json::array();
    for (const queries::OwnedPath& c : n.shadowed) shadowed.push_back(owned_json(c));
    needed_by.push_back({{"consumer", owned_json(n.consumer)}, {"edge", edge_json(n.edge)}, {"shadows", shadowed}});
  }
  return {{"name", lib.name},
          {"asked_path", lib.asked_path ? owned_json(*lib.asked_path) : ordered_json(nullptr)},
          {"copies", std::move(copies)},
          {"needed_by", std::move(needed_by)}};
}

ordered_json why_package_json(const queries::WhyPackage& pkg) {
  ordered_json files = ordered_json::array();
  for (const queries::WhyPackage::File& f : pkg.files) {
    ordered_json needs = ordered_json::array();
    for (const checks::Edge& e : f.needs) needs.push_back(edge_json(e));
    files.push_back({{"path", f.path}, {"needs", std::move(needs)}});
  }
  ordered_json used_by = ordered_json::array();
  for (const auto& [label, edges] : pkg.used_by) {
    ordered_json list = ordered_json::array();
    for (const checks::Edge& e : edges) list.push_back(edge_json(e));
    used_by.push_back({{"package", label}, {"edges", std::move(list)}});
  }
  return {{"name", pkg.name},
          {"version", pkg.version},
          {"metadata_dir", pkg.metadata_dir},
          {"files", std::move(files)},
          {"used_by", std::move(used_by)}};
}

}  // namespace

std::string render_why_json(const queries::WhyAnswer& answer, const std::string& name) {
  ordered_json out;
  out["schema"] = 1;
  out["name"] = name;
  out["will_not_load"] = answer.will_not_load();
  out["package"] = answer.package ? why_package_json(*answer.package) : ordered_json(nullptr);
  out["library"] = answer.library ? why_library_json(*answer.library) : ordered_json(nullptr);
  out["absent"] = answer.absent
                      ? ordered_json({{"name", answer.absent->name}, {"required_by", answer.absent->required_by}})
                      : ordered_json(nullptr);
  out["findings"] = findings_json(answer.findings);
  return dump(out);
}

std::string render_ps_json(const queries::LiveExamination& process) {
  ordered_json out;
  out["schema"] = 1;
  out["process"] = {{"pid", process.pid}, {"exe", process.exe}};
  out["process"]["python"] = process.python.empty() ? ordered_json(nullptr) : ordered_json(process.python);
  out["process"]["python_version"] =
      process.python_version.empty() ? ordered_json(nullptr) : ordered_json(process.python_version);
  out["process"]["ld_library_path"] =
      process.ld_library_path ? ordered_json(*process.ld_library_path) : ordered_json(nullptr);
  ordered_json objects = ordered_json::array();
  for (const queries::LiveObject& o : process.objects) {
    ordered_json j;
    j["path"] = o.path;
    j["mapped_as"] = o.mapped_as.empty() ? ordered_json(nullptr) : ordered_json(o.mapped_as);
    j["soname"] = o.soname ? ordered_json(*o.soname) : ordered_json(nullptr);
    j["owner"] = o.owner.empty() ? ordered_json(nullptr) : ordered_json(o.owner);
    j["found"] = o.found;
    j["deleted"] = o.deleted;
    j["replaced"] = o.replaced;
    objects.push_back(std::move(j));
  }
  out["objects"] = std::move(objects);
  ordered_json differences = ordered_json::array();
  for (const queries::LiveDifference& d : process.differences)
    differences.push_back(
        {{"soname", d.soname},
         {"loaded", d.loaded},
         {"loaded_owner", d.loaded_owner.empty() ? ordered_json(nullptr) : ordered_json(d.loaded_owner)},
         {"predicted", d.predicted},
         {"predicted_by", d.predicted_by.empty() ? ordered_json(nullptr) : ordered_json(d.predicted_by)}});
  out["differences"] = std::move(differences);
  out["findings"] = findings_json(process.findings);
  size_t errors = 0;
  for (const checks::Finding& f : process.findings) errors += f.severity == checks::Severity::kError;
  out["summary"] = {{"errors", errors}, {"warnings", process.findings.size() - errors}};
  return out.dump(1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace envdoctor::report
