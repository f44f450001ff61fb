#include "snapshot/snapshot.h"

#include <algorithm>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "checks/record_checks.h"
#include "environment/file_view.h"
#include "loader/process.h"
#include "support/json_text.h"
#include "support/parallel.h"
#include "support/text.h"

namespace envdoctor::snapshot {

namespace {

using nlohmann::json;

// The rule's spelling in a snapshot: stable tokens, not the text report's words.
const char* rule_token(loader::Rule rule) {
  switch (rule) {
    case loader::Rule::kMain: return "input";
    case loader::Rule::kInterpreter: return "interpreter";
    case loader::Rule::kLoaded: return "loaded";
    case loader::Rule::kDirect: return "direct";
    case loader::Rule::kRpath: return "rpath";
    case loader::Rule::kLdLibraryPath: return "ld_library_path";
    case loader::Rule::kRunpath: return "runpath";
    case loader::Rule::kLdSoCache: return "ld.so.cache";
    case loader::Rule::kDefault: return "default";
    case loader::Rule::kNotFound: return "not-found";
  }
  return "?";
}

json or_null(const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); }
json or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

// Paths as the snapshot writes them: relative to the environment's prefix when inside it.
class Paths {
 public:
  explicit Paths(const environment::Environment& env)
      : env_(env), prefix_(environment::normalize_path(env.python.prefix)) {}

  std::string rel(const std::string& path) const {
    if (path.empty() || path[0] != '/' || prefix_.empty() || prefix_ == "/") return path;
    std::string p = environment::normalize_path(path);
    if (p == prefix_) return ".";
    if (p.size() > prefix_.size() && p.compare(0, prefix_.size(), prefix_) == 0 && p[prefix_.size()] == '/')
      return p.substr(prefix_.size() + 1);
    return path;
  }
  // Whose copy a file is: of several owners, the one whose recorded content it holds, as
  // file-owned-twice says.
  json owner(const std::string& path) const {
    const python::Distribution* d = checks::copy_holder(env_, path);
    if (!d) d = env_.owner(path);
    return d ? json(d->name) : json(nullptr);
  }
  const std::string& prefix() const { return prefix_; }

 private:
  const environment::Environment& env_;
  std::string prefix_;
};

void sort_by_dump(json& array) {
  std::vector<std::pair<std::string, json>> keyed;
  for (json& item : array) keyed.emplace_back(item.dump(), std::move(item));
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  array = json::array();
  for (auto& [key, item] : keyed) array.push_back(std::move(item));
}

json environment(const environment::Environment& env, const Paths& paths) {
  const python::PythonEnvironment& py = env.python;
  json site = json::array();
  for (const std::string& dir : env.inventory.site_dirs) site.push_back(paths.rel(dir));
  return {{"prefix", paths.prefix()},
          {"python", paths.rel(py.executable)},
          {"version", py.version_info.full_str()},
          {"implementation", py.implementation},
          {"soabi", py.soabi},
          {"platform", py.sysconfig_platform},
          {"site_packages", site}};
}

json packages(const environment::Environment& env, const Paths& paths) {
  json out = json::array();
  for (const python::Distribution& d : env.inventory.distributions) {
    std::string installer = d.kind == python::Distribution::kConda ? "conda" : d.installer;
    out.push_back({{"name", d.name},
                   {"version", d.version},
                   {"installer", or_null(installer)},
                   {"location", paths.rel(d.site_dir.string())}});
  }
  sort_by_dump(out);
  return out;
}

// The indices of `items` in the order of `key(item)`: the documents' arrays are sorted on
// plain strings before any JSON is built (sorting JSON objects costs a map lookup per compare).
// The items arrive sorted by absolute path, and making the paths relative to the prefix leaves a
// few ascending runs (the paths outside the prefix, the paths inside): the runs are merged, a
// pass per doubling, where a full sort compared long common prefixes n log n times (a third of
// a snapshot's instructions).
template <typename T, typename Key>
std::vector<size_t> order_by(const std::vector<T>& items, Key key) {
  std::vector<std::pair<decltype(key(items[0])), size_t>> keyed;
  keyed.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) keyed.emplace_back(key(items[i]), i);
  std::vector<size_t> runs = {0};  // where each ascending run starts
  for (size_t i = 1; i < keyed.size(); ++i)
    if (keyed[i] < keyed[i - 1]) runs.push_back(i);
  runs.push_back(keyed.size());
  if (runs.size() > 64) {
    std::sort(keyed.begin(), keyed.end());
  } else {
    for (size_t width = 1; width + 1 < runs.size(); width *= 2)
      for (size_t r = 0; r + width + 1 < runs.size(); r += 2 * width) {
        size_t last = std::min(r + 2 * width, runs.size() - 1);
        std::inplace_merge(keyed.begin() + static_cast<std::ptrdiff_t>(runs[r]),
                           keyed.begin() + static_cast<std::ptrdiff_t>(runs[r + width]),
                           keyed.begin() + static_cast<std::ptrdiff_t>(runs[last]));
      }
  }
  std::vector<size_t> order;
  order.reserve(keyed.size());
  for (const auto& [k, i] : keyed) order.push_back(i);
  return order;
}

json files(const environment::Environment& env, const Paths& paths) {
  json out = json::array();
  for (size_t i : order_by(env.elf_files, [&](const environment::ElfRecord& r) { return paths.rel(r.path); })) {
    const environment::ElfRecord& r = env.elf_files[i];
    json owners = json::array();
    for (const python::Distribution* d : r.owners) owners.push_back(d->name);
    json file = {{"path", paths.rel(r.path)},
                 {"owners", owners},
                 {"kind", r.extension_module ? "extension"
                          : r.executable     ? "program"
                                             : "library"}};
    if (r.opened->status == loader::OpenResult::Status::kOk) {
      const elf::ElfFile& e = *r.opened->elf;
      file["size"] = e.bytes().size();
      file["build_id"] = or_null(e.build_id);
      file["soname"] = e.soname ? json(std::string(*e.soname)) : json(nullptr);
    } else {
      auto facts = env.files.stat(r.path);
      file["size"] = facts ? json(facts->size) : json(nullptr);
      file["build_id"] = nullptr;
      file["soname"] = nullptr;
      file["error"] = r.opened->error;
    }
    out.push_back(std::move(file));
  }
  return out;
}

json resolutions(const checks::CheckRun& run, const Paths& paths) {
  json out = json::array();
  std::unordered_map<std::string, json> owners;  // many NEEDED entries resolve to one file
  auto owner = [&](const std::string& path) {
    auto [it, added] = owners.try_emplace(path);
    if (added) it->second = paths.owner(path);
    return it->second;
  };
  // Each consumer made relative once, for the order and for the document.
  std::vector<std::string> consumers(run.edges.size());
  for (size_t i = 0; i < run.edges.size(); ++i) consumers[i] = paths.rel(run.edges[i].consumer);
  auto key = [&](const checks::Edge& e) {
    return std::pair<std::string_view, std::string_view>(consumers[&e - run.edges.data()], e.needed);
  };
  std::vector<size_t> order = order_by(run.edges, key);
  out.get_ref<json::array_t&>().reserve(order.size());
  for (size_t i : order) {
    const checks::Edge& e = run.edges[i];
    bool found = !e.resolved.empty();
    // The directory a search found it in; an already-loaded match names no directory of its own.
    bool searched = found && e.rule != loader::Rule::kLoaded && e.rule != loader::Rule::kDirect;
    json r = json::object();
    json::object_t& o = r.get_ref<json::object_t&>();
    o.emplace("file", std::move(consumers[i]));
    o.emplace("needed", e.needed);
    o.emplace("rule", rule_token(e.rule));
    o.emplace("resolved", found ? json(paths.rel(e.resolved)) : json(nullptr));
    o.emplace("owner", found ? owner(e.resolved) : json(nullptr));
    o.emplace("dir", searched ? json(paths.rel(e.source)) : json(nullptr));
    out.push_back(std::move(r));
  }
  return out;
}

json loader_facts(const environment::Environment& env, const Paths& paths) {
  const loader::LoaderConfig& config = env.loader;
  json cache = {{"path", config.cache_path}, {"sha256", nullptr}, {"entries", nullptr}};
  if (config.cache) {
    if (auto sum = environment::sha256_file(env.host(config.cache_path))) cache["sha256"] = support::hex(*sum);
    cache["entries"] = config.cache->entries().size();
  }
  // glibc splits LD_LIBRARY_PATH on ':' and ';' (elf/dl-load.c, _dl_init_paths).
  json ld_library_path = json::array();
  std::string element;
  for (char c : config.ld_library_path + ":") {
    if (c == ':' || c == ';') {
      if (!element.empty()) ld_library_path.push_back(paths.rel(element));
      element.clear();
    } else {
      element += c;
    }
  }
  return {{"glibc", env.python.glibc_version},
          {"ld_so_cache", cache},
          {"ld_library_path", ld_library_path},
          {"hwcaps", config.hwcaps},
          {"default_dirs", config.default_dirs}};
}

json cuda_facts(const checks::CheckRun& run, const checks::CudaTarget& target, const Paths& paths) {
  json gpus = json::array();
  for (const cuda::Gpu& g : target.gpus) gpus.push_back({{"name", g.name}, {"sm", g.sm}});
  json runtimes = json::array();
  for (const checks::CudaRuntime& rt : run.cuda.runtimes)
    runtimes.push_back({{"path", paths.rel(rt.path)},
                        {"soname", rt.soname},
                        {"major", rt.major},
                        {"version", rt.version ? json(rt.version->str()) : json(nullptr)},
                        {"owner", rt.owner ? json(rt.owner->name) : json(nullptr)}});
  sort_by_dump(runtimes);
  json compat = nullptr;
  if (const auto& fc = run.cuda.forward_compat) compat = {{"path", paths.rel(fc->path)}, {"version", fc->version.text}};
  return {{"driver", target.driver ? json(target.driver->text) : json(nullptr)},
          {"driver_cuda", target.driver_cuda ? json(target.driver_cuda->str()) : json(nullptr)},
          {"gpus", gpus},
          {"driver_libraries", run.cuda.driver_libraries ? json(*run.cuda.driver_libraries) : json(nullptr)},
          {"runtimes", runtimes},
          {"forward_compat", compat}};
}

json findings(const checks::CheckRun& run, const Paths& paths) {
  json out = json::array();
  for (const checks::Finding& f : run.findings) {
    json j = {{"code", checks::code_name(f.code)},
              {"severity", checks::severity_name(f.severity)},
              {"file", f.file.empty() ? json(nullptr) : json(paths.rel(f.file))},
              {"package", or_null(f.package)},
              {"library", or_null(f.library)},
              {"symbol", or_null(f.symbol)},
              {"version", or_null(f.version)},
              {"arch", or_null(f.arch)},
              {"packages", f.packages},
              {"message", f.message},
              {"hint", f.hint}};
    out.push_back(std::move(j));
  }
  // Re-sorted after the paths were made relative, so that the order does not depend on the prefix.
  std::sort(out.begin(), out.end(), [](const json& a, const json& b) {
    auto key = [](const json& f) {
      json k = f;
      k.erase("message");
      k.erase("hint");
      return std::make_pair(f["severity"] != "error", k.dump());
    };
    return key(a) < key(b);
  });
  return out;
}

}  // namespace

json take(const environment::Environment& env, const checks::CheckRun& run, const checks::CudaTarget& target) {
  Paths paths(env);
  json s = json::object();
  s["schema"] = kSchema;
  s["envdoctor"] = ENVDOCTOR_VERSION;
  s["environment"] = environment(env, paths);
  s["packages"] = packages(env, paths);
  // The two large sections, one per thread: each reads the environment and the run only.
  json resolved;
  std::jthread other([&] { resolved = resolutions(run, paths); });  // joined on any way out
  s["files"] = files(env, paths);
  other.join();
  s["resolutions"] = std::move(resolved);
  s["loader"] = loader_facts(env, paths);
  s["cuda"] = cuda_facts(run, target, paths);
  s["findings"] = findings(run, paths);
  size_t errors = 0;
  for (const checks::Finding& f : run.findings) errors += f.severity == checks::Severity::kError;
  s["summary"] = {{"errors", errors},
                  {"warnings", run.findings.size() - errors},
                  {"packages", env.inventory.distributions.size()},
                  {"elf_files", env.elf_files.size()}};
  s["notes"] = run.notes;
  s["digest"] = digest(s);
  return s;
}

std::string digest(const json& snapshot) {
  // The compact dump of the document without the excluded parts, written member by member (keys
  // in order, as dump() writes them) so that the large arrays are dumped without being copied.
  // Members are dumped on all cores (files and resolutions are most of the document).
  std::vector<std::pair<std::string, const json*>> members;
  for (const auto& [key, value] : snapshot.items()) {
    // The tool's version, its notes (prose on what was not checked) and the digest itself.
    if (key == "digest" || key == "envdoctor" || key == "notes") continue;
    members.emplace_back(key, &value);
  }
  std::vector<std::string> dumps(members.size());
  support::parallel_for(members.size(), [&](size_t i) {
    const auto& [key, value] = members[i];
    std::string& out = dumps[i];
    out = json(key).dump() + ':';
    if (key == "environment" && value->is_object()) {
      json e = *value;
      e.erase("prefix");
      support::append_json(out, e);
    } else if (key == "findings" && value->is_array()) {
      json findings = *value;
      for (json& f : findings)
        if (f.is_object()) {
          f.erase("message");
          f.erase("hint");
        }
      support::append_json(out, findings);
    } else {
      support::append_json(out, *value);
    }
  });
  std::string text = "{";
  for (const std::string& d : dumps) {
    if (text.size() > 1) text += ',';
    text += d;
  }
  text += '}';
  auto bytes = reinterpret_cast<const u8*>(text.data());
  std::vector<u8> sum = environment::sha256_bytes(Bytes(bytes, text.size()));
  return sum.empty() ? "" : "sha256:" + support::hex(sum);
}

}  // namespace envdoctor::snapshot
