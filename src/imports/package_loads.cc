#include "imports/package_loads.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include "loader/ldconfig_print.h"
#include "python/metadata_file.h"
#include "python/version.h"

namespace envdoctor::imports {

namespace fs = std::filesystem;
using environment::Condition;
using environment::ListItem;
using environment::Outcome;
using environment::Step;
using environment::ValueSource;

namespace {

bool is_glob(const std::string& name) { return name.find_first_of("*?[") != std::string::npos; }

// Python's int() of a string: blanks around it, a sign, '_' between digits; nullopt where int()
// raises (or the value is too long to matter: only whether it is 0 is asked).
std::optional<long long> python_int(std::string text) {
  const char* blanks = " \t\n\r\f\v";
  size_t first = text.find_first_not_of(blanks), last = text.find_last_not_of(blanks);
  if (first == std::string::npos) return std::nullopt;
  text = text.substr(first, last - first + 1);
  bool negative = text[0] == '-';
  if (text[0] == '-' || text[0] == '+') text.erase(0, 1);
  if (text.empty() || text.front() == '_' || text.back() == '_' || text.find("__") != std::string::npos)
    return std::nullopt;
  std::erase(text, '_');
  long long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || value > 100000000000LL) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return negative ? -value : value;
}

bool matches(const std::string& pattern, const std::string& name) {
  return is_glob(pattern) ? ::fnmatch(pattern.c_str(), name.c_str(), FNM_PERIOD) == 0 : pattern == name;
}

// Python's str() of a list of strings: ['/a', '/b'].
std::string python_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const std::string& s : items) {
    char q = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
    out += (out.size() > 1 ? ", " : "") + std::string(1, q);
    for (char c : s) {
      if (c == '\\' || c == q) out += '\\';
      out += c;
    }
    out += q;
  }
  return out + "]";
}

// The release a version counts as: its public part, a pre-release or development release of
// X.Y counted as X.Y (its branch already has X.Y's code).
std::optional<std::string> release_of(const std::string& version) {
  std::optional<python::Version> v = python::Version::parse(version);
  if (!v) return std::nullopt;
  python::Version r = v->public_version();
  r.pre_kind = 0;
  r.pre = 0;
  r.dev.reset();
  return r.str();
}

}  // namespace

bool in_releases(const std::string& version, const std::string& specifier) {
  if (specifier.empty()) return true;
  std::optional<std::string> release = release_of(version);
  std::optional<std::vector<python::SpecifierClause>> clauses = python::parse_specifier(specifier);
  if (!release || !clauses) return false;
  for (const python::SpecifierClause& c : *clauses)
    if (!python::satisfies(*release, c)) return false;
  return true;
}

bool names_a_library(const std::vector<ListItem>& items, const std::string& words) {
  for (const ListItem& item : items)
    for (const std::string& n : item.names)
      if (words.find(n.substr(0, n.find('.'))) != std::string::npos) return true;
  return false;
}

PackageLoads::PackageLoads(const Environment& env, const environment::PackageRules& rules) : env_(env), rules_(rules) {
  for (const PackageRule& r : rules_.rules) {
    for (const std::string& p : r.packages) by_package_[p].push_back(&r);
    if (!r.opener.empty()) by_opener_[r.opener].push_back(&r);
  }
  for (const environment::ElfRecord& r : env_.elf_files) {  // sorted by path
    size_t slash = r.path.rfind('/');
    if (slash != std::string::npos) elf_names_by_dir_[r.path.substr(0, slash)].push_back(r.path.substr(slash + 1));
  }
}

bool PackageLoads::fingerprint_holds(const PackageRule& rule, const Distribution& dist, std::string* file) const {
  if (rule.fingerprint_file.empty()) return true;
  std::string path = recorded_file(dist, rule.fingerprint_file);
  if (path.empty()) return false;
  std::string text = env_.files.read_text(path, 4 << 20);
  for (const std::string& s : rule.fingerprint)
    if (text.find(s) == std::string::npos) return false;
  for (const auto& [rel, strings] : rule.fingerprint_also) {
    std::string other = recorded_file(dist, rel);
    if (other.empty()) return false;
    std::string other_text = env_.files.read_text(other, 4 << 20);
    for (const std::string& s : strings)
      if (other_text.find(s) == std::string::npos) return false;
  }
  if (file) *file = path;
  return true;
}

const PackageRule* PackageLoads::rule_for(const Distribution& dist, Moment moment, std::string* file) const {
  auto it = by_package_.find(dist.key());
  if (it == by_package_.end()) return nullptr;
  for (const PackageRule* r : it->second)
    if (r->moment == moment && in_releases(dist.version, r->releases) && fingerprint_holds(*r, dist, file)) return r;
  return nullptr;
}

bool PackageLoads::has_rules(const Distribution& dist) const { return by_package_.count(dist.key()) != 0; }

bool PackageLoads::opens(const std::string& soname) const { return by_opener_.count(soname) != 0; }

// One rule run: its values, what each step did, and the process it runs in.
class PackageLoads::Runner {
 public:
  Runner(const PackageLoads& self, loader::Process& p, int caller, RuleRun& run, const OpenFn& on_open)
      : self_(self),
        env_(self.env_),
        p_(p),
        caller_(caller),
        run_(run),
        rule_(*run.rule),
        on_open_(on_open),
        values_(self.env_, *run.rule, run.dist, [&self](const std::string& name) { return self.variable(name); }) {}

  void run() {
    // A stop at the top ends the rule as quietly as one in a group ends the group.
    for (const Step& s : rule_.steps)
      if (step(s) != Flow::kNext) break;
    run_.values = values_.known();
  }

 private:
  enum class Flow { kNext, kStopGroup, kEnd };

  Flow step(const Step& s) {
    if (s.when && !holds(*s.when)) return run_.decided ? Flow::kNext : Flow::kEnd;
    if (!s.what.empty()) whats_.push_back(s.what);
    Flow f = step_body(s);
    if (!s.what.empty()) whats_.pop_back();
    return f;
  }

  Flow step_body(const Step& s) {
    if (!s.steps.empty()) {
      for (const Step& inner : s.steps) {
        Flow f = step(inner);
        if (f == Flow::kEnd) return f;
        if (f == Flow::kStopGroup) break;
      }
      return Flow::kNext;
    }
    if (!s.each.empty()) {
      const std::vector<ListItem>* items = list(s.each);
      if (!items) return Flow::kNext;
      for (const ListItem& item : *items) {
        Flow f = load(s, item.lib, item.names);
        if (f != Flow::kNext) return f;
      }
      return Flow::kNext;
    }
    return load(s, s.lib, s.names);
  }

  const std::vector<ListItem>* list(const std::string& name) const {
    for (const auto& [key, items] : rule_.lists)
      if (key == name) return &items;
    return nullptr;
  }

  // The names with the values put in; a name that uses a value not known is left out.
  std::vector<std::string> names_for(const std::string& lib, const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (const std::string& n : names)
      if (std::optional<std::string> filled = fill(n, lib)) out.push_back(*filled);
    return out;
  }

  Flow load(const Step& s, const std::string& lib, const std::vector<std::string>& raw) {
    OwnLoad l;
    l.step = &s;
    l.lib = lib;
    if (!whats_.empty()) l.what = whats_.back();
    l.global = s.global;
    l.names = names_for(lib, raw);
    if (l.names.empty()) return Flow::kNext;  // no name can be known: no verdict
    if (s.outcome) {                          // opens nothing: the package meets the outcome
      if (!s.id.empty()) ids_[s.id] = run_.loads.size();
      run_.loads.push_back(std::move(l));
      return outcome(*s.outcome, run_.loads.back());
    }
    for (size_t i = 0; i < s.places.size() && l.path.empty(); ++i) search(s, static_cast<int>(i), l);
    if (!s.id.empty()) ids_[s.id] = run_.loads.size();
    run_.loads.push_back(std::move(l));
    const OwnLoad& done = run_.loads.back();
    if (done.path.empty()) return outcome(s.missing, done);
    if (done.object < 0) return outcome(s.failing, done);
    return Flow::kNext;
  }

  Flow outcome(const Outcome& o, const OwnLoad& l) {
    switch (o.kind) {
      case Outcome::Kind::kContinue: return Flow::kNext;
      case Outcome::Kind::kStop: return Flow::kStopGroup;
      case Outcome::Kind::kRaise:
      case Outcome::Kind::kFallBack: break;
    }
    if (!o.unless_naming.empty() && names_a_library_of(l, o.unless_naming)) return Flow::kNext;
    run_.end = o.kind == Outcome::Kind::kRaise ? RuleRun::End::kRaised : RuleRun::End::kFellBack;
    run_.words = words(o.words, l);
    run_.to = o.to;
    run_.at = static_cast<int>(run_.loads.size()) - 1;
    return Flow::kEnd;
  }

  // Looks for the step's names in its place `place`; on a match, opens it (or every match).
  void search(const Step& s, int place, OwnLoad& l) {
    const Place& at = s.places[place];
    if (at.kind == Place::Kind::kDlopen) {
      open_by_name(s, place, l);
      return;
    }
    if (at.kind == Place::Kind::kLdconfig && at.lines) {
      take(s, place, ldconfig_paths(at, l), "ld.so.cache (ldconfig -p)", l);
      return;
    }
    std::vector<std::string> names = at.names.empty() ? l.names : names_for(l.lib, at.names);
    for (const auto& [dir, by] : directories(at, l)) {
      for (const std::string& name : names) {
        std::vector<std::string> found = matches_in(at, dir, name, s.sort);
        if (found.empty()) continue;
        take(s, place, found, by, l);
        return;
      }
    }
  }

  // Opens the first of `found` (or every one, in order, up to the first that does not load).
  void take(const Step& s, int place, const std::vector<std::string>& found, const std::string& by, OwnLoad& l) {
    if (found.empty()) return;
    l.place = place;
    l.place_kind = s.places[place].kind;
    l.found_by = by;
    for (const std::string& path : s.every ? found : std::vector<std::string>{found.front()}) {
      l.path = path;
      open(path, l);
      if (l.object < 0) break;  // the package's own call raises at the first that fails
    }
  }

  // The paths the `ldconfig -p` lines holding the place's text name (`line.split(">")[1].strip()`),
  // in the cache's order, lines holding one of `exclude` left out.
  std::vector<std::string> ldconfig_paths(const Place& at, OwnLoad& l) {
    std::vector<std::string> out;
    for (const std::string& line : self_.ldconfig_lines()) {
      size_t arrow = line.find('>');
      if (line.find(at.text) == std::string::npos || arrow == std::string::npos) continue;
      if (std::any_of(at.exclude.begin(), at.exclude.end(),
                      [&](const std::string& x) { return line.find(x) != std::string::npos; }))
        continue;
      std::string path = line.substr(arrow + 1);
      size_t first = path.find_first_not_of(" \t\n\r\f\v"), last = path.find_last_not_of(" \t\n\r\f\v");
      if (first == std::string::npos) continue;
      path = path.substr(first, last - first + 1);
      l.listed.push_back(path);
      out.push_back(path);
    }
    return out;
  }

  // dlopen(NAME) for each name in order, from the caller: the first that loads is taken; where
  // none does, the first that was found and failed is what the package met.
  void open_by_name(const Step& s, int place, OwnLoad& l) {
    OwnLoad failed;
    std::optional<int> caller = caller_of(s.places[place]);
    if (!caller) return;  // the file that calls is not there, or does not load: nothing is opened
    for (const std::string& name : l.names) {
      loader::Process::Mark before = p_.mark();
      loader::Process::DlopenResult r = p_.dlopen(name, s.global, *caller);
      bool found = r.object >= 0 || !r.new_objects.empty();
      if (!found) continue;
      if (on_open_) on_open_(name, r);
      int object = r.object >= 0 ? r.object : r.new_objects.front();
      OwnLoad& into = r.object >= 0 ? l : failed;
      if (!into.path.empty()) {
        p_.rollback(std::move(before));
        continue;
      }
      into.path = p_.objects()[object].path;
      into.object = r.object;
      into.errors = r.errors;
      into.place = place;
      into.place_kind = Place::Kind::kDlopen;
      into.loader_rule = p_.objects()[object].rule;
      into.found_by = loader::rule_name(*into.loader_rule);
      if (r.object >= 0) return;
      p_.rollback(std::move(before));
    }
    if (!failed.path.empty()) {
      // Opened again so that the process holds what the failed call left: nothing, as dlopen.
      l.path = failed.path;
      l.errors = failed.errors;
      l.place = failed.place;
      l.place_kind = failed.place_kind;
      l.found_by = failed.found_by;
      l.loader_rule = failed.loader_rule;
    }
  }

  // The object whose dlopen a place's is: the rule's caller, or a file of the environment (a
  // module of the package), loaded first where it is not.
  std::optional<int> caller_of(const Place& at) {
    if (!at.caller) return caller_;
    for (const std::string& site : env_.inventory.site_dirs) {
      std::string path = site + "/" + *at.caller;
      if (!env_.elf(path)) continue;
      for (size_t i = 0; i < p_.objects().size(); ++i)
        if (p_.mapped(static_cast<int>(i)) && p_.objects()[i].path == path) return static_cast<int>(i);
      loader::Process::DlopenResult r = p_.dlopen(path, false, caller_);
      if (on_open_) on_open_(path, r);
      if (r.object < 0) return std::nullopt;
      return r.object;
    }
    return std::nullopt;
  }

  void open(const std::string& path, OwnLoad& l) {
    loader::Process::DlopenResult r = p_.dlopen(path, l.global, caller_);
    if (on_open_) on_open_(path, r);
    l.object = r.object;
    l.errors = r.errors;
    if (r.first && l.errors.front().message != r.first->message)
      l.errors.insert(l.errors.begin(), *r.first);  // dlerror's words first
  }

  // The directories a place names, in order, each with how it was found.
  std::vector<std::pair<std::string, std::string>> directories(const Place& at, OwnLoad& l) {
    std::vector<std::pair<std::string, std::string>> out;
    switch (at.kind) {
      case Place::Kind::kSysPath:
        for (const std::string& entry : env_.inventory.site_dirs) {
          if (!at.if_dir.empty()) {
            std::optional<std::string> d = fill(at.if_dir, l.lib);
            if (!d || !path_is_dir(env_, entry + "/" + *d)) continue;
          }
          for (const std::string& rel : at.dirs)
            if (std::optional<std::string> d = fill(rel, l.lib))
              out.emplace_back(entry + "/" + *d, "sys.path entry " + entry);
        }
        break;
      case Place::Kind::kPackage:
        for (const std::string& dir : package_dirs())
          for (const std::string& rel : at.dirs)
            if (std::optional<std::string> d = fill(rel, l.lib))
              out.emplace_back(*d == "." ? dir : dir + "/" + *d, "the package");
        break;
      case Place::Kind::kVariable: variable_dirs(at, l, out); break;
      case Place::Kind::kPath:
        for (const std::string& dir : at.dirs) out.emplace_back(dir, dir);
        break;
      case Place::Kind::kLdconfig: ldconfig_dirs(at, l, out); break;
      case Place::Kind::kLdLibraryPath: {
        std::string_view rest = env_.loader.ld_library_path;
        while (!rest.empty()) {
          size_t colon = rest.find(':');
          std::string dir(rest.substr(0, colon));
          if (!dir.empty()) out.emplace_back(dir, "LD_LIBRARY_PATH");
          rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
        }
        break;
      }
      case Place::Kind::kDlopen: break;
    }
    return out;
  }

  void variable_dirs(const Place& at, OwnLoad& l, std::vector<std::pair<std::string, std::string>>& out) {
    std::optional<std::string> dir;
    std::string by;
    for (const std::string& name : at.variables) {
      std::optional<std::string> v = variable(name);
      if (v && !v->empty()) {
        dir = *v;
        by = name + "=" + *v;
        break;
      }
    }
    if (!dir && at.fallback) {
      dir = *at.fallback;
      by = *at.fallback;
    }
    if (!dir) return;
    std::string base = at.below.empty() ? *dir : *dir + "/" + at.below;
    out.emplace_back(base, by);
    (void)l;
  }

  void ldconfig_dirs(const Place& at, OwnLoad& l, std::vector<std::pair<std::string, std::string>>& out) {
    for (const std::string& line : self_.ldconfig_lines()) {
      if (line.find(at.text) == std::string::npos) continue;
      // line.split()[-1]: the path the line names.
      size_t last = line.find_last_not_of(" \t\n\r\f\v");
      size_t blank = line.find_last_of(" \t\n\r\f\v", last);
      std::string path = line.substr(blank == std::string::npos ? 0 : blank + 1,
                                     last + 1 - (blank == std::string::npos ? 0 : blank + 1));
      l.listed.push_back(path);
      std::string dir = fs::path(path).parent_path().string();
      if (std::none_of(out.begin(), out.end(), [&](const auto& d) { return d.first == dir; }))
        out.emplace_back(dir, "ld.so.cache (ldconfig -p)");
    }
  }

  // The files of `dir` that `name` matches, in the step's order.
  std::vector<std::string> matches_in(const Place& at, const std::string& dir, const std::string& name,
                                      Step::Sort sort) {
    std::vector<std::string> found;
    bool indexed = at.kind == Place::Kind::kSysPath || at.kind == Place::Kind::kPackage;
    if (indexed) {
      // Inside the environment: the ELF files of its index (a simulated install's included).
      auto it = self_.elf_names_by_dir_.find(dir);
      if (it != self_.elf_names_by_dir_.end())
        for (const std::string& n : it->second)
          if (matches(name, n)) found.push_back(dir + "/" + n);
    } else if (is_glob(name) || at.recursive) {
      found = self_.glob(dir, name, at.recursive);
    } else if (path_exists(env_, dir + "/" + name)) {
      found.push_back(dir + "/" + name);
    }
    std::erase_if(found, [&](const std::string& path) {
      return std::any_of(at.exclude.begin(), at.exclude.end(),
                         [&](const std::string& x) { return path.find(x) != std::string::npos; });
    });
    if (sort != Step::Sort::kListing) {
      auto base = [](const std::string& p) { return p.substr(p.rfind('/') + 1); };
      std::stable_sort(found.begin(), found.end(), [&](const std::string& a, const std::string& b) {
        return sort == Step::Sort::kName ? base(a) < base(b) : base(b) < base(a);
      });
    }
    return found;
  }

  // The package's own directories: each top-level package its RECORD lists an __init__.py for.
  std::vector<std::string> package_dirs() const {
    std::vector<std::string> out;
    if (!run_.dist) return out;
    for (const python::RecordEntry& e : run_.dist->record) {
      fs::path rel(e.path);
      if (rel.filename() == "__init__.py" && std::distance(rel.begin(), rel.end()) == 2)
        out.push_back(e.resolved.parent_path().string());
    }
    return out;
  }

  std::optional<std::string> variable(const std::string& name) const { return self_.variable(name); }

  bool names_a_library_of(const OwnLoad& l, const std::string& list_name) const {
    const std::vector<ListItem>* items = list(list_name);
    return items && !l.errors.empty() && names_a_library(*items, l.errors.front().message);
  }

  bool holds_variable(const Condition& c) {
    std::optional<std::string> v = variable(c.name);
    switch (c.test) {
      case Condition::Test::kSet: return (v && !v->empty()) == c.set;
      case Condition::Test::kPresent: return v.has_value();
      case Condition::Test::kInt: break;
    }
    std::optional<long long> n = python_int(v.value_or(c.fallback));
    if (!n) run_.decided = false;  // int() raises ValueError: not modelled
    return n && *n != 0;
  }

  bool holds(const Condition& c) {
    auto done = [&]() -> const OwnLoad* {
      auto it = ids_.find(c.name);
      return it == ids_.end() ? nullptr : &run_.loads[it->second];
    };
    switch (c.kind) {
      case Condition::Kind::kVariable: return holds_variable(c);
      case Condition::Kind::kOnPath: {
        // execvp's search (os.get_exec_path: os.defpath where PATH is unset); an element it cannot
        // decide (a relative one) gives no verdict.
        std::optional<std::string> found = find_on_path(env_, variable("PATH").value_or("/bin:/usr/bin"), c.name);
        if (!found) run_.decided = false;
        return found && !found->empty();
      }
      case Condition::Kind::kFailed: {
        const OwnLoad* l = done();
        return l && !l->path.empty() && l->object < 0 && (c.naming.empty() || names_a_library_of(*l, c.naming));
      }
      case Condition::Kind::kLoaded: {
        const OwnLoad* l = done();
        return l && l->object >= 0;
      }
      case Condition::Kind::kFound: {
        const OwnLoad* l = done();
        return l && !l->path.empty() && l->place == c.place;
      }
      case Condition::Kind::kLdconfig:
        return std::any_of(self_.ldconfig_lines().begin(), self_.ldconfig_lines().end(),
                           [&](const std::string& line) { return line.find(c.name) != std::string::npos; });
      case Condition::Kind::kGpu: return self_.gpu_ && *self_.gpu_ == c.set;
      case Condition::Kind::kMapped:
        for (size_t i = 0; i < p_.objects().size(); ++i)
          if (p_.mapped(static_cast<int>(i)) && p_.objects()[i].path.find(c.name) != std::string::npos) return true;
        return false;
      case Condition::Kind::kAll:
        return std::all_of(c.parts.begin(), c.parts.end(), [&](const Condition& x) { return holds(x); });
      case Condition::Kind::kAny:
        return std::any_of(c.parts.begin(), c.parts.end(), [&](const Condition& x) { return holds(x); });
      case Condition::Kind::kNot: return c.parts.empty() || !holds(c.parts.front());
    }
    return false;
  }

  std::optional<std::string> value(const std::string& key) { return values_.value(key); }
  std::optional<std::string> fill(const std::string& text, const std::string& lib) { return values_.fill(text, lib); }
  static std::string upper(const std::string& s) { return RuleValues::upper(s); }

  // The copy a load opened; where no place held one, the first name in the first directory its
  // first place names (the path a package that opens by path puts in its error), or the name
  // itself for a dlopen place.
  std::string path_of(const OwnLoad& l) {
    if (!l.path.empty() || l.names.empty() || !l.step || l.step->places.empty()) return l.path;
    const Place& first = l.step->places.front();
    if (first.kind == Place::Kind::kDlopen) return l.names.front();
    OwnLoad scratch = l;  // an ldconfig place notes its lines in the load it is given
    std::vector<std::pair<std::string, std::string>> dirs = directories(first, scratch);
    return dirs.empty() ? "" : dirs.front().first + "/" + l.names.front();
  }

  // The outcome's words with what happened put in, as Python's str.format: {{ and }} are braces.
  std::string words(const std::string& text, const OwnLoad& l) {
    std::string tried;
    for (const std::string& n : l.names) tried += (tried.empty() ? "" : ", ") + n;
    std::map<std::string, std::string> known{{"name", l.names.empty() ? "" : l.names.front()},
                                             {"tried", tried},
                                             {"lib", l.lib},
                                             {"LIB", upper(l.lib)},
                                             {"dlerror", l.errors.empty() ? "" : l.errors.front().message},
                                             {"path", path_of(l)},
                                             {"sys_path", python_list(env_.python.sys_path)},
                                             {"listed", python_list(l.listed)}};
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
      if ((text[i] == '{' || text[i] == '}') && i + 1 < text.size() && text[i + 1] == text[i]) {
        out += text[i++];
        continue;
      }
      size_t close = text[i] == '{' ? text.find('}', i) : std::string::npos;
      if (close == std::string::npos) {
        out += text[i];
        continue;
      }
      std::string key = text.substr(i + 1, close - i - 1);
      auto it = known.find(key);
      std::optional<std::string> v = it != known.end() ? std::optional<std::string>(it->second) : value(key);
      out += v ? *v : text.substr(i, close - i + 1);
      i = close;
    }
    return out;
  }

  const PackageLoads& self_;
  const Environment& env_;
  loader::Process& p_;
  int caller_;
  RuleRun& run_;
  const PackageRule& rule_;
  const OpenFn& on_open_;
  std::map<std::string, size_t> ids_;
  std::vector<std::string> whats_;
  RuleValues values_;
};

std::optional<std::string> PackageLoads::variable(const std::string& name) const {
  for (const auto& [key, value] : overrides_)
    if (key == name) return value;
  return process_variable(env_, name);
}

const std::vector<std::string>& PackageLoads::ldconfig_lines() const {
  std::call_once(ldconfig_once_,
                 [&] { ldconfig_ = loader::ldconfig_print(env_.loader).value_or(std::vector<std::string>{}); });
  return ldconfig_;
}

std::vector<std::string> PackageLoads::glob(const std::string& dir, const std::string& pattern, bool recursive) const {
  std::lock_guard<std::mutex> lock(listings_mutex_);
  return python_glob(env_, dir, pattern, recursive, &listings_);
}

std::optional<RuleRun> PackageLoads::run(loader::Process& p, int caller, const Distribution& dist, Moment moment,
                                         const OpenFn& on_open) const {
  std::string file;
  const PackageRule* rule = rule_for(dist, moment, &file);
  if (!rule) return std::nullopt;
  RuleRun out;
  out.rule = rule;
  out.dist = &dist;
  out.file = file;
  Runner(*this, p, caller, out, on_open).run();
  return out;
}

std::vector<RuleRun> PackageLoads::run_opener(loader::Process& p, int opener, const OpenFn& on_open) const {
  std::vector<RuleRun> out;
  const loader::LoadedObject& o = p.objects()[opener];
  std::string soname = o.elf && o.elf->soname ? std::string(*o.elf->soname) : "";
  auto it = by_opener_.find(soname);
  if (it == by_opener_.end()) return out;
  std::string path = o.path;
  const Distribution* owner = env_.owner(environment::normalize_path(path));
  for (const PackageRule* rule : it->second) {
    if (!rule->releases.empty() && (!owner || !in_releases(owner->version, rule->releases))) continue;
    RuleRun r;
    r.rule = rule;
    r.dist = owner;
    r.file = path;
    Runner(*this, p, opener, r, on_open).run();
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::string> PackageLoads::directories(const Distribution& dist) const {
  std::vector<std::string> out;
  auto it = by_package_.find(dist.key());
  if (it == by_package_.end()) return out;
  // The first component of each directory a sys.path place names, {lib} put in for each library
  // the step opens; a component with another value stands for the whole entry.
  auto add = [&](const std::string& rel, const std::vector<std::string>& libs) {
    std::string first = rel.substr(0, rel.find('/'));
    for (const std::string& entry : env_.inventory.site_dirs)
      for (const std::string& lib : libs) {
        std::string component = first;
        for (size_t at = component.find("{lib}"); at != std::string::npos; at = component.find("{lib}"))
          component.replace(at, 5, lib);
        out.push_back(component.find('{') == std::string::npos ? entry + "/" + component : entry);
      }
  };
  for (const PackageRule* r : it->second) {
    environment::for_each_step(r->steps, [&](const Step& s) {
      std::vector<std::string> libs{s.lib};
      for (const auto& [name, items] : r->lists)
        if (name == s.each)
          for (const ListItem& item : items) libs.push_back(item.lib);
      for (const Place& at : s.places)
        if (at.kind == Place::Kind::kSysPath)
          for (const std::string& rel : at.dirs) add(rel, libs);
    });
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace envdoctor::imports
