#include "checks/package_loads.h"

#include <filesystem>

#include "checks/package_load_findings.h"
#include "imports/python_process.h"

namespace envdoctor::checks {

using environment::ElfRecord;
using environment::Moment;
using imports::RuleRun;

namespace {

// Notes each copy a run opened that stayed in the process, by its SONAME (else its file name).
void note_opened(const loader::Process& p, const RuleRun& run, imports::ResolutionMap& opened) {
  for (const imports::OwnLoad& l : run.loads) {
    if (l.object < 0 || static_cast<size_t>(l.object) >= p.objects().size()) continue;
    const loader::LoadedObject& o = p.objects()[l.object];
    std::string name =
        o.elf && o.elf->soname ? std::string(*o.elf->soname) : std::filesystem::path(o.path).filename().string();
    opened[name][environment::normalize_path(o.path)].insert(environment::normalize_path(run.file));
  }
}

// Every library of the environment that an opener rule names: loaded from the interpreter, then
// each rule run from it.
void check_openers(const Context& ctx, PackageLoadResult& out) {
  const imports::ImportModel& model = ctx.model();
  for (const ElfRecord& file : ctx.env.elf_files) {
    const auto& elf = file.opened ? file.opened->elf : nullptr;
    if (!elf || !elf->soname || file.executable || !model.package_loads().opens(std::string(*elf->soname))) continue;
    imports::ImportModel::Interpreter python = model.start();
    loader::Process& p = python.process;
    loader::Process::DlopenResult opened = p.dlopen(file.path, false, python.caller);
    if (opened.object < 0) continue;  // the opener itself does not load: the load checks say why
    // A copy: the rules' dlopen calls add objects, which moves the process's list.
    const loader::LoadedObject opener = p.objects()[opened.object];
    for (const RuleRun& run : model.package_loads().run_opener(p, opened.object)) {
      note_opened(p, run, out.opened);
      for (Finding& f : opener_findings(ctx, run, opener)) out.findings.push_back(std::move(f));
    }
  }
}

// Every package with a rule for its first use or first compile: imported, then the rule run.
void check_later_moments(const Context& ctx, PackageLoadResult& out) {
  const imports::ImportModel& model = ctx.model();
  for (const python::Distribution& d : ctx.env.inventory.distributions) {
    if (!model.package_loads().has_rules(d)) continue;
    for (Moment moment : {Moment::kFirstUse, Moment::kFirstCompile}) {
      if (!model.package_loads().rule_for(d, moment)) continue;
      imports::ImportModel::Interpreter python = model.start();
      if (!python.found) continue;
      loader::Process& p = python.process;
      model.import_requirements(p, python.caller, d);
      model.import(p, python.caller, d);
      std::optional<RuleRun> run = model.package_loads().run(p, python.caller, d, moment);
      if (!run) continue;
      note_opened(p, *run, out.opened);
      if (std::optional<Finding> f = package_load_finding(ctx, *run)) out.findings.push_back(std::move(*f));
    }
  }
}

}  // namespace

PackageLoadResult check_package_loads(const Context& ctx) {
  PackageLoadResult out;
  check_openers(ctx, out);
  check_later_moments(ctx, out);
  return out;
}

}  // namespace envdoctor::checks
