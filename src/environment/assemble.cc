// The environment assembled (build_environment): discover, inventory and the ELF index, the
// loader's configuration, a GPU container's start, and what lies beside the environment
// (surroundings.h), after which nothing changes it; and the glibc release of a root.
#include "environment/environment.h"

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <set>
#include <unordered_set>

#include "elf/elf_types.h"
#include "environment/surroundings.h"
#include "python/editable.h"
#include "python/extension_module.h"
#include "python/metadata_file.h"
#include "python/record.h"
#include "support/parallel.h"

namespace envdoctor::environment {

namespace fs = std::filesystem;

namespace {

// "2.36" from "GLIBC_2.36" or "2.36" text; nullopt unless it is digits and dots.
std::optional<std::vector<int>> version_numbers(std::string_view text) {
  std::vector<int> out;
  int n = -1;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      n = (n < 0 ? 0 : n * 10) + (c - '0');
      if (n > 100000) return std::nullopt;
    } else if (c == '.' && n >= 0) {
      out.push_back(n);
      n = -1;
    } else {
      return std::nullopt;
    }
  }
  if (n < 0) return std::nullopt;
  out.push_back(n);
  return out;
}

std::string version_text(const std::vector<int>& v) {
  std::string s;
  for (int n : v) s += (s.empty() ? "" : ".") + std::to_string(n);
  return s;
}

// glibc's csu/version.c banner: "... stable release version 2.36." (or "development release
// version"); __libc_version, which gnu_get_libc_version returns, is the same VERSION string.
std::string banner_version(Bytes bytes) {
  static constexpr std::string_view kMark = "release version ";
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  for (size_t pos = text.find(kMark); pos != text.npos; pos = text.find(kMark, pos + 1)) {
    size_t start = pos + kMark.size(), end = start;
    while (end < text.size() && ((text[end] >= '0' && text[end] <= '9') || text[end] == '.')) ++end;
    std::string_view v = text.substr(start, end - start);
    while (!v.empty() && v.back() == '.') v.remove_suffix(1);  // the sentence's full stop
    if (auto numbers = version_numbers(v); numbers && numbers->size() >= 2) return version_text(*numbers);
  }
  return "";
}

}  // namespace

std::string root_glibc_version(loader::ObjectStore& store, const loader::LoaderConfig& config) {
  std::vector<std::string> dirs = config.default_dirs;
  for (const char* d : {"/lib64", "/usr/lib64"}) dirs.push_back(d);
  for (const std::string& dir : dirs) {
    std::string path = dir + "/libc.so.6";
    auto opened = store.open(path);
    if (opened->status != loader::OpenResult::Status::kOk) continue;
    // Before glibc 2.34 libc.so.6 was a link to libc-2.N.so.
    std::string real = store.host_path(path);
    std::string name = fs::path(real).filename().string();
    if (name.starts_with("libc-") && name.ends_with(".so"))
      if (auto v = version_numbers(std::string_view(name).substr(5, name.size() - 8)); v && v->size() >= 2)
        return version_text(*v);
    if (std::string v = banner_version(opened->elf->bytes()); !v.empty()) return v;
    std::vector<int> best;
    for (const elf::VersionDef& d : opened->elf->verdef) {
      if (!d.name.starts_with("GLIBC_") || (d.flags & VER_FLG_BASE)) continue;
      if (auto v = version_numbers(d.name.substr(6)); v && *v > best) best = *v;
    }
    if (!best.empty()) return version_text(best);
  }
  return "";
}

namespace {

// Under --root the inventory is read from this machine's paths below the root; its paths are
// turned back into the container's own here, in one place. A path outside the root (an
// absolute RECORD row) already is the container's.
void paths_into_root(python::Inventory& inv, const support::FileRoot& root) {
  auto inside = [&](const fs::path& p) {
    std::string s = root.strip(p.string());
    return s.empty() ? p : fs::path(s);
  };
  auto text = [&](std::string& s) {
    for (size_t pos; (pos = s.find(root.dir() + "/")) != std::string::npos;) s.erase(pos, root.dir().size());
  };
  for (std::string& dir : inv.site_dirs) dir = inside(dir).string();
  for (std::string& p : inv.problems) text(p);
  for (python::Distribution& d : inv.distributions) {
    d.metadata_dir = inside(d.metadata_dir);
    d.site_dir = inside(d.site_dir);
    for (python::RecordEntry& e : d.record) e.resolved = inside(e.resolved);
    for (std::string& p : d.problems) text(p);
  }
}

// sys.path's directories inside the root, each with its links resolved there (so the ELF walk,
// the records and the loader spell every file alike), in order, without duplicates.
std::vector<std::string> site_dirs_in_root(const python::PythonEnvironment& py, const support::FileRoot& root) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& entry : py.sys_path) {
    if (entry.empty() || entry[0] != '/') continue;
    std::error_code ec;
    std::string host = root.host(entry);
    if (!fs::is_directory(host, ec)) continue;
    std::string dir = root.strip(host);
    if (!dir.empty() && seen.insert(dir).second) out.push_back(dir);
  }
  return out;
}

python::Inventory read_inventory_in_root(const python::PythonEnvironment& py, const std::vector<std::string>& dirs,
                                         const support::FileRoot& root) {
  python::PythonEnvironment on_host = py;
  on_host.sys_path.clear();
  for (const std::string& d : dirs) on_host.sys_path.push_back(root.dir() + d);
  on_host.prefix = root.host(py.prefix);
  python::Inventory inv = python::read_inventory(on_host);
  paths_into_root(inv, root);
  return inv;
}

// The directories of editable installs' projects that import reaches and sys.path does not name
// (a finder's packages; a path line's directory where the interpreter did not say it), added to
// `dirs` as site.py appends them. Returns every such root, on sys.path or not: below them only
// packages are walked.
std::set<std::string> add_editable_roots(const python::Inventory& inv, std::vector<std::string>& dirs) {
  std::set<std::string> roots;
  for (const python::Distribution& d : inv.distributions)
    for (const python::ImportRoot& r : d.editable_roots) {
      if (r.kind == python::ImportRoot::kModule || !roots.insert(r.path).second) continue;
      if (std::find(dirs.begin(), dirs.end(), r.path) == dirs.end()) dirs.push_back(r.path);
    }
  return roots;
}

// The extension modules of a finder's top-level modules ("_fast" -> _fast.cpython-311-...so
// beside it): files of the module's directory, which is not walked.
void add_editable_modules(const python::Inventory& inv, const support::FileRoot& root,
                          std::vector<std::string>& paths) {
  for (const python::Distribution& d : inv.distributions)
    for (const python::ImportRoot& r : d.editable_roots) {
      if (r.kind != python::ImportRoot::kModule) continue;
      std::string dir = fs::path(r.path).parent_path().string();
      std::error_code ec;
      for (fs::directory_iterator it(root.host(dir), ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        std::string path = (dir == "/" ? "" : dir) + "/" + it->path().filename().string();
        if (python::imports_from(r, path) && named_as_extension_module(path) && it->is_regular_file(ec))
          paths.push_back(path);
      }
    }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
}

// The ELF files of sys.path's directories `dirs` and of the editable installs' projects.
std::vector<std::string> find_inventory_elf_files(const python::Inventory& inv, std::vector<std::string>& dirs,
                                                  const support::FileRoot& root, Listing* listing) {
  std::set<std::string> import_only = add_editable_roots(inv, dirs);
  std::vector<std::string> paths = find_elf_files(dirs, root, listing, import_only);
  add_editable_modules(inv, root, paths);
  return paths;
}

// The root as the NVIDIA container toolkit starts it (image/gpu_container.h): the cache its
// ldconfig run writes replaces the root's own, the links that run makes exist, and what resolves
// otherwise is kept for the report.
void start_gpu_container(Environment& env, const cuda::DriverVersion& driver) {
  image::GpuContainerStart plan = image::plan_gpu_container_start(env.root, *env.store, driver);
  loader::LdconfigResult rebuilt = loader::run_ldconfig(env.root, *env.store, plan.ldconfig);
  std::shared_ptr<const loader::LdCache> cache = loader::cache_of(rebuilt);
  GpuContainerFacts facts{driver.text, plan.compat, {}, rebuilt.entries.size(), {}};
  std::optional<i64> flags = loader::cache_flags_for_machine(EM_X86_64, true);
  std::set<std::string> sonames;
  for (const loader::LdconfigEntry& e : rebuilt.entries) sonames.insert(e.soname);
  if (env.loader.cache)
    for (const loader::LdCacheEntry& e : env.loader.cache->entries()) sonames.insert(std::string(e.key));
  const loader::LoaderConfig& c = env.loader;
  for (const std::string& name : sonames) {
    auto look = [&](const loader::LdCache* in) {
      std::optional<std::string_view> hit = in ? in->lookup(name, *flags, c.hwcaps, c.cache_hwcaps) : std::nullopt;
      return std::string(hit.value_or(""));
    };
    std::string before = look(c.cache.get()), after = look(cache.get());
    if (before != after) facts.changed.push_back({name, before, after});
  }
  for (const loader::LdconfigLink& link : rebuilt.links) env.store->add_link(link.path, link.target);
  env.loader.cache = std::move(cache);
  env.gpu_container = std::move(facts);
}

// The system libraries the environment's objects need, opened ahead of the checks, many at a time.
// A load follows its NEEDED entries one after another, so with a cold page cache each library it
// finds in ld.so.cache is a wait on the disk for its header, then for its dynamic section, and
// torch's import context alone finds a hundred of them that way (280 ms of a cold `check` of
// Debian's python3, against 40 ms warm). The store keeps every file it opened by path, and the
// loads open the same paths (the cache's entry as written), so they then find the files parsed;
// which files a load opens, and what it finds, does not change. Only names found in the cache
// are followed: the environment's own libraries, found through RUNPATH, were opened with it.
void open_needed_from_cache(Environment& env) {
  const loader::LoaderConfig& c = env.loader;
  std::optional<i64> flags = loader::cache_flags_for_machine(env.host_machine, env.host_class == ELFCLASS64);
  if (!c.cache || !flags || env.host_machine == 0) return;
  std::mutex mu;
  std::set<std::string, std::less<>> seen;
  auto follow = [&](const loader::OpenResult& op, std::vector<std::string>& more) {
    if (op.status != loader::OpenResult::Status::kOk || op.elf->machine != env.host_machine) return;
    std::lock_guard lock(mu);
    for (std::string_view name : op.elf->needed) {
      if (name.find('/') != std::string_view::npos) continue;
      std::optional<std::string_view> hit = c.cache->lookup(name, *flags, c.hwcaps, c.cache_hwcaps);
      if (hit && seen.emplace(*hit).second) more.emplace_back(*hit);
    }
  };
  std::vector<std::string> work;
  for (const ElfRecord& r : env.elf_files) follow(*r.opened, work);
  // A work list rather than level after level: a large library's wait does not hold back the
  // libraries that others need.
  support::parallel_work_list(
      std::move(work), support::io_bound_threads(SIZE_MAX),
      [&](std::string path, size_t, std::vector<std::string>& more) { follow(*env.store->open(path), more); });
}

// Who manages the environment itself (EnvironmentFacts::installer).
std::optional<python::Distribution::Tool> environment_installer(const Environment& env) {
  using Tool = python::Distribution::Tool;
  std::error_code ec;
  const python::PythonEnvironment& python = env.python;
  if (!python.prefix.empty() && fs::is_directory(env.host(python.prefix + "/conda-meta"), ec)) return Tool::kConda;
  if (python.in_venv() || fs::exists(env.host(python.prefix + "/pyvenv.cfg"), ec)) {
    // uv writes "uv = 0.4.0" into the pyvenv.cfg of the environments it creates.
    std::string cfg = env.files.read_text(python.prefix + "/pyvenv.cfg", 1 << 16);
    return cfg.find("\nuv = ") != std::string::npos || cfg.starts_with("uv = ") ? Tool::kUv : Tool::kPip;
  }
  const std::string& exe = python.program();
  if (!exe.empty() && env.dpkg && env.dpkg->owner(exe)) return Tool::kDebian;
  return std::nullopt;
}

// The image the root was composed from, and what lies beside the environment (surroundings.h).
void add_surroundings(Environment& env, std::optional<image::ImageFacts> image, const std::string& root_arg) {
  if (image) {
    for (const std::string& p : image->problems) env.problems.push_back("--image: " + p);
    env.image = std::move(image);
  }
  name_other_environments(env, root_arg);
  note_site_code_not_run(env);
  // The toolkit mounts the driver libraries of the capabilities the image's environment asks for.
  if (env.gpu_container && env.image) env.gpu_container->capabilities = image::driver_capabilities(*env.image);
}

}  // namespace

std::unique_ptr<Environment> build_environment(EnvironmentOptions options, std::string* error) {
  auto env = std::make_unique<Environment>();
  env->store = std::make_unique<loader::ObjectStore>(options.root);
  env->dpkg = std::make_unique<python::DpkgIndex>(options.root);
  if (!options.root.empty()) {  // with a prefix inside it: open_session's validate holds to that
    env->root = env->store->file_root();
    env->files.set_root(env->root);
  }
  // What does not depend on the interpreter is read on another thread meanwhile: the probe takes
  // a process start and a few imports on one core. The root's own ld.so.cache and directories
  // (under a root, its C library, not this machine's), and dpkg's database, which the owners of
  // system libraries come from. Joined before the loader's configuration is first needed, or on
  // any return.
  loader::LoaderConfig config;
  std::jthread early([&] {
    config = loader::LoaderConfig::for_host(options.root);
    env->dpkg->prefetch();
  });

  // discover
  std::optional<python::PythonEnvironment> py;
  if (!options.prefix.empty()) {
    py = python::environment_from_prefix(options.prefix, error, env->root);
  } else {
    python::DiscoverOptions d;
    d.python = options.python;
    py = python::discover_interpreter(d, error);
  }
  if (!py) return nullptr;
  env->python = std::move(*py);
  if (env->python.program().empty())
    env->problems.push_back(
        "no interpreter found in the environment: extension modules are checked without the "
        "symbols the interpreter would give them");
  // inventory
  std::vector<std::string> dirs;
  if (env->root.empty()) {
    dirs = env->python.site_dirs();
    env->inventory = python::read_inventory(env->python);
  } else {
    dirs = site_dirs_in_root(env->python, env->root);
    env->inventory = read_inventory_in_root(env->python, dirs, env->root);
  }
  python::read_editable_installs(env->inventory, env->root);
  python::identify_installers(env->inventory, *env->dpkg);
  env->ownership = std::make_unique<python::OwnershipIndex>(env->inventory.distributions);
  env->index_installers();

  // elf index
  Listing listing;
  std::vector<std::string> paths = find_inventory_elf_files(env->inventory, dirs, env->root, &listing);
  env->files.set_listing(std::move(listing));
  std::vector<std::shared_ptr<const loader::OpenResult>> opened(paths.size());
  support::parallel_for(paths.size(), [&](size_t i) { opened[i] = env->store->open(paths[i]); });

  // The interpreter decides which objects are this machine's: others are never loaded.
  auto interp = env->store->open(env->python.program());
  if (interp->status == loader::OpenResult::Status::kOk) {
    env->host_class = interp->elf->elf_class;
    env->host_data = interp->elf->data;
    env->host_machine = interp->elf->machine;
  }
  for (size_t i = 0; i < paths.size(); ++i) env->add_elf_file(paths[i], opened[i]);
  env->index_elf_files();

  early.join();
  env->loader = std::move(config);
  if (options.ld_library_path) env->loader.ld_library_path = *options.ld_library_path;
  env->loader.ld_preload = options.ld_preload;
  env->loader.glibc_tunables = options.glibc_tunables;
  if (options.gpu_container_driver && !env->root.empty()) start_gpu_container(*env, *options.gpu_container_driver);
  if (!env->root.empty()) env->python.glibc_version = root_glibc_version(*env->store, env->loader);
  open_needed_from_cache(*env);
  env->installer = environment_installer(*env);
  add_surroundings(*env, std::move(options.image), options.root);
  return env;
}

}  // namespace envdoctor::environment
