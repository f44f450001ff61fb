#include "checks/environment.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>

#include "checks/parallel.h"
#include "python/record.h"

namespace envdoctor::checks {

namespace fs = std::filesystem;

std::string normalize_path(const std::string& path) {
  return python::lexically_resolve(fs::current_path(), path).string();
}

bool is_extension_module(const ElfRecord& r);

namespace {

bool has_elf_magic(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  unsigned char magic[4];
  bool ok = ::read(fd, magic, 4) == 4 && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
  ::close(fd);
  return ok;
}

bool may_be_loaded(const fs::directory_entry& e) {
  std::string name = e.path().filename().string();
  if (name.find(".so") != std::string::npos) return true;
  std::error_code ec;
  auto perms = e.symlink_status(ec).permissions();
  return !ec && (perms & (fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec)) != fs::perms::none;
}

}  // namespace

std::vector<std::string> find_elf_files(const std::vector<std::string>& dirs) {
  std::set<std::string> roots(dirs.begin(), dirs.end());
  std::vector<std::string> candidates;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      const fs::directory_entry& e = *it;
      std::error_code sec;
      fs::file_status st = e.symlink_status(sec);
      if (sec) continue;
      if (fs::is_directory(st)) {
        std::string name = e.path().filename().string();
        // Another site directory is walked on its own, if it is on sys.path at all (a venv's
        // base interpreter keeps its site-packages inside the standard library directory).
        if (name == "__pycache__" || ((name == "site-packages" || name == "dist-packages") && !roots.count(e.path().string())) ||
            (roots.count(e.path().string()) && e.path().string() != dir))
          it.disable_recursion_pending();
        continue;
      }
      // Symbolic links are names, not files: the loader model follows them when it resolves.
      if (!fs::is_regular_file(st) || !may_be_loaded(e)) continue;
      candidates.push_back(e.path().string());
    }
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::vector<char> is_elf(candidates.size(), 0);
  parallel_for(candidates.size(), [&](size_t i) { is_elf[i] = has_elf_magic(candidates[i]); });
  std::vector<std::string> out;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (is_elf[i]) out.push_back(std::move(candidates[i]));
  return out;
}

const std::vector<const python::Distribution*>& Environment::owners(const std::string& path) const {
  return ownership->owners(normalize_path(path));
}

const python::Distribution* Environment::owner(const std::string& path) const {
  const auto& o = owners(path);
  return o.empty() ? nullptr : o.front();
}

const ElfRecord* Environment::elf(const std::string& path) const {
  auto it = by_path_.find(path);
  return it == by_path_.end() ? nullptr : &elf_files[it->second];
}

void Environment::add_elf_file(const std::string& path, std::shared_ptr<const loader::OpenResult> opened) {
  ElfRecord r;
  r.path = path;
  r.opened = std::move(opened);
  if (r.opened->status == loader::OpenResult::Status::kOk) {
    const elf::ElfFile& e = *r.opened->elf;
    if (e.elf_class != host_class || e.machine != host_machine || !e.has_dynamic) {
      ++foreign_elf_files;
      return;
    }
    r.extension_module = is_extension_module(r);
    r.executable = !r.extension_module &&
                   (e.type == ET_EXEC || (e.interp && !e.soname && r.path.find(".so") == std::string::npos));
  }
  r.owners = ownership->owners(r.path);
  elf_files.push_back(std::move(r));
}

void Environment::refresh() {
  ownership = std::make_unique<python::OwnershipIndex>(inventory.distributions);
  std::erase_if(elf_files, [&](const ElfRecord& r) { return files.removed(r.path); });
  for (ElfRecord& r : elf_files) r.owners = ownership->owners(r.path);
  std::sort(elf_files.begin(), elf_files.end(), [](const ElfRecord& a, const ElfRecord& b) { return a.path < b.path; });
  index_elf_files();
}

void Environment::index_elf_files() {
  by_path_.clear();
  for (size_t i = 0; i < elf_files.size(); ++i) by_path_[elf_files[i].path] = i;
}

std::vector<const python::Distribution*> Environment::requirement_closure(const python::Distribution& dist) const {
  std::vector<const python::Distribution*> order;
  std::set<const python::Distribution*> visiting;
  std::function<void(const python::Distribution&)> visit = [&](const python::Distribution& d) {
    if (!visiting.insert(&d).second) return;
    for (const python::Requirement& r : d.requirements_for(python.markers)) {
      const python::Distribution* dep = inventory.find(r.name);
      if (dep) visit(*dep);
    }
    if (&d != &dist) order.push_back(&d);
  };
  visit(dist);
  return order;
}

bool is_extension_module(const ElfRecord& r) {
  const elf::ElfFile& e = *r.opened->elf;
  std::string name = fs::path(r.path).filename().string();
  if (name.size() < 4 || name.compare(name.size() - 3, 3, ".so") != 0) return false;
  std::string module = name.substr(0, name.find('.'));
  return !e.find_symbols("PyInit_" + module).empty();
}

std::unique_ptr<Environment> build_environment(const EnvironmentOptions& options, std::string* error) {
  auto env = std::make_unique<Environment>();
  // discover
  std::optional<python::PythonEnvironment> py;
  if (!options.prefix.empty()) {
    py = python::environment_from_prefix(options.prefix, error);
  } else {
    python::DiscoverOptions d;
    d.python = options.python;
    py = python::discover_interpreter(d, error);
  }
  if (!py) return nullptr;
  env->python = std::move(*py);
  env->loader = loader::LoaderConfig::for_host();
  if (options.ld_library_path) env->loader.ld_library_path = *options.ld_library_path;
  env->store = std::make_unique<loader::ObjectStore>();

  // inventory
  env->inventory = python::read_inventory(env->python);
  env->ownership = std::make_unique<python::OwnershipIndex>(env->inventory.distributions);

  // elf index
  std::vector<std::string> dirs = env->python.site_dirs();
  std::vector<std::string> paths = find_elf_files(dirs);
  std::vector<std::shared_ptr<const loader::OpenResult>> opened(paths.size());
  parallel_for(paths.size(), [&](size_t i) { opened[i] = env->store->open(paths[i]); });

  // The interpreter decides which objects are this machine's: others are never loaded.
  auto interp = env->store->open(env->python.real_executable.empty() ? env->python.executable
                                                                      : env->python.real_executable);
  if (interp->status == loader::OpenResult::Status::kOk) {
    env->host_class = interp->elf->elf_class;
    env->host_machine = interp->elf->machine;
  }
  for (size_t i = 0; i < paths.size(); ++i) env->add_elf_file(paths[i], opened[i]);
  env->index_elf_files();
  return env;
}

}  // namespace envdoctor::checks
