// The load graph of the environment's processes: every NEEDED entry as the load model resolved
// it (for `why`, `snapshot` and `ps`), and who loaded which copy of each library (for the checks
// that compare copies). Many import contexts are loaded at once, on every core; the graph is
// noted into from all of them and gives the same answer whatever order they arrive in.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "loader/process.h"

namespace envdoctor::imports {

// Who loaded which copy of a library: soname -> resolved path -> the files whose NEEDED resolved
// there. duplicate-library reads it.
using ResolutionMap = std::map<std::string, std::map<std::string, std::set<std::string>>>;

// One NEEDED entry of one object as the load model resolved it, for `envdoctor why`.
struct Edge {
  std::string consumer;  // normalized path of the object with the NEEDED entry
  std::string needed;    // the DT_NEEDED string
  std::string resolved;  // normalized path it resolved to; "" when not found
  loader::Rule rule = loader::Rule::kNotFound;
  std::string source;  // the directory (or cache) that found it
  std::vector<loader::Attempt> attempts;
};

// What one import context added to the graph, kept for a later run that reuses the context.
struct NotedLoads {
  std::vector<Edge> edges;
  ResolutionMap resolutions;
};

class LoadGraph {
 public:
  // `edges`: whether edges are built (resolutions always are). Building them is a good part of
  // the load checks' cost, and no verdict reads them.
  explicit LoadGraph(bool edges) : want_edges_(edges) {}

  // The resolutions one context has noted already, by what decides an edge: the files of a
  // package share most of their closure, and a resolution seen once needs no second note.
  class Seen {
   public:
    bool first_time(const void* consumer_file, size_t consumer_path, size_t dep, const void* target_file,
                    size_t target_path, size_t source, size_t first_loader_path, int rules);

   private:
    struct Key {
      const void* consumer_file;
      size_t consumer_path;
      size_t dep;
      const void* target_file;
      size_t target_path;
      size_t source;
      size_t first_loader_path;
      int rules;
      bool operator==(const Key&) const = default;
    };
    struct Hash {
      size_t operator()(const Key& k) const;
    };
    std::unordered_set<Key, Hash> keys_;
  };

  // Notes what the NEEDED entries of `objects` of `p` resolved to. `seen` (may be null) skips
  // what its context noted before; `learnt` (may be null) receives a copy of what was noted.
  void note(const loader::Process& p, const std::vector<int>& objects, Seen* seen, NotedLoads* learnt);
  // What an earlier run's context noted, taken again as it was.
  void add(const NotedLoads& noted);

  ResolutionMap take_resolutions() { return std::move(resolutions_); }
  std::vector<Edge> take_edges();  // sorted by consumer, then needed; each pair once

 private:
  template <typename MakeEdge>
  void keep(const std::string& consumer, const std::string& needed, const std::string& resolved, loader::Rule rule,
            const std::string& source, MakeEdge make);  // callers hold mu_

  bool want_edges_;
  std::mutex mu_;
  ResolutionMap resolutions_;
  // By (consumer, needed), asked with views: every noted resolution asks, few add.
  struct EdgeKeyLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      using Views = std::pair<std::string_view, std::string_view>;
      return Views(a.first, a.second) < Views(b.first, b.second);
    }
  };
  std::map<std::pair<std::string, std::string>, Edge, EdgeKeyLess> edges_;
};

}  // namespace envdoctor::imports
