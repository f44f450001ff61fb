#include "imports/load_memo.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace envdoctor::imports {

namespace fs = std::filesystem;

bool LoadMemo::reaches(const std::set<std::string>& dirs) const {
  // A changed file matters to a directory it is in, or up to four levels below (glibc-hwcaps/
  // x86-64-v3/, tls/x86_64/x86_64/ are searched inside every directory).
  for (const std::string& changed : changed_paths) {
    fs::path dir = fs::path(changed).parent_path();
    for (int depth = 0; depth < 5 && !dir.empty(); ++depth, dir = dir.parent_path()) {
      if (dirs.count(dir.string())) return true;
      if (dir == dir.root_path()) break;
    }
  }
  return false;
}

bool LoadMemo::still_holds(const Context& before, const Context& now) const {
  auto changed = [&](const python::Distribution::Id& id) { return changed_dists.count(id.key) != 0; };
  return before.clean && before.files == now.files && before.dists == now.dists &&
         std::none_of(now.dists.begin(), now.dists.end(), changed) && !reaches(before.dirs);
}

void LoadMemo::remember(const environment::Environment& env, std::map<std::string, Context> learnt,
                        std::set<std::string> base, size_t contexts_reused) {
  std::map<std::string, std::string> canonical;
  auto both = [&](std::set<std::string>& dirs) {
    std::set<std::string> extra;
    for (const std::string& d : dirs) {
      auto [it, fresh] = canonical.try_emplace(d);
      if (fresh) {
        std::error_code ec;
        it->second = fs::weakly_canonical(env.host(d), ec).string();
      }
      extra.insert(it->second);
    }
    dirs.insert(extra.begin(), extra.end());
  };
  for (auto& [key, c] : learnt) both(c.dirs);
  contexts = std::move(learnt);
  both(base);
  base_dirs = std::move(base);
  reused = contexts_reused;
  filled = true;
}

void footprint(const loader::Process& p, std::set<std::string>& dirs) {
  auto add = [&](const std::string& path) {
    if (path.empty() || path[0] != '/') return;
    dirs.insert(fs::path(environment::normalize_path(path)).parent_path().string());
  };
  for (const loader::LoadedObject& o : p.objects()) {
    add(o.path);
    for (const loader::Resolution& r : o.deps)
      for (const loader::Attempt& a : r.attempts) add(a.path);
  }
}

}  // namespace envdoctor::imports
