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

// A process of a package that opens libraries itself: its import, and its later moments' rules.
struct PackageProcess {
  const python::Distribution* dist;
  loader::Process process;
  int caller;
};

// Every package with rules of its own: imported, then its first use and first compile run. The
// processes are kept: a library that opens others (NVRTC) is judged in the process of each such
// package that loads it, where what the package preloaded (NVRTC's builtins) is in place.
std::vector<PackageProcess> check_later_moments(const Context& ctx, ImportProcesses* imported, PackageLoadResult& out) {
  const imports::ImportModel& model = ctx.model();
  std::vector<PackageProcess> processes;
  for (const python::Distribution& d : ctx.env.inventory.distributions) {
    if (!model.package_loads().has_rules(d)) continue;
    // The load checks' own import of it, where they made one; else the same steps again.
    if (auto it = imported ? imported->find(&d) : ImportProcesses::iterator(); imported && it != imported->end()) {
      if (it->second.objects().empty()) continue;  // no interpreter: nothing imports
      processes.push_back({&d, std::move(it->second), 0});
    } else {
      imports::ImportModel::Interpreter python = model.start();
      if (!python.found) continue;
      model.import_requirements(python.process, python.caller, d);
      model.import_init(python.process, python.caller, d, {});
      processes.push_back({&d, std::move(python.process), python.caller});
    }
    PackageProcess& pp = processes.back();
    for (Moment moment : {Moment::kFirstUse, Moment::kFirstCompile}) {
      std::optional<RuleRun> run = model.package_loads().run(pp.process, pp.caller, d, moment);
      if (!run) continue;
      note_opened(pp.process, *run, out.opened);
      if (std::optional<Finding> f = package_load_finding(ctx, *run)) out.findings.push_back(std::move(*f));
    }
  }
  return processes;
}

// The opener rules run for `opener` (an object of `p`), their findings and copies noted; `p` is left
// as it was.
void run_openers(const Context& ctx, loader::Process& p, int opener, PackageLoadResult& out) {
  loader::Process::Mark before = p.mark();
  // A copy: the rules' dlopen calls add objects, which moves the process's list.
  const loader::LoadedObject object = p.objects()[opener];
  for (const RuleRun& run : ctx.model().package_loads().run_opener(p, opener)) {
    note_opened(p, run, out.opened);
    for (Finding& f : opener_findings(ctx, run, object)) out.findings.push_back(std::move(f));
  }
  p.rollback(std::move(before));
}

// Whether a file of a package without rules of its own (or of none) loads `file` by a NEEDED
// entry: its process holds nothing a package preloaded.
bool loaded_without_own_loads(const Context& ctx, const imports::ResolutionMap& resolutions, const ElfRecord& file) {
  for (const auto& [soname, by_path] : resolutions) {
    auto it = by_path.find(file.path);
    if (it == by_path.end()) continue;
    for (const std::string& consumer : it->second) {
      const python::Distribution* d = ctx.env.owner(consumer);
      if (!d || !ctx.model().package_loads().has_rules(*d)) return true;
    }
  }
  return false;
}

// Every library of the environment that an opener rule names, judged where it is loaded: in the
// process of each package with rules of its own that loads it, and, where a package without any
// loads it (or nothing does), from a bare interpreter.
void check_openers(const Context& ctx, const imports::ResolutionMap& resolutions,
                   std::vector<PackageProcess>& processes, PackageLoadResult& out) {
  const imports::ImportModel& model = ctx.model();
  for (const ElfRecord& file : ctx.env.elf_files) {
    const auto& elf = file.opened ? file.opened->elf : nullptr;
    if (!elf || !elf->soname || file.executable || !model.package_loads().opens(std::string(*elf->soname))) continue;
    bool judged = false;
    for (PackageProcess& pp : processes)
      for (size_t i = 0; i < pp.process.objects().size(); ++i)
        if (pp.process.mapped(static_cast<int>(i)) && pp.process.objects()[i].elf == elf) {
          run_openers(ctx, pp.process, static_cast<int>(i), out);
          judged = true;
          break;
        }
    if (judged && !loaded_without_own_loads(ctx, resolutions, file)) continue;
    imports::ImportModel::Interpreter python = model.start();
    loader::Process& p = python.process;
    loader::Process::DlopenResult opened = p.dlopen(file.path, false, python.caller);
    if (opened.object < 0) continue;  // the opener itself does not load: the load checks say why
    run_openers(ctx, p, opened.object, out);
  }
}

}  // namespace

PackageLoadResult check_package_loads(const Context& ctx, const imports::ResolutionMap& resolutions,
                                      ImportProcesses* imported) {
  PackageLoadResult out;
  std::vector<PackageProcess> processes = check_later_moments(ctx, imported, out);
  check_openers(ctx, resolutions, processes, out);
  return out;
}

}  // namespace envdoctor::checks
