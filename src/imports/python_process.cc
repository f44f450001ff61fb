#include "imports/python_process.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

namespace envdoctor::imports {

namespace fs = std::filesystem;

std::vector<std::string> init_imports(const std::string& package, const std::string& text) {
  std::vector<std::string> names;
  auto add = [&](std::string n) {
    while (!n.empty() && (n.back() == ',' || n.back() == ')' || n.back() == ' ')) n.pop_back();
    while (!n.empty() && (n.front() == '(' || n.front() == ' ')) n.erase(0, 1);
    if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  auto first_part = [](const std::string& dotted) { return dotted.substr(0, dotted.find('.')); };
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string w0, w1, w2;
    words >> w0 >> w1 >> w2;
    if (w0 == "from" && w2 == "import") {
      std::string rest;
      std::getline(words, rest);
      std::string from = w1;
      if (from == "." || from == package) {
        // from . import a, b as c
        std::istringstream items(rest);
        for (std::string item; std::getline(items, item, ',');) {
          std::istringstream parts(item);
          std::string name;
          parts >> name;
          if (name != "*") add(name);
        }
      } else if (from.rfind(".", 0) == 0 && from.size() > 1 && from[1] != '.') {
        add(first_part(from.substr(1)));
      } else if (from.rfind(package + ".", 0) == 0) {
        add(first_part(from.substr(package.size() + 1)));
      }
    } else if (w0 == "import") {
      std::string rest = line.substr(line.find("import") + 6);
      std::istringstream items(rest);
      for (std::string item; std::getline(items, item, ',');) {
        std::istringstream parts(item);
        std::string name;
        parts >> name;
        if (name.rfind(package + ".", 0) == 0) add(first_part(name.substr(package.size() + 1)));
      }
    }
  }
  return names;
}

ImportModel::ImportModel(const Environment& env) : env_(env) {
  // What torch's globs can find: the ELF files by directory, in the environment's order (Python's
  // glob returns a directory's order; a wheel's lib directory holds one match of a pattern).
  for (const ElfRecord& r : env_.elf_files) {  // sorted by path
    size_t slash = r.path.rfind('/');
    if (slash != std::string::npos) elf_names_by_dir_[r.path.substr(0, slash)].push_back(r.path.substr(slash + 1));
    if (!r.extension_module) continue;
    for (const Distribution* d : r.owners) modules_[d].push_back(&r);
  }
}

ImportModel::Interpreter ImportModel::start(const loader::LoaderConfig& config) const {
  Interpreter out{loader::Process(config, *env_.store)};
  const std::string& program = env_.python.program();
  if (program.empty()) return out;
  out.found = true;
  out.loaded = out.process.load_main(program);
  // A main program that failed still stands in the process, as far as it was mapped.
  if (!out.process.objects().empty()) out.caller = 0;
  return out;
}

const std::vector<const ElfRecord*>& ImportModel::modules(const Distribution& dist) const {
  static const std::vector<const ElfRecord*> kNone;
  auto it = modules_.find(&dist);
  return it == modules_.end() ? kNone : it->second;
}

std::vector<const ElfRecord*> ImportModel::init_modules(const Distribution& dist) const {
  std::vector<const ElfRecord*> out;
  const std::vector<const ElfRecord*>& mine = modules(dist);
  if (mine.empty()) return out;
  for (const python::RecordEntry& e : dist.record) {
    fs::path rel(e.path);
    if (rel.filename() != "__init__.py" || std::distance(rel.begin(), rel.end()) != 2) continue;
    std::string package = rel.begin()->string();
    std::string text = env_.files.read_text(e.resolved.string(), 1 << 20);
    for (const std::string& name : init_imports(package, text))
      for (const ElfRecord* m : mine) {
        fs::path p(m->path);
        std::string file = p.filename().string();
        if (p.parent_path() == e.resolved.parent_path() && file.substr(0, file.find('.')) == name) out.push_back(m);
      }
  }
  return out;
}

std::vector<const Distribution*> ImportModel::import_order() const {
  std::vector<const Distribution*> dists;
  for (const python::Distribution& d : env_.inventory.distributions) dists.push_back(&d);
  std::sort(dists.begin(), dists.end(), [](auto* a, auto* b) { return a->key() < b->key(); });
  std::vector<const Distribution*> order;
  std::set<const Distribution*> seen;
  auto add = [&](const Distribution* d) {
    if (seen.insert(d).second && modules_.count(d)) order.push_back(d);
  };
  // Each package's requirements before it, depth first, every distribution visited once: the
  // order the closures give one package at a time, in time linear in the requirements.
  std::set<const Distribution*> visiting;
  std::vector<std::pair<const Distribution*, size_t>> stack;
  for (const Distribution* root : dists) {
    if (!visiting.insert(root).second) continue;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [d, next] = stack.back();
      const std::vector<const Distribution*>& deps = env_.requirements(*d);
      if (next < deps.size()) {
        const Distribution* dep = deps[next++];
        if (visiting.insert(dep).second) stack.emplace_back(dep, 0);
        continue;
      }
      add(d);
      stack.pop_back();
    }
  }
  return order;
}

size_t ImportModel::import(loader::Process& p, int caller, const Distribution& dist, const LoadFn& on_load,
                           TorchPreloadStop* stop) const {
  size_t loads = dist.key() == "torch" ? preload_torch(p, caller, dist, on_load, stop) : 0;
  const std::vector<const ElfRecord*>& mine = modules(dist);
  if (mine.empty()) return loads;
  std::vector<const ElfRecord*> order = init_modules(dist);
  std::set<const ElfRecord*> first(order.begin(), order.end());
  for (const ElfRecord* m : mine)
    if (!first.count(m)) order.push_back(m);
  std::set<const ElfRecord*> done;
  for (const ElfRecord* m : order) {
    if (!done.insert(m).second) continue;
    ++loads;
    loader::Process::DlopenResult r = p.dlopen(m->path, false, caller);
    if (on_load) on_load(m, m->path, r);
  }
  return loads;
}

size_t ImportModel::import_requirements(loader::Process& p, int caller, const Distribution& dist, const LoadFn& on_load,
                                        TorchPreloadStop* stop) const {
  size_t loads = 0;
  for (const Distribution* dep : env_.requirement_closure(dist)) loads += import(p, caller, *dep, on_load, stop);
  return loads;
}

namespace {

// The file of `dist` whose path ends in `rel` ("torch/version.py"), "" when its records list none.
std::string recorded_file(const Distribution& dist, const std::string& rel) {
  for (const python::RecordEntry& e : dist.record) {
    std::string path = e.resolved.string();
    if (path == rel || (path.ends_with(rel) && path[path.size() - rel.size() - 1] == '/')) return path;
  }
  return "";
}

// /proc/self/maps holds `marker` in a mapped file's path.
bool maps_hold(const loader::Process& p, std::string_view marker) {
  for (size_t i = 0; i < p.objects().size(); ++i)
    if (p.mapped(static_cast<int>(i)) && p.objects()[i].path.find(marker) != std::string::npos) return true;
  return false;
}

}  // namespace

// The first match of `lib` along sys.path, as torch's _preload_cuda_lib globs it; "" when none.
std::string ImportModel::find_preloaded(const TorchPreload& how, std::optional<int> cuda,
                                        const TorchPreload::Library& lib) const {
  using Search = TorchPreload::Search;
  for (const std::string& site : env_.inventory.site_dirs) {
    std::string nvidia = site + "/nvidia";
    auto below = elf_names_by_dir_.lower_bound(nvidia + "/");
    bool has_nvidia = below != elf_names_by_dir_.end() && below->first.starts_with(nvidia + "/");
    if ((how.search == Search::kNvidia || how.search == Search::kNvidiaThenFolder) && !has_nvidia) continue;
    std::vector<std::string> dirs{nvidia + "/" + lib.folder + "/lib"};
    if (how.search == Search::kNvidiaCudaOrFolder && cuda)
      dirs.push_back(nvidia + "/cu" + std::to_string(*cuda) + "/lib");
    if (how.search != Search::kNvidia) dirs.push_back(site + "/" + lib.folder + "/lib");
    for (const std::string& dir : dirs) {
      auto it = elf_names_by_dir_.find(dir);
      if (it == elf_names_by_dir_.end()) continue;
      for (const std::string& name : it->second)
        if (fnmatch(lib.pattern, name.c_str(), FNM_PERIOD) == 0) return dir + "/" + name;
    }
  }
  return "";
}

size_t ImportModel::preload_torch(loader::Process& p, int caller, const Distribution& torch, const LoadFn& on_load,
                                  TorchPreloadStop* stop) const {
  std::string deps = recorded_file(torch, "lib/libtorch_global_deps.so");
  if (deps.empty()) return 0;
  std::optional<TorchPreload> how = torch_preload_for(torch.version);
  std::optional<int> cuda = torch_cuda_major(env_.files.read_text(recorded_file(torch, "torch/version.py"), 1 << 16));
  size_t loads = 0;
  auto open = [&](const std::string& path, bool global) {
    ++loads;
    loader::Process::DlopenResult r = p.dlopen(path, global, caller);
    if (on_load) on_load(nullptr, path, r);
    return r;
  };
  // ctypes.CDLL of each library found; false where torch's loop stops: at a required library
  // not found (ValueError) or one that fails to load (OSError), unless each is on its own.
  auto preload = [&](const std::vector<TorchPreload::Library>& list, bool each_on_its_own, TorchPreloadStop* stopped) {
    for (const TorchPreload::Library& lib : list) {
      std::string path = find_preloaded(*how, cuda, lib);
      if (path.empty() && lib.required && stopped) *stopped = {deps, lib.folder, lib.pattern, cuda};
      bool ok = path.empty() ? !lib.required : !open(path, false).first;
      if (!ok && !each_on_its_own) return false;
    }
    return true;
  };
  loader::Process::DlopenResult first = open(deps, true);
  if (!how) return loads;
  if (!first.first) {
    using When = TorchPreload::When;
    bool cudart = how->when == When::kWheelCudart ? maps_hold(p, "nvidia/cuda_runtime/lib/libcudart.so")
                  : how->when == When::kAnyCudart ? maps_hold(p, "libcudart.so")
                                                  : false;
    if (cudart) preload(how->opportunistic, how->each_on_its_own, nullptr);  // its errors are swallowed
    return loads;
  }
  // An OSError that names none of the libraries is raised as it is.
  if (names_a_preloaded_library(*how, first.first->message) && preload(how->libraries, false, stop)) open(deps, true);
  return loads;
}

std::vector<std::string> ImportModel::torch_preload_dirs(const Distribution& torch) const {
  std::vector<std::string> dirs;
  std::optional<TorchPreload> how = torch_preload_for(torch.version);
  if (!how) return dirs;
  for (const std::string& site : env_.inventory.site_dirs) {
    dirs.push_back(site + "/nvidia");
    for (const TorchPreload::Library& lib : how->libraries) dirs.push_back(site + "/" + lib.folder);
  }
  return dirs;
}

}  // namespace envdoctor::imports
