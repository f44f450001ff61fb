#include "imports/load_graph.h"

#include <functional>
#include <optional>
#include <tuple>

#include "environment/environment.h"

namespace envdoctor::imports {

using environment::normalize_path;

bool LoadGraph::Seen::first_time(const void* consumer_file, size_t consumer_path, size_t dep, const void* target_file,
                                 size_t target_path, size_t source, size_t first_loader_path, int rules) {
  return keys_.insert({consumer_file, consumer_path, dep, target_file, target_path, source, first_loader_path, rules})
      .second;
}

size_t LoadGraph::Seen::Hash::operator()(const Key& k) const {
  size_t h = k.consumer_path;
  for (size_t v : {reinterpret_cast<size_t>(k.consumer_file), k.dep, reinterpret_cast<size_t>(k.target_file),
                   k.target_path, k.source, k.first_loader_path, static_cast<size_t>(k.rules)})
    h = (h ^ v) * 0x100000001b3ULL + (h >> 29);
  return h;
}

// One NEEDED entry met in several import contexts may resolve differently in each (already
// loaded in one, found by a search in another). Threads reach it in any order, so the edge kept
// is chosen by its content, never by arrival: a search that found the library, then a match with
// an already loaded object, then a failure; ties by path and directory. `why` and `snapshot` then
// say the same thing on every run.
template <typename MakeEdge>
void LoadGraph::keep(const std::string& consumer, const std::string& needed, const std::string& resolved,
                     loader::Rule rule, const std::string& source, MakeEdge make) {
  auto rank = [](loader::Rule rule, const std::string& resolved, const std::string& source) {
    int kind = rule == loader::Rule::kNotFound ? 2 : rule == loader::Rule::kLoaded ? 1 : 0;
    return std::tuple<int, const std::string&, const std::string&>(kind, resolved, source);
  };
  auto it = edges_.find(std::pair<std::string_view, std::string_view>(consumer, needed));
  if (it == edges_.end()) {
    edges_.emplace(std::make_pair(consumer, needed), make());
  } else if (rank(rule, resolved, source) < rank(it->second.rule, it->second.resolved, it->second.source)) {
    it->second = make();
  }
}

void LoadGraph::note(const loader::Process& p, const std::vector<int>& objects, Seen* seen, NotedLoads* learnt) {
  // What each NEEDED entry resolved to, worked out outside the lock, which every thread takes for
  // each file it checks. A file's check notes its whole new closure, and the files of a package
  // share most of it: a resolution its context noted before is skipped, by a key made of what
  // decides the edge (hashes of the spellings, with the parsed files' identities), before any
  // path is normalised or any edge is built.
  struct Noted {
    const loader::Resolution* r;
    std::string consumer;
    std::string resolved;
    std::string source;
    std::string soname;  // of the library found; "" when not found
  };
  std::vector<Noted> noted;
  std::vector<size_t> path_hash(p.objects().size(), 0);
  auto hash_of = [&](int i) {
    if (!path_hash[i]) path_hash[i] = std::hash<std::string>{}(p.objects()[i].path) | 1;
    return path_hash[i];
  };
  // A library is the target of many NEEDED entries of one closure (libc of nearly all): its
  // path is normalised once.
  std::vector<std::optional<std::string>> normal(p.objects().size());
  auto normal_of = [&](int i) -> const std::string& {
    if (!normal[i]) normal[i] = normalize_path(p.objects()[i].path);
    return *normal[i];
  };
  for (int i : objects) {
    const auto& o = p.objects()[i];
    std::string consumer;
    for (size_t k = 0; k < o.deps.size(); ++k) {
      const loader::Resolution& r = o.deps[k];
      const loader::LoadedObject* target = r.object >= 0 ? &p.objects()[r.object] : nullptr;
      int first = target && r.rule == loader::Rule::kLoaded ? target->loader : -1;
      // Without edges only what resolves to a file is noted, and only by what it resolves to.
      if (!target && !want_edges_) continue;
      if (seen &&
          !seen->first_time(
              o.elf.get(), hash_of(i), k, target ? target->elf.get() : nullptr, target ? hash_of(r.object) : 0,
              want_edges_ ? std::hash<std::string>{}(r.source) : 0, want_edges_ && first >= 0 ? hash_of(first) : 0,
              want_edges_ ? static_cast<int>(r.rule) * 256 + (target ? static_cast<int>(target->rule) : 0) : 0))
        continue;
      if (consumer.empty()) consumer = normal_of(i);
      Noted n{&r, consumer, "", r.source, ""};
      if (target) {
        n.resolved = normal_of(r.object);
        // Already loaded: say who loaded it first and how that search found it.
        if (first >= 0 && want_edges_)
          n.source = "(first loaded by " + normal_of(first) + ", found by " + loader::rule_name(target->rule) + ")";
        n.soname = target->elf && target->elf->soname ? std::string(*target->elf->soname) : r.name;
      }
      noted.push_back(std::move(n));
    }
  }
  if (noted.empty()) return;
  auto edge_of = [](const Noted& n) {
    return Edge{n.consumer, n.r->name, n.resolved, n.r->rule, n.source, n.r->attempts};
  };
  std::lock_guard lock(mu_);
  for (Noted& n : noted) {
    if (!n.soname.empty()) {
      resolutions_[n.soname][n.resolved].insert(n.consumer);
      if (learnt) learnt->resolutions[n.soname][n.resolved].insert(n.consumer);
    }
    if (!want_edges_) continue;
    if (learnt) learnt->edges.push_back(edge_of(n));
    keep(n.consumer, n.r->name, n.resolved, n.r->rule, n.source, [&] { return edge_of(n); });
  }
}

void LoadGraph::add(const NotedLoads& noted) {
  std::lock_guard lock(mu_);
  for (const Edge& e : noted.edges) keep(e.consumer, e.needed, e.resolved, e.rule, e.source, [&] { return e; });
  for (const auto& [soname, by_path] : noted.resolutions)
    for (const auto& [path, consumers] : by_path) resolutions_[soname][path].insert(consumers.begin(), consumers.end());
}

std::vector<Edge> LoadGraph::take_edges() {
  std::vector<Edge> out;
  out.reserve(edges_.size());
  for (auto& [key, edge] : edges_) out.push_back(std::move(edge));
  edges_.clear();
  return out;
}

}  // namespace envdoctor::imports
