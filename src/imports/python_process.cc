#include "imports/python_process.h"

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

ImportModel::ImportModel(const Environment& env, const environment::PackageRules& rules)
    : env_(env), loads_(env, rules) {
  for (const ElfRecord& r : env_.elf_files) {
    if (!r.extension_module) continue;
    for (const Distribution* d : r.owners) modules_[d].push_back(&r);
  }
}

ImportModel::Interpreter ImportModel::start_in(const Environment& env, const loader::LoaderConfig& config) {
  Interpreter out{loader::Process(config, *env.store)};
  const std::string& program = env.python.program();
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

size_t ImportModel::import_own_loads(loader::Process& p, int caller, const Distribution& dist, const LoadFn& on_load,
                                     std::vector<RuleRun>* runs) const {
  size_t loads = 0;
  PackageLoads::OpenFn opened = [&](const std::string& path, const loader::Process::DlopenResult& r) {
    ++loads;
    if (on_load) on_load(nullptr, path, r);
  };
  std::optional<RuleRun> run = loads_.run(p, caller, dist, Moment::kImport, opened);
  if (run && runs) runs->push_back(std::move(*run));
  return loads;
}

size_t ImportModel::import(loader::Process& p, int caller, const Distribution& dist, const LoadFn& on_load,
                           std::vector<RuleRun>* runs) const {
  size_t loads = import_own_loads(p, caller, dist, on_load, runs);
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

size_t ImportModel::import_init(loader::Process& p, int caller, const Distribution& dist, const BeforeFn& before,
                                std::vector<RuleRun>* runs) const {
  size_t loads = import_own_loads(p, caller, dist, {}, runs);
  std::set<const ElfRecord*> seen;
  for (const ElfRecord* m : init_modules(dist)) {
    if (seen.insert(m).second && before) before(*m);
    ++loads;
    p.dlopen(m->path, false, caller);
  }
  return loads;
}

size_t ImportModel::import_requirements(loader::Process& p, int caller, const Distribution& dist, const LoadFn& on_load,
                                        std::vector<RuleRun>* runs) const {
  size_t loads = 0;
  for (const Distribution* dep : env_.requirement_closure(dist)) loads += import(p, caller, *dep, on_load, runs);
  return loads;
}

}  // namespace envdoctor::imports
