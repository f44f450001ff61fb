#include "environment/environment.h"

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <set>
#include <unordered_set>

#include "elf/elf_types.h"
#include "python/editable.h"
#include "python/extension_module.h"
#include "python/metadata_file.h"
#include "python/record.h"
#include "support/parallel.h"

namespace envdoctor::environment {

using python::is_extension_module;

namespace fs = std::filesystem;

// An absolute path with no empty, "." or ".." component and no trailing slash is its own lexical
// normal form: it has no "//", and every "/." starts a name longer than "." and "..".
static bool already_normal(std::string_view path) {
  if (path.empty() || path[0] != '/') return false;
  if (path.size() == 1) return true;
  if (path.back() == '/' || path.find("//") != std::string_view::npos) return false;
  for (size_t dot = path.find("/."); dot != std::string_view::npos; dot = path.find("/.", dot + 1)) {
    std::string_view rest = path.substr(dot + 1);
    if (rest == "." || rest == ".." || rest.starts_with("./") || rest.starts_with("../")) return false;
  }
  return true;
}

std::string normalize_path(const std::string& path) {
  // This runs for every path of every load, and nearly every path is already normal: no
  // std::filesystem::path (which splits the path into components) for those, and getcwd only
  // for a relative path.
  if (already_normal(path)) return path;
  if (!path.empty() && path[0] == '/') return python::lexically_resolve("/", path).string();
  return python::lexically_resolve(fs::current_path(), path).string();
}

const std::vector<const python::Distribution*>& Environment::owners(const std::string& path) const {
  return owners_of_file(normalize_path(path));
}

const std::vector<const python::Distribution*>& Environment::owners_of_file(const std::string& path) const {
  const auto& owners = ownership->owners(path);
  if (!owners.empty() || debian_.empty()) return owners;
  // Debian installs more than its RECORDs say (torch/bin/test_jit): dpkg's lists have the rest.
  if (auto pkg = dpkg->owner(path))
    if (auto it = debian_.find(pkg->name); it != debian_.end()) return it->second;
  return owners;
}

const python::Distribution* Environment::owner(const std::string& path) const {
  const auto& o = owners(path);
  return o.empty() ? nullptr : o.front();
}

std::optional<python::DpkgPackage> Environment::debian_owner(const std::string& path) const {
  if (!dpkg) return std::nullopt;
  return dpkg->owner(normalize_path(path));
}

std::string Environment::owner_label(const std::string& path) const {
  if (const python::Distribution* d = owner(path)) {
    std::string label = d->name + " " + d->version;
    if (d->installer == "debian") label += " (Debian package " + d->installer_package + ")";
    return label;
  }
  if (dpkg)
    if (auto p = dpkg->owner(path)) return "Debian package " + p->name + (p->version.empty() ? "" : " " + p->version);
  return "no package";
}

void Environment::index_installers() {
  debian_.clear();
  for (const python::Distribution& d : inventory.distributions)
    if (d.installer == "debian") debian_[d.installer_package].push_back(&d);
  for (auto& [package, dists] : debian_) {
    // A package with a .dist-info and an .egg-info (python3-cryptography) answers by the first:
    // both are one installation.
    dists.resize(1);
  }
}

const ElfRecord* Environment::elf(const std::string& path) const {
  auto it = by_path_.find(path);
  return it == by_path_.end() ? nullptr : &elf_files[it->second];
}

void Environment::add_elf_file(const std::string& path, std::shared_ptr<const loader::OpenResult> opened) {
  ElfRecord r;
  r.path = path;
  r.opened = std::move(opened);
  // Objects of another class or machine (cubins, cross builds) are never loaded, unless Python
  // would open them as extension modules: then the loader's refusal is the import's error.
  loader::Verdict v = loader::verify(*r.opened, host_class, host_data, host_machine);
  bool foreign = v.kind == loader::Verdict::Kind::kOtherClass || v.kind == loader::Verdict::Kind::kOtherMachine ||
                 (v.kind == loader::Verdict::Kind::kAccept && !r.opened->elf->has_dynamic);
  if (foreign && !named_as_extension_module(path)) {
    ++foreign_elf_files;
    return;
  }
  if (v.kind == loader::Verdict::Kind::kAccept) {
    const elf::ElfFile& e = *r.opened->elf;
    r.extension_module = is_extension_module(r.path, *r.opened->elf);
    r.executable = !r.extension_module &&
                   (e.type == ET_EXEC || (e.interp && !e.soname && r.path.find(".so") == std::string::npos));
  }
  r.owners = owners_of_file(r.path);
  elf_files.push_back(std::move(r));
}

namespace {

// Whether an editable install the simulation removed imported `path` from its project.
bool imported_by_removed(const Environment& env, const std::string& path) {
  for (const python::Distribution& d : env.removed)
    for (const python::ImportRoot& root : d.editable_roots)
      if (python::imports_from(root, path)) return true;
  return false;
}

}  // namespace

void Environment::refresh() {
  {
    std::lock_guard lock(requires_mu_);
    requires_.clear();
    requires_built_.store(false, std::memory_order_release);
  }
  ownership = std::make_unique<python::OwnershipIndex>(inventory.distributions);
  index_installers();
  std::erase_if(elf_files, [&](const ElfRecord& r) { return files.removed(r.path); });
  for (ElfRecord& r : elf_files) r.owners = owners_of_file(r.path);
  // An editable install uninstalled takes its project off the import path: its files stay, unimported.
  std::erase_if(elf_files, [&](const ElfRecord& r) { return r.owners.empty() && imported_by_removed(*this, r.path); });
  std::sort(elf_files.begin(), elf_files.end(), [](const ElfRecord& a, const ElfRecord& b) { return a.path < b.path; });
  index_elf_files();
}

const cuda::FatbinInfo& Environment::fatbins(const elf::ElfFile& file) const {
  {
    std::lock_guard lock(fatbin_mu_);
    if (auto it = fatbins_.find(&file); it != fatbins_.end()) return *it->second;
  }
  auto info = std::make_shared<const cuda::FatbinInfo>(cuda::read_fatbins(file));
  std::lock_guard lock(fatbin_mu_);
  return *fatbins_.emplace(&file, std::move(info)).first->second;
}

std::unique_ptr<Environment> Environment::overlay() const {
  auto out = std::make_unique<Environment>();
  static_cast<EnvironmentFacts&>(*out) = *this;
  out->store = loader::ObjectStore::layered(store);
  out->dpkg = dpkg;
  {
    std::lock_guard lock(fatbin_mu_);
    out->fatbins_ = fatbins_;
  }
  // The copy's records are its own: ownership, the ELF files' owners and the indexes point into them.
  out->refresh();
  return out;
}

void Environment::index_elf_files() {
  by_path_.clear();
  for (size_t i = 0; i < elf_files.size(); ++i) by_path_[elf_files[i].path] = i;
}

const std::vector<const python::Distribution*>& Environment::requirements(const python::Distribution& dist) const {
  if (!requires_built_.load(std::memory_order_acquire)) {
    std::lock_guard lock(requires_mu_);
    if (!requires_built_.load(std::memory_order_relaxed)) build_requirements();
  }
  static const std::vector<const python::Distribution*> kNone;
  auto it = requires_.find(&dist);
  return it == requires_.end() ? kNone : it->second;
}

// One pass over the inventory: by normalized name (the first of a name, as Inventory::find), then
// every Requires-Dist that applies here.
void Environment::build_requirements() const {
  std::unordered_map<std::string, const python::Distribution*> by_key;
  for (const python::Distribution& d : inventory.distributions) by_key.emplace(d.key(), &d);
  for (const python::Distribution& d : inventory.distributions) {
    std::vector<const python::Distribution*>& deps = requires_[&d];
    for (const python::Requirement& r : d.requirements_for(python.markers))
      if (auto it = by_key.find(python::normalize_name(r.name)); it != by_key.end()) deps.push_back(it->second);
  }
  requires_built_.store(true, std::memory_order_release);
}

std::vector<const python::Distribution*> Environment::requirement_closure(const python::Distribution& dist) const {
  std::vector<const python::Distribution*> order;
  std::unordered_set<const python::Distribution*> visiting;
  // Depth first, dependencies before their users, on an explicit stack: a chain of thousands of
  // requirements must not exhaust the thread's stack.
  std::vector<std::pair<const python::Distribution*, size_t>> stack{{&dist, 0}};
  visiting.insert(&dist);
  while (!stack.empty()) {
    auto& [d, next] = stack.back();
    const std::vector<const python::Distribution*>& deps = requirements(*d);
    if (next < deps.size()) {
      const python::Distribution* dep = deps[next++];
      if (visiting.insert(dep).second) stack.emplace_back(dep, 0);
      continue;
    }
    if (d != &dist) order.push_back(d);
    stack.pop_back();
  }
  return order;
}

}  // namespace envdoctor::environment
