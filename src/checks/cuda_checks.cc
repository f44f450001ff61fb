#include "checks/cuda_checks.h"

#include "python/metadata_file.h"

#include <algorithm>
#include <cctype>
#include <bit>
#include <charconv>
#include <filesystem>
#include <functional>
#include <tuple>
#include <unordered_map>

#include "checks/cuda_beyond_table.h"
#include "support/parallel.h"
#include "cuda/arch.h"
#include "loader/search_paths.h"

namespace envdoctor::checks {

namespace fs = std::filesystem;
using cuda::DriverVersion;
using cuda::FatbinEntry;
using cuda::MajorMinor;

// ---------------------------------------------------------------------------------------------
// The target: --gpu, --driver, or this machine.

std::optional<int> parse_gpu_arch(std::string_view text) {
  for (std::string_view prefix : {"sm_", "compute_"})
    if (text.substr(0, prefix.size()) == prefix) {
      text.remove_prefix(prefix.size());
      break;
    }
  if (!text.empty() && (text.back() == 'a' || text.back() == 'f')) text.remove_suffix(1);
  if (text.find('.') != std::string_view::npos) return cuda::parse_compute_capability(text);
  int sm = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), sm);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || sm < 10 || sm > 999)
    return std::nullopt;
  return sm;
}

std::optional<CudaTarget> resolve_cuda_target(const std::vector<std::string>& gpu_args, const std::string& driver_arg,
                                              std::string* error) {
  CudaTarget t;
  for (const std::string& arg : gpu_args) {
    std::optional<int> sm = parse_gpu_arch(arg);
    if (!sm) {
      *error = "--gpu " + arg + ": not a GPU architecture (sm_86, sm_90a, 8.6 or 86)";
      return std::nullopt;
    }
    bool seen = std::any_of(t.gpus.begin(), t.gpus.end(), [&](const cuda::Gpu& g) { return g.sm == *sm; });
    if (!seen) t.gpus.push_back({"sm_" + std::to_string(*sm), *sm});
  }
  if (!gpu_args.empty()) t.gpus_source = "--gpu";
  if (!driver_arg.empty()) {
    t.driver = DriverVersion::parse(driver_arg);
    if (!t.driver) {
      *error = "--driver " + driver_arg + ": not a driver version (580.65.06)";
      return std::nullopt;
    }
    t.driver_source = "--driver";
  }
  if (t.gpus.empty() || !t.driver) {
    cuda::DriverInfo info = cuda::detect_driver();
    if (t.gpus.empty()) {
      t.gpus = info.gpus;
      t.gpus_source = info.gpus_source;
    }
    if (!t.driver && info.version) {
      t.driver = info.version;
      t.driver_source = info.version_source;
      t.driver_cuda = info.cuda;
    }
    t.problems = info.problems;
  }
  return t;
}

// ---------------------------------------------------------------------------------------------
// The inventory.

namespace {

std::string arch_sm(int sm) { return "sm_" + std::to_string(sm); }

std::string join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// The first `limit` items and a count of the rest.
std::string join_some(const std::vector<std::string>& items, size_t limit = 3) {
  std::vector<std::string> shown(items.begin(), items.begin() + std::min(limit, items.size()));
  std::string out = join(shown);
  if (items.size() > limit) out += " and " + std::to_string(items.size() - limit) + " more";
  return out;
}

std::optional<int> leading_int(std::string_view s) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr == s.data()) return std::nullopt;
  return v;
}

// auditwheel and friends rename a bundled library with a hash of its content:
// "libcudart-1a2b3c4d.so.12" is libcudart.so.12.
std::string without_repair_hash(std::string_view name) {
  size_t dash = name.find('-');
  size_t so = name.find(".so");
  if (dash == std::string_view::npos || so == std::string_view::npos || so != dash + 9) return std::string(name);
  for (size_t i = dash + 1; i < so; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(name[i]))) return std::string(name);
  return std::string(name.substr(0, dash)) + std::string(name.substr(so));
}

// "libcudart.so.12" -> 12, "libcudart.so.11.0" -> 11: the runtime's SONAME carries its major.
std::optional<int> cudart_major(std::string_view soname) {
  constexpr std::string_view prefix = "libcudart.so.";
  std::string name = without_repair_hash(soname);
  if (std::string_view(name).substr(0, prefix.size()) != prefix) return std::nullopt;
  return leading_int(std::string_view(name).substr(prefix.size()));
}

// "nvidia-cudnn-cu12" -> 12.
std::optional<int> cu_suffix_major(std::string_view key) {
  size_t at = key.rfind("-cu");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view digits = key.substr(at + 3);
  std::optional<int> v = leading_int(digits);
  return v && std::to_string(*v) == digits ? v : std::nullopt;
}

// A path component naming a CUDA major: nvidia/cu13/lib (the CUDA 13 wheels' folder) or
// /usr/local/cuda-12.4 (a system toolkit).
std::optional<int> folder_major(const std::string& path) {
  fs::path prev;
  for (const fs::path& part : fs::path(path).parent_path()) {
    std::string s = part.string();
    if (prev == "nvidia" && s.rfind("cu", 0) == 0) {
      std::optional<int> v = leading_int(std::string_view(s).substr(2));
      if (v && std::to_string(*v) == s.substr(2)) return v;
    }
    if (s.rfind("cuda-", 0) == 0)
      if (std::optional<int> v = leading_int(std::string_view(s).substr(5))) return v;
    prev = part;
  }
  return std::nullopt;
}

bool is_cuda_library(const Knowledge& knowledge, std::string_view soname) {
  if (cudart_major(soname)) return true;
  for (const KnownLibrary* l : knowledge.providers(without_repair_hash(soname)))
    if (l->cuda != 0) return true;
  return false;
}

// Which CUDA major a library belongs to, and how that is known; 0 when it cannot be told.
int library_major(const Knowledge& knowledge, std::string_view soname, const python::Distribution* owner,
                  const std::string& path, std::string* source) {
  if (std::optional<int> m = cudart_major(soname)) {
    *source = "its SONAME";
    return *m;
  }
  if (owner) {
    std::string key = python::normalize_name(owner->name);
    for (const KnownLibrary* l : knowledge.providers(soname))
      if (python::normalize_name(l->package) == key && l->cuda != 0) {
        *source = owner->name;
        return l->cuda;
      }
    if (std::optional<int> m = cu_suffix_major(key)) {
      *source = owner->name;
      return *m;
    }
  }
  if (int m = knowledge.cuda_major(soname); m != 0) {
    *source = "data/sonames.json";
    return m;
  }
  if (std::optional<int> m = folder_major(path)) {
    *source = "its folder";
    return *m;
  }
  return 0;
}

// A path with its links resolved, inside the root under --root (never on this machine's tree).
std::string canonical_in(const support::FileRoot& root, const std::string& path) {
  if (!root.empty()) return root.canonical(path);
  std::error_code ec;
  fs::path p = fs::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

std::vector<std::string> ld_library_path_dirs(const Environment& env) {
  return loader::split_search_path(env.loader.ld_library_path, ":;", std::nullopt, env.loader);
}

bool in_ld_library_path(const Environment& env, const std::string& path) {
  std::string dir = fs::path(path).parent_path().string();
  for (const std::string& d : ld_library_path_dirs(env))
    if (!d.empty() && canonical_in(env.root, d) == canonical_in(env.root, dir)) return true;
  return false;
}

std::string origin_of_file(const Environment& env, const python::Distribution* owner, const std::string& path) {
  if (owner) return owner->name;
  if (in_ld_library_path(env, path)) return "LD_LIBRARY_PATH";
  return env.elf(path) ? "no package" : "system";
}

// The loadable GPU code of one file, named as nvcc names it, sorted by sm then variant.
GpuCode gpu_code_of(const Environment& env, const ElfRecord& r) {
  GpuCode g;
  g.file = &r;
  g.fatbins = env.fatbins(*r.opened->elf);
  std::set<std::tuple<int, char, std::string>> sass, ptx;
  for (const FatbinEntry& e : g.fatbins.entries) {
    if (e.relocatable) continue;
    if (e.kind == FatbinEntry::Kind::kSass) sass.emplace(e.sm, e.variant, e.arch_name());
    if (e.kind == FatbinEntry::Kind::kPtx) ptx.emplace(e.sm, e.variant, e.arch_name());
  }
  for (const auto& [sm, variant, name] : sass) g.sass.push_back(name);
  for (const auto& [sm, variant, name] : ptx) g.ptx.push_back(name);
  int lowest = std::min(sass.empty() ? 1000 : std::get<0>(*sass.begin()), ptx.empty() ? 1000 : std::get<0>(*ptx.begin()));
  g.lowest_sm = lowest == 1000 ? 0 : lowest;
  return g;
}

std::optional<MajorMinor> runtime_version_from_name(const std::string& file_name, int major) {
  constexpr std::string_view prefix = "libcudart.so.";
  if (file_name.rfind(prefix, 0) != 0) return std::nullopt;
  std::string_view rest = std::string_view(file_name).substr(prefix.size());
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  // libcudart.so.12.4.127 names its release; libcudart.so.11.0 is CUDA 11's SONAME, the same
  // for every 11.x, and says nothing of the release: only a name with a patch number counts.
  if (rest.find('.', dot + 1) == std::string_view::npos) return std::nullopt;
  std::optional<int> mj = leading_int(rest.substr(0, dot));
  std::optional<int> mn = leading_int(rest.substr(dot + 1));
  if (!mj || !mn || *mj != major) return std::nullopt;
  return MajorMinor{*mj, *mn};
}

CudaRuntime runtime_of(const Environment& env, const CudaLibrary& lib) {
  CudaRuntime rt;
  rt.path = lib.path;
  rt.soname = lib.soname;
  rt.major = lib.major;
  rt.owner = lib.owner;
  rt.origin = lib.origin;
  // libcudart.so.12.4.127 names its release; NVIDIA's wheels ship only the SONAME, and their
  // package version is the runtime's (nvidia-cuda-runtime-cu12 12.4.127).
  std::string real = without_repair_hash(fs::path(canonical_in(env.root, lib.path)).filename().string());
  if ((rt.version = runtime_version_from_name(real, rt.major))) {
    rt.version_source = "file " + real;
  } else if (lib.owner && python::normalize_name(lib.owner->name).rfind("nvidia-cuda-runtime", 0) == 0) {
    std::string_view v = lib.owner->version;
    std::optional<int> mj = leading_int(v);
    size_t dot = v.find('.');
    std::optional<int> mn = dot == std::string_view::npos ? std::nullopt : leading_int(v.substr(dot + 1));
    if (mj && mn && *mj == rt.major) {
      rt.version = MajorMinor{*mj, *mn};
      rt.version_source = lib.owner->name + " " + lib.owner->version;
    }
  }
  return rt;
}

// cuda-compat's libcuda.so.1 where libcudart's dlopen finds it first: LD_LIBRARY_PATH, searched
// before ld.so.cache (glibc elf/dl-load.c _dl_map_object). A copy elsewhere in the environment is
// not on libcudart's search path and changes nothing.
std::optional<ForwardCompat> find_forward_compat(const Environment& env) {
  for (const std::string& dir : ld_library_path_dirs(env)) {
    std::string link = loader::join_path(dir, "libcuda.so.1");
    std::error_code ec;
    if (!fs::exists(env.host(link), ec)) continue;
    std::string real = canonical_in(env.root, link);
    std::optional<DriverVersion> v = cuda::parse_libcuda_file_name(real);
    if (!v) return std::nullopt;  // the first one found shadows the rest, and says nothing
    return ForwardCompat{real, *v, "LD_LIBRARY_PATH"};
  }
  return std::nullopt;
}

}  // namespace

const CudaLibrary* CudaInventory::library(const std::string& path) const {
  for (const CudaLibrary& l : libraries)
    if (l.path == path) return &l;
  return nullptr;
}

std::vector<std::string> CudaInventory::user_names(const Environment& env, const std::string& path) const {
  std::set<std::string> names;
  auto it = users.find(canonical_in(env.root, path));
  if (it == users.end()) return {};
  for (const std::string& user : it->second) {
    const python::Distribution* d = env.owner(user);
    names.insert(d ? d->name : fs::path(user).filename().string() + " (no package)");
  }
  return {names.begin(), names.end()};
}

CudaInventory index_cuda(const Environment& env, const Knowledge& knowledge, const ResolutionMap& resolutions) {
  CudaInventory inv;

  // GPU code: every file's fatbinary headers, on every core.
  std::vector<std::optional<GpuCode>> code(env.elf_files.size());
  support::parallel_for(env.elf_files.size(), [&](size_t i) {
    const ElfRecord& r = env.elf_files[i];
    if (r.opened->status != loader::OpenResult::Status::kOk) return;
    GpuCode g = gpu_code_of(env, r);
    g.toolkit_library = r.opened->elf->soname && is_cuda_library(knowledge, *r.opened->elf->soname);
    if (!g.sass.empty() || !g.ptx.empty()) code[i] = std::move(g);
  });
  for (std::optional<GpuCode>& g : code)
    if (g) inv.gpu_code.push_back(std::move(*g));

  // Who loads what, by real file, so that a symlink and its target are one library.
  std::unordered_map<std::string, std::string> canon;
  auto canon_of = [&](const std::string& p) -> const std::string& {
    auto it = canon.find(p);
    if (it == canon.end()) it = canon.emplace(p, canonical_in(env.root, p)).first;
    return it->second;
  };
  for (const auto& [soname, by_path] : resolutions)
    for (const auto& [target, consumers] : by_path)
      for (const std::string& consumer : consumers) {
        inv.needs[canon_of(consumer)].insert(canon_of(target));
        inv.users[canon_of(target)].insert(canon_of(consumer));
      }

  // CUDA libraries: the environment's own, then those its files reach outside it.
  std::set<std::string> seen;
  auto add = [&](const std::string& path, std::string_view soname, const python::Distribution* owner) {
    if (!is_cuda_library(knowledge, soname) || !seen.insert(canon_of(path)).second) return;
    CudaLibrary lib;
    lib.path = path;
    lib.soname = std::string(soname);
    lib.owner = owner;
    lib.major = library_major(knowledge, soname, owner, path, &lib.major_source);
    lib.origin = origin_of_file(env, owner, path);
    if (lib.major > 0 && lib.major < 32) inv.libraries.push_back(std::move(lib));
  };
  for (const ElfRecord& r : env.elf_files) {
    if (r.opened->status != loader::OpenResult::Status::kOk || !r.opened->elf->soname) continue;
    if (r.extension_module || r.executable) continue;
    add(r.path, *r.opened->elf->soname, r.owners.empty() ? nullptr : r.owners.front());
  }
  for (const auto& [soname, by_path] : resolutions)
    for (const auto& [target, consumers] : by_path) add(target, soname, env.owner(target));
  std::sort(inv.libraries.begin(), inv.libraries.end(),
            [](const CudaLibrary& a, const CudaLibrary& b) { return a.path < b.path; });

  for (const CudaLibrary& lib : inv.libraries)
    if (cudart_major(lib.soname)) inv.runtimes.push_back(runtime_of(env, lib));
  inv.forward_compat = find_forward_compat(env);
  return inv;
}

// ---------------------------------------------------------------------------------------------
// Driver arithmetic.

std::optional<DriverVersion> effective_driver(const CudaInventory& inventory, const CudaTarget& target) {
  if (!target.driver) return std::nullopt;
  if (inventory.forward_compat && inventory.forward_compat->version > *target.driver)
    return inventory.forward_compat->version;
  return target.driver;
}

DriverRequirement driver_requirement(const CudaRuntime& runtime, const cuda::CudaTables& tables) {
  DriverRequirement r;
  r.unknown = runtime_beyond_table(runtime, tables);
  if (r.unknown) return r;
  if (runtime.version) {
    r.full = tables.full_compat_driver(*runtime.version);
    if (!r.full) {
      // A release the table does not list (a later update): at least its major's newest
      // listed release needs.
      for (const cuda::ToolkitDriverMinimum& t : tables.toolkit_driver_minimum)
        if (t.cuda.major == runtime.major && t.cuda < *runtime.version && (!r.full || *r.full < t.linux_driver))
          r.full = t.linux_driver;
    }
  }
  r.minor_floor = tables.minor_compat_driver(runtime.major);
  return r;
}

std::optional<MajorMinor> newest_cuda_for_driver(const DriverVersion& driver, const cuda::CudaTables& tables) {
  return tables.newest_cuda_for_driver(driver);
}

// ---------------------------------------------------------------------------------------------
// The checks.

namespace {

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
    f.message = "no SASS for " + sm + " in " + r.path + ": " + code_text(g) + "; the driver JIT-compiles the PTX on first use";
    f.hint = who + " has no SASS for " + sm + ": the first launch of each kernel compiles it (slow start; cached in ~/.nv/ComputeCache); " +
             build + " with SASS for " + sm + " (from source: TORCH_CUDA_ARCH_LIST=\"" + cc + "\")";
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
    f.hint = fs::path(r.path).filename().string() + " is NVIDIA's build for CUDA releases that no longer (or do not yet) "
             "support compute capability " + cc + ": install the CUDA libraries of a release that supports " + sm +
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
      if (g.toolkit_library && gpu.sm >= g.lowest_sm) continue;
      cuda::Coverage c = cuda::classify(g.fatbins, gpu.sm, driver, tables);
      if (c.kind == cuda::Coverage::Kind::kPtxJit || c.kind == cuda::Coverage::Kind::kUnsupported)
        out.push_back(arch_finding(g, gpu, c, driver, tables));
    }
  return out;
}

std::string runtime_text(const CudaRuntime& rt) {
  std::string version = rt.version ? rt.version->str() : std::to_string(rt.major) + ".x";
  std::string from = rt.owner ? rt.owner->name + " " + rt.owner->version
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
    DriverRequirement need = driver_requirement(rt, tables);
    if (need.unknown) continue;  // a note from cuda_beyond_table_notes, not a verdict
    if (need.full && *driver >= *need.full) continue;
    if (need.minor_floor && *driver >= *need.minor_floor) {
      // CUDA's minor-version compatibility (CUDA Compatibility guide, "Minor Version
      // Compatibility"): a 12.x runtime runs on any driver of the 12 family, without the
      // features that need the newer driver.
      std::optional<MajorMinor> supported = newest_cuda_for_driver(*driver, tables);
      notes.push_back(runtime_text(rt) + " runs on driver " + driver_text(*target.driver, inv.forward_compat) +
                      " only through CUDA minor-version compatibility (" + std::to_string(rt.major) + ".x needs >= " +
                      need.minor_floor->text +
                      (need.full && rt.version ? "; " + rt.version->str() + " itself needs " + need.full->text : "") +
                      "): APIs and PTX newer than CUDA " + (supported ? supported->str() : std::string("?")) +
                      " are unavailable");
      continue;
    }
    std::optional<DriverVersion> required = need.full ? need.full : need.minor_floor;
    if (!required) {
      notes.push_back(runtime_text(rt) + " is not in data/cuda.json; its driver requirement was not checked");
      continue;
    }
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
    for (const CudaLibrary& lib : inv.libraries) libs_[canonical_in(env.root, lib.path)] = &lib;
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
    Finding f;
    f.code = Code::kCudaMajorMix;
    f.severity = Severity::kError;
    f.file = file;
    if (owner) f.package = owner->name;
    f.message = majors_text(r.mask) + " libraries in one process: " + fs::path(file).filename().string() + " loads " +
                examples_text(graph, r, r.mask);
    int newest = 31 - std::countl_zero(r.mask);
    f.hint = "a process can use one CUDA major: install the build of " + pip_name(owner) + " for CUDA " +
             std::to_string(newest) + " (and of whatever pulls in the older runtime), or CUDA " +
             std::to_string(std::countr_zero(r.mask)) + " builds throughout";
    out.push_back(std::move(f));
  }
}

// An extension module imported after its package's requirements (Python's import order, as the
// load model has it): their modules' majors and its own meet in the process.
void mixes_in_import_context(const Environment& env, MajorGraph& graph, std::vector<Finding>& out) {
  std::map<const python::Distribution*, std::vector<const ElfRecord*>> modules;
  for (const ElfRecord& r : env.elf_files)
    if (r.extension_module && !r.owners.empty()) modules[r.owners.front()].push_back(&r);
  for (const auto& [dist, files] : modules) {
    MajorMask context = 0;
    std::vector<std::string> context_examples, context_names;
    for (const python::Distribution* dep : env.requirement_closure(*dist)) {
      auto it = modules.find(dep);
      if (it == modules.end()) continue;
      for (const ElfRecord* m : it->second) {
        const MajorGraph::Reach& r = graph.reach(canonical_in(env.root, m->path));
        if ((r.mask & ~context) == 0) continue;
        context_examples.push_back(examples_text(graph, r, r.mask & ~context));
        context |= r.mask;
        context_names.push_back(dep->name);
      }
    }
    if (!context) continue;
    for (const ElfRecord* file : files) {
      const MajorGraph::Reach& r = graph.reach(canonical_in(env.root, file->path));
      MajorMask all = r.mask | context;
      if (!r.mask || all == r.mask || all == context) continue;
      Finding f;
      f.code = Code::kCudaMajorMix;
      f.severity = Severity::kError;
      f.file = file->path;
      f.package = dist->name;
      f.message = majors_text(all) + " libraries in one process: " + fs::path(file->path).filename().string() +
                  " loads " + examples_text(graph, r, r.mask & ~context) + " after " + join(context_names) +
                  " loaded " + join(context_examples, " and ");
      f.hint = dist->name + " " + dist->version + " is built for " + majors_text(r.mask & ~context) + " and " +
               join(context_names) + " for " + majors_text(context & ~r.mask) + ": install the builds of " + dist->name +
               " and " + join(context_names) + " for one CUDA major";
      out.push_back(std::move(f));
    }
  }
}

// Libraries of several majors anywhere in the environment (or reached from it): a warning,
// with who uses each major, so that the unused one can go.
void mix_in_environment(const Environment& env, const CudaInventory& inv, std::vector<Finding>& out) {
  std::map<int, std::vector<const CudaLibrary*>> by_major;
  for (const CudaLibrary& lib : inv.libraries) by_major[lib.major].push_back(&lib);
  if (by_major.size() < 2) return;
  std::set<std::string> providers, cuda_paths;
  for (const CudaLibrary& lib : inv.libraries) {
    if (lib.owner) providers.insert(lib.owner->name);
    cuda_paths.insert(canonical_in(env.root, lib.path));
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
      if (auto it = inv.users.find(canonical_in(env.root, lib->path)); it != inv.users.end())
        for (const std::string& user : it->second) {
          if (cuda_paths.count(user)) continue;  // NVIDIA's libraries using each other
          const python::Distribution* d = env.owner(user);
          std::string name = d ? d->name : fs::path(user).filename().string() + " (no package)";
          if (!providers.count(name)) users.insert(name);
        }
    }
    packages.insert(owners.begin(), owners.end());
    parts.push_back("CUDA " + std::to_string(major) + ": " + join_some(names));
    if (!users.empty())
      uses.push_back("CUDA " + std::to_string(major) + " is used by " + join_some({users.begin(), users.end()}));
    else if (!owners.empty())
      uses.push_back("nothing loads the CUDA " + std::to_string(major) + " libraries: pip uninstall " +
                     join({owners.begin(), owners.end()}, " "));
    else
      uses.push_back("nothing loads the CUDA " + std::to_string(major) + " libraries");
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

CudaCheckResult check_cuda(const Environment& env, const CudaInventory& inv, const cuda::CudaTables& tables,
                           const CudaTarget& target) {
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
    if (!inv.runtimes.empty())
      result.notes.push_back("no NVIDIA driver found; pass --driver VERSION to check the CUDA runtimes against it");
  } else {
    if (inv.forward_compat && inv.forward_compat->version > *target.driver)
      result.notes.push_back("forward-compatibility libcuda " + inv.forward_compat->path + " (" +
                             inv.forward_compat->where + ") raises the driver the CUDA runtimes talk to from " +
                             target.driver->text + " to " + inv.forward_compat->version.text +
                             "; the kernel module stays " + target.driver->text +
                             " (forward compatibility works on data-center GPUs with a supported kernel-module branch)");
    std::vector<Finding> f = check_driver(env, inv, tables, target, result.notes);
    result.findings.insert(result.findings.end(), f.begin(), f.end());
  }

  // What the tables cannot judge, and CUDA majors on GPUs they no longer support.
  std::vector<std::string> beyond = cuda_beyond_table_notes(inv, tables, target, driver);
  result.notes.insert(result.notes.end(), beyond.begin(), beyond.end());
  std::vector<Finding> old_gpus = check_cuda_minimum_gpu(env, inv, tables, target);
  result.findings.insert(result.findings.end(), old_gpus.begin(), old_gpus.end());

  MajorGraph graph(env, inv);
  mix_in_environment(env, inv, result.findings);
  mixes_in_load_graphs(env, inv, graph, result.findings);
  mixes_in_import_context(env, graph, result.findings);
  return result;
}

}  // namespace envdoctor::checks
