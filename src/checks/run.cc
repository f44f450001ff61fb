#include "checks/run.h"

#include "advice/fix_request.h"
#include "checks/causes.h"
#include "checks/container_checks.h"
#include "checks/cuda/driver_libraries.h"
#include "checks/import_order.h"
#include "checks/library_checks.h"
#include "checks/load_checks.h"
#include "checks/openmp.h"
#include "checks/package_loads.h"
#include "checks/preload_checks.h"
#include "checks/record_checks.h"
#include "checks/search_path_checks.h"
#include "checks/static_tls.h"
#include "checks/system_copy.h"
#include "support/parallel.h"

namespace envdoctor::checks {

using environment::Environment;

namespace {

// Each finding about a package says who installed it; a file no distribution owns is still
// Debian's when dpkg's list has it (a Debian package without Python metadata).
void attribute_installers(const Environment& env, std::vector<Finding>& findings) {
  for (Finding& f : findings) {
    if (f.package) {
      if (const python::Distribution* d = env.inventory.find(*f.package); d && !d->installer.empty())
        f.installer = d->installer;
    } else if (!f.file.empty()) {
      if (auto pkg = env.debian_owner(f.file)) {
        f.package = pkg->name;
        f.installer = "debian";
      }
    }
  }
}

// The fix pass: advice makes each finding's fix from what its check asked for, once every check is
// done, on every core (a fix may load a consumer again). Before the causes are linked, since a
// consequence takes its cause's fix.
void attach_fixes(const Context& ctx, std::vector<Finding>& findings) {
  std::vector<Finding*> asked;
  for (Finding& f : findings)
    if (f.fix_request) asked.push_back(&f);
  support::parallel_for(asked.size(), [&](size_t i) {
    Finding& f = *asked[i];
    advice::attach(*f.fix_request, advice::make_fix(ctx.env, ctx.knowledge, *f.fix_request), f.hint, f.fix_command);
    f.fix_request.reset();
  });
}

}  // namespace

CheckRun run_checks(const Context& ctx) {
  const Environment& env = ctx.env;
  CheckRun run;
  run.findings = check_records(ctx);
  LoadCheckResult loads = check_loads(ctx);
  // The NVIDIA driver's libraries are the driver's, not a package's: present with a driver, one
  // note without.
  std::vector<std::string> driver_notes = account_driver_libraries(ctx, loads.findings);
  run.needs_absent_driver = !driver_notes.empty() && !ctx.settings.gpu.driver;
  run.findings.insert(run.findings.end(), loads.findings.begin(), loads.findings.end());
  // Only the SONAMEs that two packages resolve to different files are paired (import_order.h).
  ImportOrderResult orders = check_import_order(ctx, loads.resolutions);
  run.findings.insert(run.findings.end(), orders.findings.begin(), orders.findings.end());
  for (Finding& f : check_duplicate_libraries(ctx, loads.resolutions, orders)) run.findings.push_back(std::move(f));
  for (Finding& f : check_openmp_runtimes(ctx, loads.resolutions)) run.findings.push_back(std::move(f));
  for (Finding& f : check_static_tls(ctx, loads.resolutions)) run.findings.push_back(std::move(f));
  for (Finding& f : check_search_paths(ctx)) run.findings.push_back(std::move(f));
  for (Finding& f : check_preloads(ctx)) run.findings.push_back(std::move(f));
  PackageLoadResult own = check_package_loads(ctx, loads.resolutions, &loads.processes);
  for (Finding& f : own.findings) run.findings.push_back(std::move(f));
  for (Finding& f : check_system_copies(ctx, loads.resolutions)) run.findings.push_back(std::move(f));
  // What packages open at first use or first compile is used too: JAX's plugins load both CUDA
  // runtimes when both are installed, and neither is then a library "nothing loads".
  run.cuda = index_cuda(ctx, loads.resolutions, loads.findings, own.opened);
  CudaCheckResult gpu = check_cuda(ctx, run.cuda, run.needs_absent_driver);
  run.findings.insert(run.findings.end(), gpu.findings.begin(), gpu.findings.end());
  // --image: whether the NVIDIA container toolkit starts it on this node at all.
  ContainerCheckResult container = check_container_requirements(ctx);
  run.findings.insert(run.findings.end(), container.findings.begin(), container.findings.end());
  attribute_installers(env, run.findings);
  attach_fixes(ctx, run.findings);
  link_causes(run.findings);
  sort_and_dedupe(run.findings);
  run.notes = env.problems;
  run.notes.insert(run.notes.end(), env.inventory.problems.begin(), env.inventory.problems.end());
  // Defects of one package's records (bad RECORD rows, unreadable METADATA): read around, said here.
  for (const python::Distribution& d : env.inventory.distributions)
    for (const std::string& p : d.problems) run.notes.push_back(d.name + " " + d.version + ": " + p);
  run.notes.insert(run.notes.end(), driver_notes.begin(), driver_notes.end());
  run.notes.insert(run.notes.end(), gpu.notes.begin(), gpu.notes.end());
  run.notes.insert(run.notes.end(), container.notes.begin(), container.notes.end());
  run.edges = std::move(loads.edges);
  return run;
}

}  // namespace envdoctor::checks
