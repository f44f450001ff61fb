// `envdoctor why NAME`: the load model's reasons about one library, file or package.
//
// A SONAME (or file name): every copy the environment could reach and who owns it, every ELF
// file that needs it, where each one's need resolves, by which rule, and which copies that
// shadows. A path: the same for the library at that path. A package: what its ELF files need
// and where that resolves, and in reverse which files of other packages need its files.
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "checks/environment.h"
#include "checks/knowledge.h"
#include "checks/load_checks.h"
#include "cli/commands.h"
#include "cli/session.h"

namespace envdoctor::cli {

namespace fs = std::filesystem;
using checks::Edge;
using checks::Environment;

namespace {

std::string owner_label(const Environment& env, const std::string& path) { return env.owner_label(path); }

std::string rule_label(const Edge& e) {
  std::string out = loader::rule_name(e.rule);
  if (!e.source.empty()) out += " " + e.source;
  return out;
}

// Every file the environment could load under `name`: its own ELF files with that SONAME or
// file name, and what the system's search would find (ld.so.cache, LD_LIBRARY_PATH, defaults).
std::set<std::string> reachable_copies(const Environment& env, const std::string& name) {
  std::set<std::string> out;
  for (const checks::ElfRecord& r : env.elf_files) {
    bool soname = r.opened->elf && r.opened->elf->soname && *r.opened->elf->soname == name;
    if (soname || fs::path(r.path).filename() == name) out.insert(r.path);
  }
  if (env.loader.cache) {
    auto flags = loader::cache_flags_for_machine(env.host_machine, env.host_class == ELFCLASS64);
    if (flags)
      if (auto hit = env.loader.cache->lookup(name, *flags, env.loader.hwcaps)) out.insert(checks::normalize_path(std::string(*hit)));
  }
  std::vector<std::string> dirs = loader::split_search_path(env.loader.ld_library_path, ":;", std::nullopt, env.loader);
  dirs.insert(dirs.end(), env.loader.default_dirs.begin(), env.loader.default_dirs.end());
  for (const std::string& d : dirs) {
    std::error_code ec;
    std::string p = loader::join_path(d, name);
    if (!d.empty() && fs::exists(p, ec)) out.insert(checks::normalize_path(p));
  }
  // One file under several names (/lib is /usr/lib on a merged system) is one copy.
  std::set<std::pair<dev_t, ino_t>> seen;
  std::set<std::string> unique;
  for (const std::string& path : out) {
    auto op = env.store->open(path);
    if (op->id == loader::FileId{} || seen.insert({op->id.dev, op->id.ino}).second) unique.insert(path);
  }
  return unique;
}

void explain_library(const Environment& env, const std::vector<Edge>& edges, const std::string& name) {
  std::set<std::string> copies = reachable_copies(env, name);
  std::cout << name << "\n  copies the environment can reach:\n";
  if (copies.empty()) std::cout << "    none\n";
  for (const std::string& c : copies) std::cout << "    " << c << "  (" << owner_label(env, c) << ")\n";
  std::cout << "  needed by:\n";
  bool any = false;
  for (const Edge& e : edges) {
    if (e.needed != name && fs::path(e.needed).filename() != name) continue;
    any = true;
    std::cout << "    " << e.consumer << "  (" << owner_label(env, e.consumer) << ")\n";
    if (e.resolved.empty()) {
      std::cout << "      => not found\n";
      for (const loader::Attempt& a : e.attempts)
        std::cout << "         tried " << (a.path.empty() ? "" : a.path + ": ") << a.outcome << "\n";
      continue;
    }
    std::cout << "      => " << e.resolved << "  [" << rule_label(e) << "]\n";
    for (const std::string& c : copies)
      if (c != e.resolved) std::cout << "         shadows " << c << "  (" << owner_label(env, c) << ")\n";
  }
  if (!any) std::cout << "    nothing in this environment\n";
}

void explain_package(const Environment& env, const std::vector<Edge>& edges, const python::Distribution& dist) {
  std::cout << dist.name << " " << dist.version << "  (" << dist.metadata_dir.string() << ")\n";
  std::set<std::string> own;
  for (const checks::ElfRecord& r : env.elf_files)
    for (const python::Distribution* d : r.owners)
      if (d == &dist) own.insert(r.path);
  std::cout << "  its ELF files and what they need:\n";
  if (own.empty()) std::cout << "    none\n";
  for (const std::string& f : own) {
    std::cout << "    " << f << "\n";
    for (const Edge& e : edges) {
      if (e.consumer != f) continue;
      std::cout << "      " << e.needed << " => " << (e.resolved.empty() ? "not found" : e.resolved)
                << (e.resolved.empty() ? "" : "  [" + rule_label(e) + "]") << "\n";
    }
  }
  std::map<std::string, std::vector<const Edge*>> users;  // consumer's package -> edges
  for (const Edge& e : edges)
    if (own.count(e.resolved) && !own.count(e.consumer)) users[owner_label(env, e.consumer)].push_back(&e);
  std::cout << "  used by:\n";
  if (users.empty()) std::cout << "    nothing else in this environment\n";
  for (const auto& [pkg, list] : users) {
    std::cout << "    " << pkg << "\n";
    for (const Edge* e : list) std::cout << "      " << e->consumer << " needs " << e->needed << " => " << e->resolved << "\n";
  }
}

}  // namespace

int run_why(const CheckOptions& options, const std::string& name) {
  std::optional<Session> session = open_session({options.python, options.prefix, options.no_exec, options.loader});
  if (!session) return 2;
  Environment* env = session->env.get();
  const checks::Knowledge* knowledge = &session->knowledge;
  checks::LoadCheckResult loads = checks::check_loads(*env, *knowledge);

  if (const python::Distribution* dist = env->inventory.find(name)) {
    explain_package(*env, loads.edges, *dist);
    return 0;
  }
  std::string library = name;
  if (name.find('/') != std::string::npos) {
    std::string path = checks::normalize_path(name);
    auto op = env->store->open(path);
    if (op->status != loader::OpenResult::Status::kOk) {
      std::cerr << "envdoctor: " << name << ": " << op->error << "\n";
      return 2;
    }
    library = op->elf->soname ? std::string(*op->elf->soname) : fs::path(path).filename().string();
    std::cout << path << " is " << library << ", owned by " << owner_label(*env, path) << "\n";
  }
  bool known = !reachable_copies(*env, library).empty();
  for (const Edge& e : loads.edges) known = known || e.needed == library;
  if (!known) {
    std::cerr << "envdoctor: " << name << ": no package, library or file of that name in this environment\n";
    return 2;
  }
  explain_library(*env, loads.edges, library);
  return 0;
}

}  // namespace envdoctor::cli
