#include "checks/import_order.h"

#include <filesystem>
#include <map>
#include <optional>

#include "imports/python_process.h"
#include "loader/process.h"

namespace envdoctor::checks {

using environment::ElfRecord;
using environment::Environment;
using environment::normalize_path;

namespace fs = std::filesystem;
using loader::LoadError;
using loader::Process;
using python::Distribution;

namespace {

// Pairs of packages imported in turn into one process of the environment's interpreter, as the
// import model builds it (imports/python_process.h).
class OrderModel {
 public:
  explicit OrderModel(const imports::ImportModel& model) : model_(model), python_(model_.start()) {}

  // The first failure of `import second` in a process that has imported `first`, which
  // `import second` alone does not have; nullopt when `second` imports as well as it does alone.
  const std::optional<LoadError>& after(const Distribution* first, const Distribution* second) {
    auto [it, fresh] = after_.try_emplace({first, second});
    if (!fresh) return it->second;
    const std::set<std::string>& own = alone(second);
    Process p = python_.process;
    import(p, *first, nullptr);
    std::vector<LoadError> errors;
    import(p, *second, &errors);
    for (LoadError& e : errors)
      if (!own.count(e.message)) {
        it->second = std::move(e);
        break;
      }
    return it->second;
  }

 private:
  // `import dist`: what it requires, then the package itself. `errors` gets the first failure of
  // each of its own modules.
  void import(Process& p, const Distribution& dist, std::vector<LoadError>* errors) {
    model_.import_requirements(p, python_.caller, dist);
    model_.import(p, python_.caller, dist,
                  [&](const ElfRecord* module, const std::string&, const Process::DlopenResult& r) {
                    if (module && errors && r.first) errors->push_back(*r.first);
                  });
  }

  const std::set<std::string>& alone(const Distribution* d) {
    auto [it, fresh] = alone_.try_emplace(d);
    if (fresh) {
      Process p = python_.process;
      std::vector<LoadError> errors;
      import(p, *d, &errors);
      for (const LoadError& e : errors) it->second.insert(e.message);
    }
    return it->second;
  }

  const imports::ImportModel& model_;
  imports::ImportModel::Interpreter python_;
  std::map<const Distribution*, std::set<std::string>> alone_;
  std::map<std::pair<const Distribution*, const Distribution*>, std::optional<LoadError>> after_;
};

// What the second package lacks in the first one's copy, for people.
std::string lacking(const LoadError& e) {
  if (e.kind == LoadError::Kind::kMissingVersion) return "version " + e.version;
  if (e.kind == LoadError::Kind::kUndefinedSymbol) return "symbol " + e.symbol;
  return "what it needs";
}

struct Side {
  const Distribution* dist;
  std::string copy;  // the file its modules load for the SONAME
};

// `import first, second` fails; `reverse` is how `import second, first` fares.
Finding conflict_finding(const Environment& env, const std::string& soname, const Side& first, const Side& second,
                         const LoadError& e, const std::optional<LoadError>& reverse) {
  Finding f;
  f.code = Code::kImportOrderConflict;
  f.severity = reverse ? Severity::kError : Severity::kWarning;
  f.file = normalize_path(e.path);
  f.package = second.dist->name;
  f.packages = {first.dist->name, second.dist->name};
  f.library = soname;
  if (!e.symbol.empty()) f.symbol = e.symbol;
  if (!e.version.empty()) f.version = e.version;
  f.message = e.message;
  std::string a = import_name(env, *first.dist), b = import_name(env, *second.dist);
  std::string served = "`import " + a + ", " + b + "` fails: " + first.dist->name + " " + first.dist->version +
                       " loads its " + soname + " (" + first.copy + ") first, the loader reuses it for " +
                       second.dist->name + " by SONAME, and it lacks " + lacking(e) + ". ";
  if (!reverse) {
    f.hint = served + "`import " + b + ", " + a + "` works: import " + b + " before " + a +
             ", or align the copies: " + second.dist->name + "'s copy (" + second.copy +
             ") satisfies both, so upgrade " + first.dist->name + " to a release whose " + soname + " provides " +
             lacking(e) + " (" + env.owner_label(second.copy) + " ships one).";
  } else {
    f.hint = served + "`import " + b + ", " + a + "` fails too (" + reverse->reason() +
             "): no import order works; align the copies: upgrade or rebuild " + first.dist->name + " and " +
             second.dist->name + " against one " + soname + " that provides what both need.";
  }
  return f;
}

}  // namespace

std::string import_name(const Environment& env, const Distribution& dist) {
  for (const ElfRecord& r : env.elf_files)
    if (r.extension_module && std::find(r.owners.begin(), r.owners.end(), &dist) != r.owners.end()) {
      fs::path rel = fs::path(r.path).lexically_relative(dist.site_dir);
      if (!rel.empty() && *rel.begin() != "..") {
        std::string top = rel.begin()->string();
        return top.substr(0, top.find('.'));
      }
      break;
    }
  return dist.key();
}

ImportOrderResult check_import_order(const Context& ctx, const ResolutionMap& resolutions) {
  const Environment& env = ctx.env;
  ImportOrderResult out;
  std::optional<OrderModel> model;  // built only when some SONAME has two copies
  std::map<std::pair<const Distribution*, const Distribution*>, bool> judged;  // unordered pair -> conflict
  for (const auto& [soname, by_path] : resolutions) {
    if (by_path.size() < 2) continue;
    // Which packages load which copy; a package that loads several is left out (no one copy is its).
    std::map<const Distribution*, std::set<std::string>> copies_of;
    for (const auto& [path, consumers] : by_path)
      for (const std::string& c : consumers)
        if (const Distribution* d = env.owner(c)) copies_of[d].insert(path);
    std::map<std::string, std::vector<const Distribution*>> users;
    for (const auto& [d, copies] : copies_of)
      if (copies.size() == 1) users[*copies.begin()].push_back(d);
    // Paths of one file (hard links, a directory reached twice) are one object to the loader
    // (elf/dl-load.c: _dl_map_object_from_fd compares device and inode): not two copies.
    std::set<std::pair<dev_t, ino_t>> files;
    for (const auto& [path, ds] : users)
      if (auto opened = env.store->open(path); opened->status == loader::OpenResult::Status::kOk)
        files.emplace(opened->id.dev, opened->id.ino);
    if (users.size() < 2 || files.size() < 2) continue;
    if (!model) model.emplace(ctx.model());

    bool conflict = false;
    const std::string& library = soname;  // clang 14 cannot capture a structured binding
    for_each_pair_across_groups(
        users, [&](const Distribution* a, const std::string& copy_a, const Distribution* b, const std::string& copy_b) {
          auto key = a < b ? std::make_pair(a, b) : std::make_pair(b, a);
          if (auto seen = judged.find(key); seen != judged.end()) {
            conflict |= seen->second;
            return;
          }
          ++out.pairs;
          Side sa{a, copy_a}, sb{b, copy_b};
          const std::optional<LoadError>& ab = model->after(a, b);
          const std::optional<LoadError>& ba = model->after(b, a);
          if (ab) out.findings.push_back(conflict_finding(env, library, sa, sb, *ab, ba));
          if (ba) out.findings.push_back(conflict_finding(env, library, sb, sa, *ba, ab));
          judged[key] = ab || ba;
          conflict |= ab || ba;
        });
    (conflict ? out.conflicting : out.compatible).insert(soname);
  }
  return out;
}

}  // namespace envdoctor::checks
