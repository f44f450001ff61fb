#include "checks/cuda/cuda_checks.h"

#include "python/metadata_file.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <functional>
#include <tuple>
#include <unordered_map>

#include "checks/cuda/beyond_table.h"
#include "checks/import_order.h"
#include "cuda/arch.h"
#include "imports/python_process.h"
#include "loader/search_paths.h"
#include "support/text.h"

namespace envdoctor::checks {

using environment::ElfRecord;
using environment::Environment;

namespace fs = std::filesystem;
using cuda::DriverVersion;
using cuda::FatbinEntry;
using cuda::MajorMinor;
using support::join;
using support::join_some;

// ---------------------------------------------------------------------------------------------
// The checks.

namespace {

std::string arch_sm(int sm) { return "sm_" + std::to_string(sm); }

std::string code_text(const GpuCode& g) {
  return (g.sass.empty() ? std::string("SASS none") : "SASS for " + join(g.sass)) + "; PTX " +
         (g.ptx.empty() ? std::string("none") : join(g.ptx));
}

// Arch-specific cubins (sm_90a) of the GPU's neighbours: the reason a "sm_90" build does not run.
std::string arch_specific_note(const GpuCode& g, int gpu_sm) {
  std::vector<std::string> names;
  for (const FatbinEntry& e : g.fatbins.entries)
    if (!e.relocatable && e.variant == 'a' && e.sm != gpu_sm && e.kind == FatbinEntry::Kind::kSass)
      names.push_back(e.arch_name() + " runs only on " + cuda::compute_capability_name(e.sm));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names.empty() ? "" : " (" + join(names) + ": arch-specific code)";
}

Finding arch_finding(const GpuCode& g, const cuda::Gpu& gpu, const cuda::Coverage& c,
                     const std::optional<DriverVersion>& driver, const cuda::CudaTables& tables) {
  const ElfRecord& r = *g.file;
  const python::Distribution* owner = r.owners.empty() ? nullptr : r.owners.front();
  std::string sm = arch_sm(gpu.sm);
  std::string cc = cuda::compute_capability_name(gpu.sm);
  Finding f;
  f.file = r.path;
  if (owner) f.package = owner->name;
  f.arch = sm;
  std::string who = owner ? owner->name + " " + owner->version : r.path;
  std::string build = owner ? "install a build of " + owner->name : "rebuild it";
  if (c.kind == cuda::Coverage::Kind::kPtxJit) {
    f.code = Code::kPtxJitOnly;
    f.severity = Severity::kWarning;
    f.message =
        "no SASS for " + sm + " in " + r.path + ": " + code_text(g) + "; the driver JIT-compiles the PTX on first use";
    f.hint = who + " has no SASS for " + sm +
             ": the first launch of each kernel compiles it (slow start; cached in ~/.nv/ComputeCache); " + build +
             " with SASS for " + sm + " (from source: TORCH_CUDA_ARCH_LIST=\"" + cc + "\")";
    return f;
  }
  f.code = Code::kGpuArchUnsupported;
  f.severity = Severity::kError;
  f.message = "no kernel image for " + sm + " in " + r.path + ": " + code_text(g) + arch_specific_note(g, gpu.sm);
  f.hint = who + " carries no code that runs on " + sm + " (compute capability " + cc + "): " + build + " for " + sm +
           ", or a wheel built with PTX (compute_" + std::to_string(gpu.sm) +
           " or lower) for the driver to JIT; from source: TORCH_CUDA_ARCH_LIST=\"" + cc + "+PTX\"";
  if (g.toolkit_library) {
    // NVIDIA's libraries are built for every GPU their CUDA release supports, and no other.
    f.hint = fs::path(r.path).filename().string() +
             " is NVIDIA's build for CUDA releases that no longer (or do not yet) "
             "support compute capability " +
             cc + ": install the CUDA libraries of a release that supports " + sm +
             (owner ? " in place of " + owner->name : std::string());
  }
  if (!c.deciding.empty() && driver) {
    // PTX that fits the GPU but is newer than the driver can compile: the driver JITs the PTX
    // ISA of its own CUDA release and older (docs/cuda.md, "Compatibility rules").
    const FatbinEntry& e = c.deciding.front();
    MajorMinor isa{e.ptx_isa_major, e.ptx_isa_minor};
    std::optional<DriverVersion> need = tables.driver_for_ptx_isa(isa);
    f.message += "; the driver " + driver->text + " cannot JIT " + e.arch_name() + " (PTX ISA " + isa.str() +
                 (need ? ", needs " + need->text + " or newer" : std::string()) + ")";
    f.hint = who + " has PTX for " + sm + " that this driver is too old to compile: upgrade the NVIDIA driver" +
             (need ? " to " + need->text + " or newer" : std::string()) + ", or " + build + " with SASS for " + sm +
             " (from source: TORCH_CUDA_ARCH_LIST=\"" + cc + "\")";
  }
  return f;
}

std::vector<Finding> check_gpu_archs(const CudaInventory& inv, const cuda::CudaTables& tables, const CudaTarget& target,
                                     const std::optional<DriverVersion>& driver) {
  std::vector<Finding> out;
  for (const GpuCode& g : inv.gpu_code)
    for (const cuda::Gpu& gpu : target.gpus) {
      cuda::Coverage c = gpu_coverage(g, gpu.sm, driver, tables);
      if (c.kind == cuda::Coverage::Kind::kPtxJit || c.kind == cuda::Coverage::Kind::kUnsupported)
        out.push_back(arch_finding(g, gpu, c, driver, tables));
    }
  return out;
}

std::string runtime_text(const CudaRuntime& rt) {
  std::string version = rt.version ? rt.version->str() : std::to_string(rt.major) + ".x";
  std::string from = rt.owner                    ? rt.owner->name + " " + rt.owner->version
                     : rt.version_source.empty() ? rt.origin
                                                 : rt.version_source;
  return "CUDA runtime " + version + " (" + rt.soname + ", " + from + ")";
}

std::string driver_text(const DriverVersion& kernel, const std::optional<ForwardCompat>& compat) {
  std::string s = kernel.text;
  if (compat && compat->version > kernel)
    s += " (" + compat->version.text + " through the forward-compatibility libcuda " + compat->path + ")";
  return s;
}

std::vector<Finding> check_driver(const Environment& env, const CudaInventory& inv, const cuda::CudaTables& tables,
                                  const CudaTarget& target, std::vector<std::string>& notes) {
  std::vector<Finding> out;
  std::optional<DriverVersion> driver = effective_driver(inv, target);
  if (!driver) return out;
  for (const CudaRuntime& rt : inv.runtimes) {
    RuntimeOnDriver verdict = runtime_on_driver(rt, tables, driver);
    const DriverRequirement& need = verdict.need;
    if (verdict.fit == DriverFit::kMinorCompat) {
      std::optional<MajorMinor> supported = newest_cuda_for_driver(*driver, tables);
      notes.push_back(runtime_text(rt) + " runs on driver " + driver_text(*target.driver, inv.forward_compat) +
                      " only through CUDA minor-version compatibility (" + std::to_string(rt.major) +
                      ".x needs >= " + need.minor_floor->text +
                      (need.full && rt.version ? "; " + rt.version->str() + " itself needs " + need.full->text : "") +
                      "): APIs and PTX newer than CUDA " + (supported ? supported->str() : std::string("?")) +
                      " are unavailable");
      continue;
    }
    if (verdict.fit == DriverFit::kReleaseUnknown) {
      notes.push_back(runtime_text(rt) + " runs on driver " + driver_text(*target.driver, inv.forward_compat) +
                      " at least through CUDA minor-version compatibility (" + std::to_string(rt.major) +
                      ".x needs >= " + need.minor_floor->text +
                      "); its release is not known (no version in its real file name, no toolkit version.json, no "
                      "package), so whether this driver runs all of it is not known");
      continue;
    }
    if (verdict.fit == DriverFit::kNotInTable)
      notes.push_back(runtime_text(rt) + " is not in data/cuda.json; its driver requirement was not checked");
    // kBeyondTable is a note from cuda_beyond_table_notes, not a verdict.
    if (verdict.fit != DriverFit::kTooOld) continue;
    const std::optional<DriverVersion>& required = verdict.required;
    Finding f;
    f.code = Code::kCudaDriverTooOld;
    f.severity = Severity::kError;
    f.file = rt.path;
    f.library = rt.soname;
    if (rt.owner) f.package = rt.owner->name;
    f.message = runtime_text(rt) + " needs driver >= " + required->text + "; this driver is " +
                driver_text(*target.driver, inv.forward_compat);
    std::string hint = "upgrade the NVIDIA driver to " + required->text + " or newer";
    if (need.minor_floor && need.full && *need.minor_floor < *need.full)
      hint += " (any driver >= " + need.minor_floor->text + " runs CUDA " + std::to_string(rt.major) +
              ".x through minor-version compatibility)";
    std::vector<std::string> users = inv.user_names(env, rt.path);
    std::optional<MajorMinor> supported = newest_cuda_for_driver(*driver, tables);
    if (!users.empty())
      hint += ", or install the builds for CUDA " + (supported ? supported->str() : std::string("?")) +
              " or older of what uses it: " + join(users);
    else if (rt.owner)
      hint += "; nothing in the environment loads it (pip uninstall " + rt.owner->name + " if nothing will)";
    f.hint = hint;
    out.push_back(std::move(f));
  }
  return out;
}

// --- cuda-major-mix ----------------------------------------------------------------------------

using MajorMask = u32;

std::string majors_text(MajorMask mask) {
  std::vector<std::string> names;
  for (int m = 0; m < 32; ++m)
    if (mask & (1u << m)) names.push_back(std::to_string(m));
  if (names.size() < 2) return "CUDA " + join(names);
  std::string last = names.back();
  names.pop_back();
  return "CUDA " + join(names) + " and " + last;
}

// The majors each file's load graph reaches, with one library of each (and the dependency it
// comes through), over the load model's resolution edges.
class MajorGraph {
 public:
  struct Reach {
    MajorMask mask = 0;
    std::map<int, std::pair<std::string, std::string>> example;  // major -> (library, via)
  };

  MajorGraph(const Environment& env, const CudaInventory& inv) : inv_(inv) {
    for (const CudaLibrary& lib : inv.libraries) libs_[cuda_path_key(env, lib.path)] = &lib;
  }

  const Reach& reach(const std::string& node) {
    if (auto it = memo_.find(node); it != memo_.end()) return it->second;
    Reach r;
    if (!visiting_.insert(node).second) return empty_;  // a cycle adds nothing new
    if (auto it = libs_.find(node); it != libs_.end()) {
      r.mask |= 1u << it->second->major;
      r.example[it->second->major] = {node, ""};
    }
    if (auto it = inv_.needs.find(node); it != inv_.needs.end())
      for (const std::string& child : it->second) {
        const Reach& c = reach(child);
        r.mask |= c.mask;
        for (const auto& [major, ex] : c.example)
          if (!r.example.count(major)) r.example[major] = {ex.first, ex.first == child ? "" : child};
      }
    visiting_.erase(node);
    return memo_[node] = std::move(r);
  }

  const CudaLibrary* library(const std::string& node) const {
    auto it = libs_.find(node);
    return it == libs_.end() ? nullptr : it->second;
  }

 private:
  const CudaInventory& inv_;
  std::map<std::string, const CudaLibrary*> libs_;
  std::map<std::string, Reach> memo_;
  std::set<std::string> visiting_;
  Reach empty_;
};

std::string example_text(const MajorGraph& graph, const std::pair<std::string, std::string>& ex) {
  const CudaLibrary* lib = graph.library(ex.first);
  std::string s = lib ? lib->soname + " (" + lib->origin + ")" : fs::path(ex.first).filename().string();
  if (!ex.second.empty()) s += " through " + fs::path(ex.second).filename().string();
  return s;
}

std::string examples_text(const MajorGraph& graph, const MajorGraph::Reach& r, MajorMask mask) {
  std::vector<std::string> parts;
  for (const auto& [major, ex] : r.example)
    if (mask & (1u << major)) parts.push_back(example_text(graph, ex));
  return join(parts, " and ");
}

std::string pip_name(const python::Distribution* d) { return d ? d->name : std::string("it"); }

// A cuda-major-mix finding: the three ways two majors meet (in one file's load graph, in one
// package's import context, between two packages' contexts) differ only in their words.
Finding major_mix(Severity severity, const std::string& file, const python::Distribution* owner, std::string message,
                  std::string hint) {
  Finding f;
  f.code = Code::kCudaMajorMix;
  f.severity = severity;
  f.file = file;
  if (owner) f.package = owner->name;
  f.message = std::move(message);
  f.hint = std::move(hint);
  return f;
}

// Files whose own load graph joins two majors: the graph reaches both, and no single dependency
// already did (that dependency is the place to report).
void mixes_in_load_graphs(const Environment& env, const CudaInventory& inv, MajorGraph& graph,
                          std::vector<Finding>& out) {
  for (const auto& [node, children] : inv.needs) {
    const MajorGraph::Reach& r = graph.reach(node);
    if (std::popcount(r.mask) < 2) continue;
    bool joined_below = std::any_of(children.begin(), children.end(),
                                    [&](const std::string& c) { return graph.reach(c).mask == r.mask; });
    if (joined_below) continue;
    const ElfRecord* rec = env.elf(node);
    std::string file = rec ? rec->path : node;
    const python::Distribution* owner = env.owner(file);
    int newest = 31 - std::countl_zero(r.mask);
    out.push_back(major_mix(Severity::kError, file, owner,
                            majors_text(r.mask) + " libraries in one process: " + fs::path(file).filename().string() +
                                " loads " + examples_text(graph, r, r.mask),
                            "a process can use one CUDA major: install the build of " + pip_name(owner) + " for CUDA " +
                                std::to_string(newest) + " (and of whatever pulls in the older runtime), or CUDA " +
                                std::to_string(std::countr_zero(r.mask)) + " builds throughout"));
  }
}

// An extension module imported after its package's requirements (Python's import order, as the
// load model has it): their modules' majors and its own meet in the process.
void mixes_in_import_context(const Context& ctx, MajorGraph& graph, std::vector<Finding>& out) {
  const Environment& env = ctx.env;
  const imports::ImportModel& model = ctx.model();
  const auto& modules = model.modules_by_distribution();
  for (const auto& [dist, files] : modules) {
    MajorMask context = 0;
    std::vector<std::string> context_examples, context_names;
    for (const python::Distribution* dep : env.requirement_closure(*dist)) {
      auto it = modules.find(dep);
      if (it == modules.end()) continue;
      for (const ElfRecord* m : it->second) {
        const MajorGraph::Reach& r = graph.reach(cuda_path_key(env, m->path));
        if ((r.mask & ~context) == 0) continue;
        context_examples.push_back(examples_text(graph, r, r.mask & ~context));
        context |= r.mask;
        context_names.push_back(dep->name);
      }
    }
    if (!context) continue;
    for (const ElfRecord* file : files) {
      const MajorGraph::Reach& r = graph.reach(cuda_path_key(env, file->path));
      MajorMask all = r.mask | context;
      if (!r.mask || all == r.mask || all == context) continue;
      out.push_back(
          major_mix(Severity::kError, file->path, dist,
                    majors_text(all) + " libraries in one process: " + fs::path(file->path).filename().string() +
                        " loads " + examples_text(graph, r, r.mask & ~context) + " after " + join(context_names) +
                        " loaded " + join(context_examples, " and "),
                    dist->name + " " + dist->version + " is built for " + majors_text(r.mask & ~context) + " and " +
                        join(context_names) + " for " + majors_text(context & ~r.mask) + ": install the builds of " +
                        dist->name + " and " + join(context_names) + " for one CUDA major"));
    }
  }
}

// Two packages that each import on one CUDA major, but not the same one: a process that imports
// both loads two CUDA runtimes, whichever comes first (libcudart.so.12 and libcudart.so.13 are
// different SONAMEs, so the loader keeps both). Paired as import-order-conflict pairs copies
// (for_each_pair_across_groups), grouped by major. A package whose own import context already
// joins two majors is left to the errors above, and so is every package that requires another:
// their contexts are one.
// Returns the majors the pairs found.
MajorMask mixes_between_contexts(const Context& ctx, MajorGraph& graph, std::vector<Finding>& out) {
  const Environment& env = ctx.env;
  const imports::ImportModel& model = ctx.model();
  const auto& modules = model.modules_by_distribution();
  struct Context {
    MajorMask mask = 0;
    std::string example;  // "a's _a.so loads libcudart.so.12 (nvidia-cuda-runtime-cu12)"
  };
  std::map<const python::Distribution*, Context> contexts;
  std::map<int, std::vector<const python::Distribution*>> by_major;
  for (const auto& [dist, files] : modules) {
    Context c;
    std::vector<const python::Distribution*> imported = env.requirement_closure(*dist);
    imported.push_back(dist);
    for (const python::Distribution* d : imported) {
      auto it = modules.find(d);
      if (it == modules.end()) continue;
      for (const ElfRecord* m : it->second) {
        const MajorGraph::Reach& r = graph.reach(cuda_path_key(env, m->path));
        if (!r.mask || (r.mask & ~c.mask) == 0) continue;
        if (c.example.empty())
          c.example =
              d->name + "'s " + fs::path(m->path).filename().string() + " loads " + examples_text(graph, r, r.mask);
        c.mask |= r.mask;
      }
    }
    if (std::popcount(c.mask) != 1) continue;
    by_major[std::countr_zero(c.mask)].push_back(dist);
    contexts[dist] = std::move(c);
  }
  for (auto& [major, dists] : by_major)
    std::sort(dists.begin(), dists.end(),
              [](const python::Distribution* a, const python::Distribution* b) { return a->key() < b->key(); });
  MajorMask paired = 0;
  for_each_pair_across_groups(
      by_major, [&](const python::Distribution* a, int major_a, const python::Distribution* b, int major_b) {
        paired |= (1u << major_a) | (1u << major_b);
        const Context& ca = contexts[a];
        const Context& cb = contexts[b];
        std::string ia = import_name(env, *a), ib = import_name(env, *b);
        Finding f = major_mix(
            Severity::kWarning, modules.at(a).front()->path, a,
            majors_text(ca.mask | cb.mask) + " libraries in one process: `import " + ia + ", " + ib +
                "`: " + ca.example + ", " + cb.example,
            a->name + " " + a->version + " is built for CUDA " + std::to_string(major_a) + " and " + b->name + " " +
                b->version + " for CUDA " + std::to_string(major_b) +
                ": each imports alone, but a process that imports both (in either order) holds two CUDA runtimes; "
                "install the builds of " +
                a->name + " and " + b->name + " for one CUDA major, or import them in separate processes");
        f.packages = {a->name, b->name};
        out.push_back(std::move(f));
      });
  return paired;
}

// The packages (outside NVIDIA's own libraries) with an ELF file whose NEEDED names one of `libs`,
// found or not: a library nothing loads because its user's search misses it is still needed.
std::set<std::string> needers_outside(const Environment& env, const std::vector<const CudaLibrary*>& libs,
                                      const std::set<std::string>& providers, const std::set<std::string>& cuda_paths) {
  std::set<std::string> sonames, out;
  for (const CudaLibrary* lib : libs) sonames.insert(lib->soname);
  for (const environment::ElfRecord& r : env.elf_files) {
    if (!r.opened || !r.opened->elf || cuda_paths.count(cuda_path_key(env, r.path))) continue;
    const python::Distribution* d = env.owner(r.path);
    if (!d || providers.count(d->name)) continue;
    for (std::string_view needed : r.opened->elf->needed)
      if (sonames.count(std::string(needed))) out.insert(d->name);
  }
  return out;
}

// Libraries of several majors anywhere in the environment (or reached from it): a warning,
// with who uses each major, so that the unused one can go. Left out when pairs of packages
// (mixes_between_contexts) already account for every major: they say it all, and say who.
void mix_in_environment(const Environment& env, const CudaInventory& inv, MajorMask paired, std::vector<Finding>& out) {
  std::map<int, std::vector<const CudaLibrary*>> by_major;
  for (const CudaLibrary& lib : inv.libraries) by_major[lib.major].push_back(&lib);
  if (by_major.size() < 2) return;
  if (std::all_of(by_major.begin(), by_major.end(), [&](const auto& m) { return paired & (1u << m.first); })) return;
  std::set<std::string> providers, cuda_paths;
  for (const CudaLibrary& lib : inv.libraries) {
    if (lib.owner) providers.insert(lib.owner->name);
    cuda_paths.insert(cuda_path_key(env, lib.path));
  }

  MajorMask mask = 0;
  std::vector<std::string> parts, uses;
  std::set<std::string> packages;
  for (const auto& [major, libs] : by_major) {
    mask |= 1u << major;
    std::vector<std::string> names;
    std::set<std::string> users, owners;
    for (const CudaLibrary* lib : libs) {
      std::string name = lib->soname + " (" + lib->origin + ")";
      if (std::find(names.begin(), names.end(), name) == names.end())
        names.insert(cudart_major(lib->soname) ? names.begin() : names.end(), name);
      if (lib->owner) owners.insert(lib->owner->name);
      if (auto it = inv.users.find(cuda_path_key(env, lib->path)); it != inv.users.end())
        for (const std::string& user : it->second) {
          if (cuda_paths.count(user)) continue;  // NVIDIA's libraries using each other
          const python::Distribution* d = env.owner(user);
          std::string name = d ? d->name : user + " (no package)";
          if (!providers.count(name)) users.insert(name);
        }
    }
    packages.insert(owners.begin(), owners.end());
    parts.push_back("CUDA " + std::to_string(major) + ": " + join_some(names));
    std::set<std::string> needers = needers_outside(env, libs, providers, cuda_paths);
    if (!users.empty())
      uses.push_back("CUDA " + std::to_string(major) + " is used by " + join_some({users.begin(), users.end()}));
    else if (!needers.empty())  // a NEEDED entry that does not find it still needs it: no uninstall
      uses.push_back("CUDA " + std::to_string(major) + " is needed by " + join_some({needers.begin(), needers.end()}) +
                     ", which does not find it where it looks");
    else if (!owners.empty())
      uses.push_back("nothing loads the CUDA " + std::to_string(major) + " libraries: pip uninstall " +
                     join({owners.begin(), owners.end()}, " "));
    else uses.push_back("nothing loads the CUDA " + std::to_string(major) + " libraries");
  }
  const CudaLibrary& first = *by_major.begin()->second.front();
  Finding f;
  f.code = Code::kCudaMajorMix;
  f.severity = Severity::kWarning;
  f.file = first.path;
  if (first.owner) f.package = first.owner->name;
  f.packages.assign(packages.begin(), packages.end());
  f.message = majors_text(mask) + " libraries in one environment: " + join(parts, "; ");
  f.hint = join(uses, "; ") + "; a process that loads two majors gets two CUDA runtimes, so keep one";
  out.push_back(std::move(f));
}

}  // namespace

std::optional<Finding> cuda_majors_loaded(const std::vector<CudaLibrary>& libraries, int pid) {
  std::map<int, std::vector<const CudaLibrary*>> by_major;
  for (const CudaLibrary& lib : libraries) by_major[lib.major].push_back(&lib);
  if (by_major.size() < 2) return std::nullopt;
  MajorMask mask = 0;
  std::vector<std::string> parts;
  std::set<std::string> packages;
  for (const auto& [major, libs] : by_major) {
    mask |= 1u << major;
    std::vector<std::string> names;
    for (const CudaLibrary* lib : libs) {
      names.push_back(lib->soname + " (" + lib->path + ", " + lib->origin + ")");
      if (lib->owner) packages.insert(lib->owner->name);
    }
    parts.push_back("CUDA " + std::to_string(major) + ": " + join_some(names));
  }
  const CudaLibrary& first = *by_major.begin()->second.front();
  Finding f;
  f.code = Code::kCudaMajorMix;
  f.severity = Severity::kError;
  f.file = first.path;
  f.library = first.soname;
  if (first.owner) f.package = first.owner->name;
  f.packages.assign(packages.begin(), packages.end());
  f.message = majors_text(mask) + " libraries loaded in process " + std::to_string(pid) + ": " + join(parts, "; ");
  f.hint =
      "two CUDA majors in one process means two CUDA runtimes, each with its own context and memory pools: "
      "install builds of the packages this process imports for one CUDA major";
  return f;
}

namespace {

// The CUDA major of a file, as far as the inventory knows it: its own (a library of a CUDA release),
// else the environment's one major; 0 when there are several and the file is none of theirs.
int cuda_major_of(const CudaInventory& inv, const std::string& path) {
  if (const CudaLibrary* lib = inv.library(path)) return lib->major;
  for (const CudaRuntime& rt : inv.runtimes)
    if (rt.path == path) return rt.major;
  int only = 0;
  for (const CudaLibrary& lib : inv.libraries) {
    if (only && lib.major != only) return 0;
    only = lib.major;
  }
  for (const CudaRuntime& rt : inv.runtimes) {
    if (only && rt.major != only) return 0;
    only = rt.major;
  }
  return only;
}

// A GPU that a CUDA major no longer supports (check_cuda_minimum_gpu) is why a file of that major
// built for every GPU the release supports has no code for it: NVIDIA's own libraries are, and so
// is a build whose lowest code is the release's lowest GPU (torch's for CUDA 13: sm_75). Such a
// file's finding follows from the one on the major's runtime, and is no cause; a build that
// leaves out GPUs the release supports (SASS for sm_80 only) lacks the GPU for reasons of its own.
void link_to_dropped_gpu(const CudaInventory& inv, const cuda::CudaTables& tables, const std::vector<Finding>& old_gpus,
                         std::vector<Finding>& arch) {
  for (Finding& f : arch) {
    if (f.code != Code::kGpuArchUnsupported || f.caused_by) continue;
    auto code = std::find_if(inv.gpu_code.begin(), inv.gpu_code.end(),
                             [&](const GpuCode& g) { return g.file && g.file->path == f.file; });
    int major = cuda_major_of(inv, f.file);
    std::optional<int> minimum = major ? tables.minimum_sm(major) : std::nullopt;
    if (code == inv.gpu_code.end() || !minimum || !(code->toolkit_library || code->lowest_sm == *minimum)) continue;
    for (const Finding& root : old_gpus) {
      if (root.arch != f.arch || cuda_major_of(inv, root.file) != major) continue;
      f.caused_by = Cause{root.code, root.file, root.library, std::nullopt,
                          "CUDA " + std::to_string(major) + " builds no code for " + f.arch.value_or("this GPU")};
      break;
    }
  }
}

}  // namespace

CudaCheckResult check_cuda(const Context& ctx, const CudaInventory& inv, bool driver_absence_noted) {
  const Environment& env = ctx.env;
  const cuda::CudaTables& tables = ctx.tables;
  const CudaTarget& target = ctx.settings.gpu;
  CudaCheckResult result;
  std::optional<DriverVersion> driver = effective_driver(inv, target);
  for (const std::string& p : target.problems) result.notes.push_back("driver detection: " + p);

  if (target.gpus.empty()) {
    if (!inv.gpu_code.empty()) result.notes.push_back("no GPU found; pass --gpu sm_XX to check GPU code");
  } else {
    std::vector<Finding> f = check_gpu_archs(inv, tables, target, driver);
    result.findings.insert(result.findings.end(), f.begin(), f.end());
  }

  if (!target.driver) {
    if (inv.forward_compat)
      // cuda-compat's libcuda is the driver's user-space half only: it needs the kernel module.
      result.notes.push_back("no NVIDIA driver: the forward-compatibility libcuda " + inv.forward_compat->path + " (" +
                             inv.forward_compat->where + ") implements driver " + inv.forward_compat->version.text +
                             " but runs only over an NVIDIA kernel module, and on data-center GPUs (error 804, "
                             "cudaErrorCompatNotSupportedOnDevice, on others)");
    else if (!inv.runtimes.empty() && !driver_absence_noted)
      result.notes.push_back("no NVIDIA driver found; pass --driver VERSION to check the CUDA runtimes against it");
  } else {
    if (inv.forward_compat && inv.forward_compat->version > *target.driver)
      result.notes.push_back(
          "forward-compatibility libcuda " + inv.forward_compat->path + " (" + inv.forward_compat->where +
          ") raises the driver the CUDA runtimes talk to from " + target.driver->text + " to " +
          inv.forward_compat->version.text + "; the kernel module stays " + target.driver->text +
          " (forward compatibility works only on data-center GPUs with a supported kernel-module branch; on "
          "others every CUDA call fails with error 804, cudaErrorCompatNotSupportedOnDevice)");
    std::vector<Finding> f = check_driver(env, inv, tables, target, result.notes);
    result.findings.insert(result.findings.end(), f.begin(), f.end());
  }

  // What the tables cannot judge, and CUDA majors on GPUs they no longer support.
  std::vector<std::string> beyond = cuda_beyond_table_notes(inv, tables, target, driver);
  result.notes.insert(result.notes.end(), beyond.begin(), beyond.end());
  std::vector<Finding> old_gpus = check_cuda_minimum_gpu(env, inv, tables, target);
  link_to_dropped_gpu(inv, tables, old_gpus, result.findings);
  result.findings.insert(result.findings.end(), old_gpus.begin(), old_gpus.end());

  MajorGraph graph(env, inv);
  std::vector<Finding> pairs;
  MajorMask paired = mixes_between_contexts(ctx, graph, pairs);
  mix_in_environment(env, inv, paired, result.findings);
  mixes_in_load_graphs(env, inv, graph, result.findings);
  mixes_in_import_context(ctx, graph, result.findings);
  result.findings.insert(result.findings.end(), pairs.begin(), pairs.end());
  return result;
}

}  // namespace envdoctor::checks
