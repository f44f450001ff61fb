#include "checks/cuda/inventory.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "loader/search_paths.h"
#include "python/metadata_file.h"
#include "support/parallel.h"
#include "support/text.h"

namespace envdoctor::checks {

using environment::ElfRecord;
using environment::Environment;
using environment::Knowledge;
using environment::KnownLibrary;

namespace fs = std::filesystem;
using cuda::DriverVersion;
using cuda::FatbinEntry;
using cuda::MajorMinor;
using support::join;

// ---------------------------------------------------------------------------------------------
// The inventory.

namespace {

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

// The file behind `path`: under a root, as the root resolves it; here, as weakly_canonical has it,
// each directory resolved once per environment (the checks ask this of every CUDA library and
// its users, which share a few directories).
std::string canonical_in(const Environment& env, const std::string& path) {
  if (!env.root.empty()) return env.root.canonical(path);
  if (env.ownership) return env.ownership->canonical(path);
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
    if (!d.empty() && canonical_in(env, d) == canonical_in(env, dir)) return true;
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
  int lowest =
      std::min(sass.empty() ? 1000 : std::get<0>(*sass.begin()), ptx.empty() ? 1000 : std::get<0>(*ptx.begin()));
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

// "13.0.96" -> 13.0, when the major is `major`.
std::optional<MajorMinor> release_of(std::string_view v, int major) {
  std::optional<int> mj = leading_int(v);
  size_t dot = v.find('.');
  std::optional<int> mn = dot == std::string_view::npos ? std::nullopt : leading_int(v.substr(dot + 1));
  if (!mj || !mn || *mj != major) return std::nullopt;
  return MajorMinor{*mj, *mn};
}

// The toolkit's version.json (CUDA 11.1 and later install one at the toolkit's top, beside lib64/
// and targets/): its "cuda_cudart" component's version, looked for up to three folders above the
// runtime's real file (lib64/, targets/x86_64-linux/lib/).
std::optional<MajorMinor> toolkit_version_json(const Environment& env, const std::string& real, int major,
                                               std::string* source) {
  fs::path dir = fs::path(real).parent_path();
  for (int up = 0; up < 4 && !dir.empty(); ++up, dir = dir.parent_path()) {
    std::string path = (dir / "version.json").string();
    std::string text = env.files.read_text(path, 1 << 20);
    if (text.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object() || !j.contains("cuda_cudart") || !j["cuda_cudart"].is_object()) return std::nullopt;
    const nlohmann::json& v = j["cuda_cudart"].value("version", nlohmann::json());
    if (!v.is_string()) return std::nullopt;
    std::optional<MajorMinor> release = release_of(v.get<std::string>(), major);
    if (release) *source = path + " (cuda_cudart " + v.get<std::string>() + ")";
    return release;
  }
  return std::nullopt;
}

// NVIDIA's installer puts a toolkit in /usr/local/cuda-X.Y: a folder named so is that release.
std::optional<MajorMinor> toolkit_folder_release(const std::string& real, int major, std::string* source) {
  for (const fs::path& part : fs::path(real).parent_path()) {
    std::string s = part.string();
    if (s.rfind("cuda-", 0) != 0) continue;
    std::string_view v = std::string_view(s).substr(5);
    size_t dot = v.find('.');
    if (dot == std::string_view::npos || v.find('.', dot + 1) != std::string_view::npos) continue;
    std::optional<MajorMinor> release = release_of(v, major);
    if (release && release->str() == v) {
      *source = "its folder " + s;
      return release;
    }
  }
  return std::nullopt;
}

// The runtimes that missing-library findings name, with the files that need them.
std::vector<MissingRuntime> missing_runtimes(const std::vector<Finding>& load_findings) {
  std::map<std::string, std::set<std::string>> needed;
  for (const Finding& f : load_findings)
    if (f.code == Code::kMissingLibrary && f.library && cudart_major(*f.library))
      needed[*f.library].insert(fs::path(f.file).lexically_normal().string());
  std::vector<MissingRuntime> out;
  for (const auto& [soname, files] : needed)
    out.push_back({soname, *cudart_major(soname), {files.begin(), files.end()}});
  return out;
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
  std::string real_path = canonical_in(env, lib.path);
  std::string real = without_repair_hash(fs::path(real_path).filename().string());
  if ((rt.version = runtime_version_from_name(real, rt.major))) {
    rt.version_source = "file " + real;
  } else if ((rt.version = toolkit_version_json(env, real_path, rt.major, &rt.version_source))) {
  } else if (lib.owner && python::normalize_name(lib.owner->name).rfind("nvidia-cuda-runtime", 0) == 0) {
    if ((rt.version = release_of(lib.owner->version, rt.major)))
      rt.version_source = lib.owner->name + " " + lib.owner->version;
  } else {
    rt.version = toolkit_folder_release(real_path, rt.major, &rt.version_source);
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
    std::string real = canonical_in(env, link);
    std::optional<DriverVersion> v = cuda::parse_libcuda_file_name(real);
    if (!v) return std::nullopt;  // the first one found shadows the rest, and says nothing
    return ForwardCompat{real, *v, "LD_LIBRARY_PATH"};
  }
  // A GPU container whose toolkit put cuda-compat's directory first in the rebuilt cache.
  if (env.gpu_container && env.gpu_container->compat && env.gpu_container->compat->used)
    return ForwardCompat{env.gpu_container->compat->path, env.gpu_container->compat->version,
                         "ld.so.cache, as the NVIDIA container toolkit's enable-cuda-compat hook configures it"};
  return std::nullopt;
}

std::vector<std::string> driver_libraries_in_cache(const Environment& env, const Knowledge& knowledge) {
  std::set<std::string> found;
  std::optional<i64> flags = loader::cache_flags_for_machine(EM_X86_64, true);
  if (!env.loader.cache || !flags) return {};
  for (const loader::LdCacheEntry& e : env.loader.cache->entries())
    if (loader::cache_flags_accepted(e.flags, *flags) && knowledge.driver_library(e.key))
      found.insert(std::string(e.key));
  return {found.begin(), found.end()};
}

}  // namespace

std::optional<int> cudart_major(std::string_view soname) {
  constexpr std::string_view prefix = "libcudart.so.";
  std::string name = without_repair_hash(soname);
  if (std::string_view(name).substr(0, prefix.size()) != prefix) return std::nullopt;
  return leading_int(std::string_view(name).substr(prefix.size()));
}

const CudaLibrary* CudaInventory::library(const std::string& path) const {
  for (const CudaLibrary& l : libraries)
    if (l.path == path) return &l;
  return nullptr;
}

std::vector<std::string> CudaInventory::user_names(const Environment& env, const std::string& path) const {
  std::set<std::string> names;
  auto it = users.find(canonical_in(env, path));
  if (it == users.end()) return {};
  for (const std::string& user : it->second) {
    const python::Distribution* d = env.owner(user);
    names.insert(d ? d->name : user);
  }
  return {names.begin(), names.end()};
}

CudaInventory index_cuda(const Context& ctx, const ResolutionMap& resolutions,
                         const std::vector<Finding>& load_findings, const ResolutionMap& opened) {
  const Environment& env = ctx.env;
  const Knowledge& knowledge = ctx.knowledge;
  CudaInventory inv;

  // GPU code: every file's fatbinary headers. With a cold page cache the walk waits on the disk,
  // a read of one page per header (cuda/fatbin.h), each found from the one before, so a file is
  // one chain of reads: more workers than cores keep more of the files' chains in flight.
  std::vector<std::optional<GpuCode>> code(env.elf_files.size());
  auto index_file = [&](size_t i) {
    const ElfRecord& r = env.elf_files[i];
    if (r.opened->status != loader::OpenResult::Status::kOk) return;
    GpuCode g = gpu_code_of(env, r);
    g.toolkit_library = r.opened->elf->soname && is_cuda_library(knowledge, *r.opened->elf->soname);
    if (!g.sass.empty() || !g.ptx.empty()) code[i] = std::move(g);
  };
  support::parallel_for(env.elf_files.size(), index_file, support::io_bound_threads(env.elf_files.size()));
  for (std::optional<GpuCode>& g : code)
    if (g) inv.gpu_code.push_back(std::move(*g));

  // Who loads what, by real file, so that a symlink and its target are one library.
  // Each directory is resolved once (thousands of files share a few hundred directories, and
  // resolving a path reads every component's link), then only the file's own name is looked at.
  std::unordered_map<std::string, std::string> canon, canon_dir;
  auto resolve = [&](const std::string& p) {
    size_t slash = p.rfind('/');
    if (!env.root.empty() || slash == std::string::npos || slash == 0) return canonical_in(env, p);
    auto [dir, fresh] = canon_dir.try_emplace(p.substr(0, slash));
    if (fresh) dir->second = canonical_in(env, dir->first);
    std::string joined = dir->second + p.substr(slash);
    struct stat st;
    if (::lstat(joined.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return canonical_in(env, joined);
    return joined;
  };
  auto canon_of = [&](const std::string& p) -> const std::string& {
    auto it = canon.find(p);
    if (it == canon.end()) it = canon.emplace(p, resolve(p)).first;
    return it->second;
  };
  for (const auto& [soname, by_path] : resolutions)
    for (const auto& [target, consumers] : by_path)
      for (const std::string& consumer : consumers) {
        inv.needs[canon_of(consumer)].insert(canon_of(target));
        inv.users[canon_of(target)].insert(canon_of(consumer));
      }
  for (const auto& [soname, by_path] : opened)
    for (const auto& [target, openers] : by_path)
      for (const std::string& opener : openers) inv.users[canon_of(target)].insert(canon_of(opener));

  // CUDA libraries: the environment's own, then those its files reach outside it.
  std::set<std::string> seen;
  auto add = [&](const std::string& path, std::string_view soname, const python::Distribution* owner) {
    if (!is_cuda_library(knowledge, soname) || !seen.insert(canon_of(path)).second) return;
    CudaLibrary lib;
    lib.path = path;
    lib.soname = std::string(soname);
    lib.owner = owner;
    lib.major = cuda_major_of(&knowledge, soname, owner, path, &lib.major_source);
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
  inv.missing_runtimes = missing_runtimes(load_findings);
  inv.forward_compat = find_forward_compat(env);
  if (!env.image) inv.driver_libraries = driver_libraries_in_cache(env, knowledge);
  return inv;
}

int cuda_major_of(const Knowledge* knowledge, std::string_view soname, const python::Distribution* owner,
                  const std::string& path, std::string* source) {
  if (!knowledge) {
    std::optional<int> m = cudart_major(soname);
    if (m) *source = "its SONAME";
    return m.value_or(0);
  }
  if (!is_cuda_library(*knowledge, soname)) return 0;
  return library_major(*knowledge, soname, owner, path, source);
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
// The verdicts `check` and `cuda` share.

std::string cuda_path_key(const Environment& env, const std::string& path) { return canonical_in(env, path); }

RuntimeOnDriver runtime_on_driver(const CudaRuntime& runtime, const cuda::CudaTables& tables,
                                  const std::optional<DriverVersion>& driver) {
  RuntimeOnDriver r;
  r.need = driver_requirement(runtime, tables);
  if (!driver) return r;
  if (r.need.unknown) {
    r.fit = DriverFit::kBeyondTable;
  } else if (r.need.full && *driver >= *r.need.full) {
    r.fit = DriverFit::kFull;
  } else if (!runtime.version && r.need.minor_floor && *driver >= *r.need.minor_floor) {
    r.fit = DriverFit::kReleaseUnknown;
  } else if (r.need.minor_floor && *driver >= *r.need.minor_floor) {
    // CUDA's minor-version compatibility (CUDA Compatibility guide, "Minor Version
    // Compatibility"): a 12.x runtime runs on any driver of the 12 family, without the
    // features that need the newer driver.
    r.fit = DriverFit::kMinorCompat;
  } else {
    r.required = r.need.full ? r.need.full : r.need.minor_floor;
    r.fit = r.required ? DriverFit::kTooOld : DriverFit::kNotInTable;
  }
  return r;
}

cuda::Coverage gpu_coverage(const GpuCode& code, int sm, const std::optional<DriverVersion>& driver,
                            const cuda::CudaTables& tables) {
  cuda::Coverage c = cuda::classify(code.fatbins, sm, driver, tables);
  bool judged = c.kind == cuda::Coverage::Kind::kPtxJit || c.kind == cuda::Coverage::Kind::kUnsupported;
  if (code.toolkit_library && sm >= code.lowest_sm && judged) {
    c.kind = cuda::Coverage::Kind::kSass;
    c.deciding.clear();
  }
  return c;
}

bool runtime_beyond_table(const CudaRuntime& runtime, const cuda::CudaTables& tables) {
  if (runtime.version) return tables.release_beyond_table(*runtime.version);
  std::optional<cuda::MajorMinor> newest = tables.newest_release();
  return !tables.minor_compat_driver(runtime.major) && newest && runtime.major > newest->major;
}

}  // namespace envdoctor::checks
