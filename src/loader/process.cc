#include "loader/process.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "loader/symbols.h"

namespace envdoctor::loader {

const char* rule_name(Rule rule) {
  switch (rule) {
    case Rule::kMain: return "input";
    case Rule::kInterpreter: return "interpreter";
    case Rule::kLoaded: return "already loaded";
    case Rule::kDirect: return "direct path";
    case Rule::kRpath: return "RPATH";
    case Rule::kLdLibraryPath: return "LD_LIBRARY_PATH";
    case Rule::kRunpath: return "RUNPATH";
    case Rule::kLdSoCache: return "ld.so.cache";
    case Rule::kDefault: return "default path";
    case Rule::kNotFound: return "not found";
  }
  return "?";
}

std::string LoadError::reason() const {
  if (message.size() > path.size() + 2 && message.compare(0, path.size(), path) == 0 &&
      message.compare(path.size(), 2, ": ") == 0)
    return message.substr(path.size() + 2);
  return message;
}

// The state of one _dl_map_object search.
struct Process::Search {
  std::string name;
  Resolution* out = nullptr;
  std::optional<std::string> fatal;  // "PATH: message": open_verify rejected a candidate
  std::shared_ptr<const OpenResult> opened;
  std::string path;
  int last_errno = 0;  // errno of the last candidate that did not load (ENOENT for a skipped one)
};

// A search's outcome, kept for the copies of a process: the file found (or the failure) with
// every attempt that led there.
struct Process::SearchMemo {
  struct Outcome {
    Resolution r;  // its name and object are the first search's, and not used
    std::shared_ptr<const OpenResult> opened;
    std::string path;
    std::optional<std::string> fatal;
  };
  std::shared_mutex mu;
  std::unordered_map<std::string, Outcome> outcomes;
};

std::shared_ptr<Process::SearchMemo> Process::new_search_memo() { return std::make_shared<SearchMemo>(); }

Process::Process(const LoaderConfig& config, ObjectStore& store, std::shared_ptr<SearchMemo> searches)
    : config_(&config), store_(store), searches_(searches ? std::move(searches) : new_search_memo()) {}

static size_t name_hash(std::string_view name) { return std::hash<std::string_view>{}(name); }

static bool answers_to(const LoadedObject& o, std::string_view name) {
  return o.path == name || std::find(o.names.begin(), o.names.end(), name) != o.names.end() ||
         (o.elf && o.elf->soname && *o.elf->soname == name);
}

int Process::find_loaded(std::string_view name) {
  // glibc matches the requested name against every loaded object's l_name and l_libname list,
  // and against its SONAME (added to the list on first use); the first object in load order
  // wins. Objects of a failed dlopen are gone (forget_dead).
  size_t hash = name_hash(name);
  int found = -1;
  if (!slots_.empty())
    for (size_t mask = slots_.size() - 1, i = hash & mask; slots_[i] >= 0; i = (i + 1) & mask) {
      const NameEntry& e = by_name_[slots_[i]];
      if (e.hash == hash && (found < 0 || e.object < found) && answers_to(objects_[e.object], name)) found = e.object;
    }
  if (found < 0) return -1;
  LoadedObject& o = objects_[found];
  if (o.path != name && std::find(o.names.begin(), o.names.end(), name) == o.names.end())
    o.names.emplace_back(name);  // matched by SONAME
  return found;
}

void Process::index_name(int object, std::string_view name) {
  by_name_.push_back({name_hash(name), object});
  auto place = [&](int entry) {
    size_t mask = slots_.size() - 1, i = by_name_[entry].hash & mask;
    while (slots_[i] >= 0) i = (i + 1) & mask;
    slots_[i] = entry;
  };
  if (by_name_.size() * 2 <= slots_.size()) {
    place(static_cast<int>(by_name_.size() - 1));
    return;
  }
  // At most half full, so that a probe ends soon at an empty slot.
  slots_.assign(std::max<size_t>(64, slots_.size() * 2), -1);
  for (size_t e = 0; e < by_name_.size(); ++e) place(static_cast<int>(e));
}

void Process::add_name(int object, std::string_view name) {
  objects_[object].names.emplace_back(name);
  index_name(object, name);
}

void Process::forget_dead() {
  by_name_.clear();
  slots_.clear();
  for (size_t i = 0; i < objects_.size(); ++i) {
    if (dead_[i]) continue;
    const LoadedObject& o = objects_[i];
    int idx = static_cast<int>(i);
    index_name(idx, o.path);
    for (const std::string& n : o.names) index_name(idx, n);
    if (o.elf && o.elf->soname) index_name(idx, *o.elf->soname);
  }
}

std::string Process::origin(int object) const { return origin_of(objects_[object].path, config_->cwd); }

int Process::add_object(const std::string& path, std::shared_ptr<const OpenResult> opened, int loader, Rule rule) {
  LoadedObject o;
  o.path = path;
  o.elf = opened ? opened->elf : nullptr;
  if (opened) o.id = opened->id;
  o.loader = loader;
  o.rule = rule;
  objects_.push_back(std::move(o));
  dead_.push_back(false);
  int idx = static_cast<int>(objects_.size() - 1);
  index_name(idx, path);
  if (objects_[idx].elf && objects_[idx].elf->soname) index_name(idx, *objects_[idx].elf->soname);
  chain_.push_back({idx, {}});
  return idx;
}

bool Process::try_path(Search& s, const std::string& path, Rule rule, const std::string& source, int rpath_owner,
                       bool quiet_if_absent) {
  auto op = store_.open(path);
  auto attempt = [&](std::string outcome, Attempt::Kind kind) {
    s.out->attempts.push_back({path, std::move(outcome), kind});
  };
  // open_verify names the file by its path; _dl_map_object_from_fd, by the name asked for.
  auto fatal = [&](const std::string& message, bool by_name = false) {
    attempt(message, Attempt::Kind::kRejected);
    s.fatal = (by_name ? s.name : path) + ": " + message;
    s.path = path;
    return true;
  };
  if (op->status == OpenResult::Status::kMissing) {
    // Whether open_path moves on depends on this errno (see search_dirs).
    if (!(quiet_if_absent && op->errnum == ENOENT)) attempt(op->error, Attempt::Kind::kMissing);
    s.last_errno = op->errnum;
    return false;
  }
  // open_verify (elf/dl-load.c) judges in this order: length, magic, class (another class is
  // skipped, not an error), byte order, the rest of e_ident, e_version, machine (another machine
  // is skipped), e_type, e_phentsize, the program headers. Every error it meets first is fatal,
  // even in the middle of a search.
  Verdict v = verify(*op, host_class_, host_data_, host_machine_);
  switch (v.kind) {
    case Verdict::Kind::kOtherClass:
      s.last_errno = ENOENT;
      attempt(std::string("wrong ELF class: ") + elf::elf_class_name(op->ident.elf_class) + " (skipped)",
              Attempt::Kind::kOtherClass);
      return false;
    case Verdict::Kind::kOtherMachine:
      s.last_errno = ENOENT;
      attempt("wrong machine (skipped)", Attempt::Kind::kOtherMachine);
      return false;
    case Verdict::Kind::kReject: return fatal(v.message, v.mapping);
    case Verdict::Kind::kAccept: break;
  }
  s.opened = op;
  s.path = path;
  s.out->rule = rule;
  s.out->source = source;
  s.out->rpath_owner = rpath_owner;
  return true;
}

void Process::search_dirs(Search& s, const std::vector<std::string>& dirs, Rule rule, int rpath_owner) {
  std::string path;  // one buffer for every candidate: most of them do not exist
  for (const std::string& dir : dirs) {
    std::string_view slash = !dir.empty() && dir.back() != '/' ? "/" : "";
    // Only a candidate that exists is worth a line in the explanation; the others are glibc's
    // speculative hwcaps probes. In the current directory (an empty element) every one is: the
    // directory a program is started from is not the package's to choose.
    bool cwd = dir.empty();
    size_t first_attempt = s.out->attempts.size();
    auto mark_cwd = [&]() {
      if (cwd)
        for (size_t i = first_attempt; i < s.out->attempts.size(); ++i) s.out->attempts[i].empty_element = rule;
    };
    for (const std::string& sub : config_->subdirs) {
      path.assign(dir).append(slash).append(sub).append("/").append(s.name);
      if (try_path(s, path, rule, dir, rpath_owner, !cwd)) {
        mark_cwd();
        return;
      }
    }
    path.assign(dir).append(slash).append(s.name);
    bool found = try_path(s, path, rule, dir, rpath_owner);
    mark_cwd();
    if (found) return;
    // open_path gives up on the whole list when, in a directory that exists, the last open
    // failed with anything but ENOENT or EACCES (a symlink loop, a name too long): "the file
    // exists and is readable, but something went wrong" (elf/dl-load.c). The next source
    // (another RPATH, LD_LIBRARY_PATH, the cache...) is still tried. Relative directories
    // count as existing without a stat (fillin_rpath).
    if (s.last_errno != ENOENT && s.last_errno != EACCES && s.last_errno != 0 && is_directory(dir)) {
      s.out->attempts.push_back({path, "the rest of this list is not searched", Attempt::Kind::kNote});
      return;
    }
  }
}

bool Process::is_directory(const std::string& dir) const {
  if (dir.empty() || dir[0] != '/') return true;
  struct stat st;
  return ::stat(store_.host_path(dir).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// _dl_map_object's search for a name not yet loaded: fills `s` and its resolution's rule,
// source and attempts.
void Process::search(Search& s, int requester) {
  const std::string& name = s.name;
  Resolution& r = *s.out;
  const LoadedObject* req = requester >= 0 ? &objects_[requester] : nullptr;
  auto done = [&]() { return s.opened || s.fatal; };

  if (name.find('/') != std::string::npos) {
    auto path = req ? expand_dst(name, origin(requester), *config_) : std::optional<std::string>(name);
    if (path) try_path(s, *path, Rule::kDirect, "", -1);
  } else {
    const elf::ElfFile* req_elf = req ? req->elf.get() : nullptr;
    // DT_RPATH of the loader and of its loaders, then of the main program, but only when the
    // loader has no DT_RUNPATH (elf/dl-load.c). An object with both has no RPATH at all.
    if (!req_elf || !req_elf->runpath) {
      std::vector<bool> seen(objects_.size(), false);
      auto try_rpath = [&](int l) {
        if (l < 0 || seen[l]) return;
        seen[l] = true;
        const elf::ElfFile* e = objects_[l].elf.get();
        if (!e || !e->rpath || e->runpath) return;
        search_dirs(s, split_search_path(*e->rpath, ":", origin(l), *config_), Rule::kRpath, l);
      };
      for (int l = requester; l >= 0 && !done(); l = objects_[l].loader) try_rpath(l);
      if (!done() && !objects_.empty()) try_rpath(0);
    }
    if (!done() && !config_->ld_library_path.empty()) {
      if (!ld_library_path_dirs_) {
        std::optional<std::string> main_origin;
        if (!objects_.empty()) main_origin = origin(0);
        ld_library_path_dirs_ = split_search_path(config_->ld_library_path, ":;", main_origin, *config_);
      }
      search_dirs(s, *ld_library_path_dirs_, Rule::kLdLibraryPath, -1);
    }
    if (!done() && req_elf && req_elf->runpath)
      search_dirs(s, split_search_path(*req_elf->runpath, ":", origin(requester), *config_), Rule::kRunpath, requester);

    // DF_1_NODEFLIB of the loader (or of the main program) keeps the system directories out,
    // both as default path and as ld.so.cache entries that lie in them.
    const LoadedObject* flags_of = req ? req : (objects_.empty() ? nullptr : &objects_[0]);
    bool nodeflib = flags_of && flags_of->elf && (flags_of->elf->flags_1 & DF_1_NODEFLIB);
    if (!done() && config_->cache) {
      auto flags = cache_flags_for_machine(host_machine_, host_class_ == ELFCLASS64);
      if (flags) {
        if (auto hit = config_->cache->lookup(name, *flags, config_->hwcaps, config_->cache_hwcaps)) {
          std::string path(*hit);
          bool in_system_dir = false;
          for (const std::string& d : config_->default_dirs)
            if (path.compare(0, d.size() + 1, d + "/") == 0) in_system_dir = true;
          if (!(nodeflib && in_system_dir)) try_path(s, path, Rule::kLdSoCache, config_->cache_path, -1);
          else
            r.attempts.push_back({path, "in " + config_->cache_path + ", but in a system directory (DF_1_NODEFLIB)",
                                  Attempt::Kind::kNote});
        } else {
          // Said for the explanation: the cache was asked and had nothing.
          r.attempts.push_back({config_->cache_path, "no entry for " + name, Attempt::Kind::kNote});
        }
      }
    }
    if (!done() && !nodeflib) search_dirs(s, config_->default_dirs, Rule::kDefault, -1);
  }

  if (!s.opened) {
    r.rule = Rule::kNotFound;
    if (s.fatal) {
      r.attempts.push_back({"", *s.fatal, Attempt::Kind::kFatal});
      r.rejected = s.path;
    }
  }
}

// What a search depends on, as a key, or "" when the search must be made each time. Without
// DT_RPATH in the requester's chain, a search reads only the name, the requester's DT_RUNPATH
// and $ORIGIN, its DF_1_NODEFLIB, and what every copy of this process shares: the configuration,
// LD_LIBRARY_PATH (with the main program's $ORIGIN) and the files, which do not change.
std::string Process::search_key(std::string_view name, int requester) const {
  const elf::ElfFile* req = requester >= 0 ? objects_[requester].elf.get() : nullptr;
  auto has_rpath = [&](int l) {
    const elf::ElfFile* e = objects_[l].elf.get();
    return e && e->rpath && !e->runpath;
  };
  if (!req || !req->runpath) {
    size_t steps = 0;
    for (int l = requester; l >= 0 && steps <= objects_.size(); l = objects_[l].loader, ++steps)
      if (has_rpath(l)) return "";
    if (!objects_.empty() && has_rpath(0)) return "";
  }
  const LoadedObject* flags_of = requester >= 0 ? &objects_[requester] : (objects_.empty() ? nullptr : &objects_[0]);
  bool nodeflib = flags_of && flags_of->elf && (flags_of->elf->flags_1 & DF_1_NODEFLIB);
  std::string key(name);
  key.push_back('\0');
  key.push_back(nodeflib ? '1' : '0');
  // The main program decides which files are accepted (open_verify's class, data and machine).
  key.append({static_cast<char>(host_class_), static_cast<char>(host_data_), static_cast<char>(host_machine_ & 0xff),
              static_cast<char>(host_machine_ >> 8)});
  if (req && req->runpath) key.append(*req->runpath).append(1, '\0').append(origin(requester));
  if (config_->ld_library_path.find('$') != std::string::npos && !objects_.empty())
    key.append(1, '\0').append(origin(0));
  return key;
}

Resolution Process::resolve(std::string_view name_view, int requester) {
  Resolution r;
  r.name = name_view;
  const std::string& name = r.name;
  if (int idx = find_loaded(name); idx >= 0) {
    r.rule = Rule::kLoaded;
    r.object = idx;
    return r;
  }

  Search s;
  s.name = name;
  s.out = &r;
  std::string key = name.find('/') == std::string::npos ? search_key(name, requester) : "";
  const SearchMemo::Outcome* known = nullptr;
  if (!key.empty()) {
    std::shared_lock lock(searches_->mu);
    if (auto it = searches_->outcomes.find(key); it != searches_->outcomes.end()) known = &it->second;
  }
  if (known) {
    // Entries are never changed or erased once made, and a node stays where it is.
    r.rule = known->r.rule;
    r.source = known->r.source;
    r.rpath_owner = known->r.rule == Rule::kRunpath ? requester : known->r.rpath_owner;
    r.attempts = known->r.attempts;
    r.rejected = known->r.rejected;
    s.opened = known->opened;
    s.path = known->path;
    s.fatal = known->fatal;
  } else {
    search(s, requester);
    if (!key.empty()) {
      SearchMemo::Outcome o{r, s.opened, s.path, s.fatal};
      std::unique_lock lock(searches_->mu);
      searches_->outcomes.try_emplace(std::move(key), std::move(o));
    }
  }

  if (s.opened) {
    // The same file under another name is the same object (st_dev/st_ino, _dl_map_object_from_fd).
    for (size_t i = 0; i < objects_.size(); ++i) {
      if (dead_[i] || objects_[i].id == FileId{} || !(objects_[i].id == s.opened->id)) continue;
      add_name(static_cast<int>(i), name);
      r.object = static_cast<int>(i);
      return r;
    }
    int idx = add_object(s.path, s.opened, requester, r.rule);
    add_name(idx, name);
    objects_[idx].source = r.source;
    r.object = idx;
    return r;
  }
  return r;
}

// The error a failed resolution gives, in the loader's words.
static LoadError resolution_error(const Resolution& r, int obj, const std::string& requester, u8 host_class) {
  LoadError err;
  err.object = obj;
  err.path = requester;
  err.library = r.name;
  bool other_class = std::any_of(r.attempts.begin(), r.attempts.end(),
                                 [](const Attempt& a) { return a.kind == Attempt::Kind::kOtherClass; });
  if (r.ended_fatally()) {
    err.kind = LoadError::Kind::kInvalidElf;
    err.path = r.rejected;
    err.message = r.attempts.back().outcome;
  } else if (other_class) {
    err.kind = LoadError::Kind::kWrongElfClass;
    err.message =
        r.name + ": wrong ELF class: " + elf::elf_class_name(host_class == ELFCLASS64 ? ELFCLASS32 : ELFCLASS64);
  } else {
    err.kind = LoadError::Kind::kMissingLibrary;
    // A name with a slash is opened as it is, and open's errno is the loader's word ("Permission
    // denied" for a file it may not read); a search ends in ENOENT (elf/dl-load.c, open_path).
    bool direct = r.rule == Rule::kNotFound && r.name.find('/') != std::string::npos && r.attempts.size() == 1 &&
                  r.attempts[0].kind == Attempt::Kind::kMissing && !r.attempts[0].outcome.empty();
    err.message = r.name + ": cannot open shared object file: " +
                  (direct ? r.attempts[0].outcome : std::string("No such file or directory"));
  }
  return err;
}

// Inserts `entry` into the l_next chain just before the entry of `before_object`.
static void move_before(std::vector<Process::ListEntry>& chain, Process::ListEntry entry, int before_object) {
  auto at = std::find_if(chain.begin(), chain.end(), [&](const auto& e) { return e.object == before_object; });
  chain.insert(at, std::move(entry));
}

// One breadth-first walk of elf/dl-deps.c: the search list, which of its entries have had their
// dependencies mapped, and which objects it holds.
struct Process::DepsWalk {
  std::vector<int> searchlist;
  std::vector<bool> done;
  std::vector<bool> in_list;

  bool holds(int object, size_t objects) {
    if (in_list.size() < objects) in_list.resize(objects, false);
    return in_list[object];
  }
  void mark(int object, size_t objects) {
    holds(object, objects);
    in_list[object] = true;
  }
};

// open_verify's errors end ld.so even in trace mode (_dl_signal_error, not a fake entry): nothing
// more is mapped and no listing is printed.
void Process::stop_walk(int obj, Resolution r) {
  fatal_ = true;
  objects_[obj].deps.push_back(std::move(r));
}

// A DT_AUXILIARY or DT_FILTER object of `obj`: inserted before it, in the search list and in the
// l_next chain, so that it is walked before the walk moves past `obj`. False when its error ends
// the load.
bool Process::map_filtee(DepsWalk& w, int obj, const elf::ElfFile::Filtee& filtee, size_t& insert_at,
                         std::vector<LoadError>& errors, bool trace) {
  Resolution r = resolve(filtee.name, obj);
  int f = r.object;
  if (f < 0) {
    bool fatal = r.ended_fatally();
    // A missing auxiliary object is ignored; only trace mode lists it (as a fake entry).
    if (filtee.auxiliary && (fatal || !trace)) {
      objects_[obj].deps.push_back(std::move(r));
      return true;
    }
    if (!filtee.auxiliary) {
      errors.push_back(resolution_error(r, obj, objects_[obj].path, host_class_));
      if (fatal) return stop_walk(obj, std::move(r)), false;
    }
    move_before(chain_, ListEntry{-1, r.name}, obj);
  } else if (f != obj) {
    auto pos = std::find(w.searchlist.begin(), w.searchlist.end(), f);
    size_t p = static_cast<size_t>(pos - w.searchlist.begin());
    if (pos == w.searchlist.end() || p > insert_at) {
      if (pos != w.searchlist.end()) {
        w.searchlist.erase(pos);
        w.done.erase(w.done.begin() + static_cast<std::ptrdiff_t>(p));
      }
      w.searchlist.insert(w.searchlist.begin() + static_cast<std::ptrdiff_t>(insert_at), f);
      w.done.insert(w.done.begin() + static_cast<std::ptrdiff_t>(insert_at), false);
      ++insert_at;
      w.mark(f, objects_.size());
      auto c = std::find_if(chain_.begin(), chain_.end(), [&](const ListEntry& x) { return x.object == f; });
      if (c != chain_.end()) chain_.erase(c);
      move_before(chain_, ListEntry{f, {}}, obj);
    }
  }
  objects_[obj].deps.push_back(std::move(r));
  return true;
}

// One DT_NEEDED entry of `obj`: appended to the search list when it is new there. False when its
// error ends the load.
bool Process::map_needed(DepsWalk& w, int obj, std::string_view name, std::vector<LoadError>& errors) {
  Resolution r = resolve(name, obj);
  if (r.object >= 0) {
    if (!w.holds(r.object, objects_.size())) {
      w.mark(r.object, objects_.size());
      w.searchlist.push_back(r.object);
      w.done.push_back(false);
    }
  } else {
    errors.push_back(resolution_error(r, obj, objects_[obj].path, host_class_));
    if (errors.back().kind == LoadError::Kind::kInvalidElf) return stop_walk(obj, std::move(r)), false;
    chain_.push_back({-1, r.name});  // trace mode's fake entry, printed "=> not found"
  }
  objects_[obj].deps.push_back(std::move(r));
  return true;
}

std::vector<int> Process::map_deps(int root, std::vector<LoadError>& errors, bool trace,
                                   const std::vector<int>& preloads) {
  // elf/dl-deps.c: a breadth-first walk in which each object's DT_NEEDED entries are appended to
  // the list and its DT_AUXILIARY/DT_FILTER objects are inserted *before* it, in the list and in
  // the l_next chain, and are then walked themselves before the walk moves past the object.
  DepsWalk w{{root}, {false}, {}};
  w.mark(root, objects_.size());
  for (int p : preloads) {
    w.searchlist.push_back(p);
    w.done.push_back(false);
    w.mark(p, objects_.size());
  }
  for (size_t i = 0; i < w.searchlist.size();) {
    if (w.done[i]) {
      ++i;
      continue;
    }
    w.done[i] = true;
    int obj = w.searchlist[i];
    size_t insert_at = i;  // where the object stands; its filtees go before it
    // Copies: resolving may add objects and so move objects_. The names point into the object's
    // mapping, which outlives the walk.
    std::shared_ptr<const elf::ElfFile> e = objects_[obj].elf;
    std::vector<std::string_view> needed = e ? e->needed : std::vector<std::string_view>();
    std::vector<elf::ElfFile::Filtee> filtees = e ? e->filtees : std::vector<elf::ElfFile::Filtee>();
    objects_[obj].deps.reserve(objects_[obj].deps.size() + needed.size() + filtees.size());
    size_t next_filtee = 0;
    bool go_on = true;
    for (size_t n = 0; go_on && n <= needed.size(); ++n) {
      for (; go_on && next_filtee < filtees.size() && filtees[next_filtee].needed_before <= n; ++next_filtee)
        go_on = map_filtee(w, obj, filtees[next_filtee], insert_at, errors, trace);
      if (go_on && n < needed.size()) go_on = map_needed(w, obj, needed[n], errors);
    }
    if (!go_on) break;
    // Without filtees the walk moves on; with them it goes on at the first one.
    if (insert_at == i) ++i;
  }
  objects_[root].searchlist = w.searchlist;
  return w.searchlist;
}

void Process::check_versions(int object, std::vector<LoadError>& errors) {
  const LoadedObject& o = objects_[object];
  if (!o.elf) return;
  for (const elf::VersionNeed& vn : o.elf->verneed) {
    int provider = find_loaded(vn.file);
    if (provider < 0) continue;  // the library itself is missing: reported as such
    const elf::ElfFile* p = objects_[provider].elf.get();
    if (!p || !p->has_verdef()) continue;  // "no version information available": not an error
    for (const elf::VersionNeedAux& need : vn.versions) {
      bool found = std::any_of(p->verdef.begin(), p->verdef.end(),
                               [&](const elf::VersionDef& d) { return d.hash == need.hash && d.name == need.name; });
      if (found || (need.flags & VER_FLG_WEAK)) continue;
      LoadError err;
      err.kind = LoadError::Kind::kMissingVersion;
      err.object = object;
      err.path = o.path;
      err.library = objects_[provider].path;
      err.version = std::string(need.name);
      err.message = objects_[provider].path + ": version `" + err.version + "' not found (required by " + o.path + ")";
      errors.push_back(err);
    }
  }
}

Process::Scope Process::make_scope(std::vector<int> order) const {
  Scope scope;
  scope.set.reserve(order.size());
  for (int i : order)
    if (objects_[i].elf) scope.set.push_back(objects_[i].elf.get());
  std::sort(scope.set.begin(), scope.set.end());
  scope.set.erase(std::unique(scope.set.begin(), scope.set.end()), scope.set.end());
  scope.order = std::move(order);
  return scope;
}

// The providers an object's references are asked of, most likely first: the object itself when
// DT_SYMBOLIC, its own dependencies, then the rest of the scope in load order (dl-lookup.c asks
// in scope order; whether a reference binds does not depend on the order of asking).
std::vector<const elf::ElfFile*> Process::providers_for(int object, const Scope& scope) const {
  const LoadedObject& o = objects_[object];
  const elf::ElfFile* self = o.elf.get();
  std::vector<const elf::ElfFile*> providers;
  providers.reserve(scope.order.size() + 1);
  auto add = [&](int i) {
    const elf::ElfFile* e = objects_[i].elf.get();
    if (e && std::find(providers.begin(), providers.end(), e) == providers.end()) providers.push_back(e);
  };
  if (self->symbolic) add(object);
  for (const Resolution& r : o.deps)
    if (r.object >= 0 && (objects_[r.object].elf.get() == self || scope.contains(objects_[r.object].elf.get())))
      add(r.object);
  for (int i : scope.order) add(i);
  return providers;
}

namespace {

// The provider in `ask` that defines the reference, or nullptr. A versioned reference names the
// library it expects (vn_file), which is asked first. The provider that answered goes to the
// front: an unversioned library (GTK, say) with thirty dependencies takes most of its symbols
// from a few of them, and asks those first from then on.
const elf::ElfFile* find_provider(std::vector<const elf::ElfFile*>& ask, const elf::SymbolKey& key,
                                  const std::optional<SymbolVersion>& version, std::vector<u32>& scratch) {
  if (version) {
    auto expected = std::find_if(ask.begin(), ask.end(),
                                 [&](const elf::ElfFile* e) { return e->soname && *e->soname == version->file; });
    if (expected != ask.end() && defines(**expected, key, version, scratch)) return *expected;
  }
  for (auto it = ask.begin(); it != ask.end(); ++it) {
    if (!defines(**it, key, version, scratch)) continue;
    const elf::ElfFile* found = *it;
    std::rotate(ask.begin(), it, it + 1);
    return found;
  }
  return nullptr;
}

}  // namespace

// ld.so looks up only what relocations use, and fails at the first it cannot bind: the relocation
// tables say which unbound symbols matter, and in which order (DT_REL/DT_RELA, then DT_JMPREL).
void Process::report_unbound(int object, std::vector<u32> unbound, std::vector<LoadError>& errors) const {
  const LoadedObject& o = objects_[object];
  std::string missing_needed;  // what an unversioned reference may wait for
  for (const Resolution& r : o.deps)
    if (r.object < 0) missing_needed += (missing_needed.empty() ? "" : " or ") + r.name;
  auto loaded = [&](std::string_view name) {
    for (size_t i = 0; i < objects_.size(); ++i)
      if (!dead_[i] && answers_to(objects_[i], name)) return true;
    return false;
  };
  std::sort(unbound.begin(), unbound.end());
  for (u32 idx : o.elf->relocation_order()) {
    if (!std::binary_search(unbound.begin(), unbound.end(), idx)) continue;
    auto sym = o.elf->symbol(idx);
    if (!sym) continue;
    std::optional<SymbolVersion> version = reference_version(*o.elf, *sym);
    LoadError err;
    err.kind = LoadError::Kind::kUndefinedSymbol;
    err.object = object;
    err.path = o.path;
    err.symbol = std::string(sym->name);
    if (version) err.version = std::string(version->name);
    if (version && !version->file.empty()) {
      if (!loaded(version->file)) err.waiting_for = std::string(version->file);
    } else {
      err.waiting_for = missing_needed;
    }
    err.message = o.path + ": undefined symbol: " + err.symbol + (version ? ", version " + err.version : "");
    errors.push_back(err);
  }
}

void Process::bind_symbols(int object, const Scope& scope, std::vector<LoadError>& errors) {
  const LoadedObject& o = objects_[object];
  if (!o.elf || o.elf->required_symbols().empty()) return;
  const elf::ElfFile* self = o.elf.get();
  // A DT_SYMBOLIC object looks in itself first; it is in its own scope anyway.
  auto in_scope = [&](const elf::ElfFile* p) { return p == self || scope.contains(p); };
  // Whether a reference binds depends only on the set of providers in scope (BindingCache): when
  // every provider that satisfied this object's references before is in scope, there is nothing
  // to do, and that is the common case.
  BindingCache& cache = store_.bindings();
  std::shared_ptr<const BindingCache::Entry> previous = cache.get(self);
  if (previous && previous->complete && std::all_of(previous->distinct.begin(), previous->distinct.end(), in_scope))
    return;

  // Otherwise the providers are asked. A reference no provider satisfied last time needs only the
  // providers that were not asked then.
  std::vector<const elf::ElfFile*> providers = providers_for(object, scope), unasked;
  std::vector<const elf::ElfFile*> searched;
  if (previous) {
    for (const elf::ElfFile* p : providers)
      if (!std::binary_search(previous->searched.begin(), previous->searched.end(), p)) unasked.push_back(p);
    std::set_union(previous->searched.begin(), previous->searched.end(), scope.set.begin(), scope.set.end(),
                   std::back_inserter(searched));
  } else {
    unasked = providers;
    searched = scope.set;
  }
  if (self->symbolic && !std::binary_search(searched.begin(), searched.end(), self))
    searched.insert(std::upper_bound(searched.begin(), searched.end(), self), self);

  std::vector<const elf::ElfFile*> known =
      previous ? previous->per_ref : std::vector<const elf::ElfFile*>(o.elf->required_symbols().size());
  bool learnt = !previous || !unasked.empty();
  std::vector<u32> scratch;
  std::vector<u32> unbound;  // symbol indices
  const std::vector<u32>& refs = o.elf->required_symbols();
  for (size_t ref = 0; ref < refs.size(); ++ref) {
    const elf::ElfFile* before = known[ref];
    if (before && in_scope(before)) continue;
    auto sym = o.elf->symbol(refs[ref]);
    if (!sym) continue;
    const elf::ElfFile* found = find_provider(before ? providers : unasked, elf::SymbolKey(sym->name),
                                              reference_version(*o.elf, *sym), scratch);
    if (!found) unbound.push_back(refs[ref]);
    else if (!before) known[ref] = found;
  }
  if (!unbound.empty()) report_unbound(object, std::move(unbound), errors);
  if (learnt) cache.remember(self, std::move(known), std::move(searched));
}

// glibc 2.36 elf/dl-lookup.c, check_match: a versioned reference whose lookup meets first a
// definition in an object without .gnu.version that answers to the version's file (vn_file) fails
// `assert (version->filename == NULL || ! _dl_name_match_p (version->filename, map))`, and ld.so
// ends the process (_dl_fatal_printf, exit 127). An unversioned copy of a library over the
// versioned one its users were linked against does it at the first such symbol bound. Relocation
// runs dependencies first (`order`); `scope` is the lookup scope, in order.
static std::optional<LoadError> unversioned_abort(const std::vector<LoadedObject>& objects,
                                                  const std::vector<int>& order, const std::vector<int>& scope) {
  std::vector<u32> scratch;
  for (int object : order) {
    const LoadedObject& o = objects[object];
    if (!o.elf) continue;
    std::vector<std::string_view> suspects;  // vn_file names of loaded copies without .gnu.version
    for (const elf::VersionNeed& vn : o.elf->verneed)
      for (int i : scope)
        if (objects[i].elf && !objects[i].elf->has_versym() && answers_to(objects[i], vn.file))
          suspects.push_back(vn.file);
    if (suspects.empty()) continue;
    for (u32 ref : o.elf->required_symbols()) {
      auto sym = o.elf->symbol(ref);
      std::optional<SymbolVersion> version = sym ? reference_version(*o.elf, *sym) : std::nullopt;
      if (!version || std::find(suspects.begin(), suspects.end(), version->file) == suspects.end()) continue;
      elf::SymbolKey key(sym->name);
      for (int i : scope) {
        const elf::ElfFile* e = objects[i].elf.get();
        if (!e) continue;
        if (e->has_versym()) {
          if (defines(*e, key, version, scratch)) break;
          continue;
        }
        if (!defines(*e, key, std::nullopt, scratch)) continue;
        if (!answers_to(objects[i], version->file)) break;
        LoadError err;
        err.kind = LoadError::Kind::kMissingVersion;
        err.object = object;
        err.path = o.path;
        err.library = objects[i].path;
        err.symbol = std::string(sym->name);
        err.version = std::string(version->name);
        err.aborts = true;
        err.message =
            "Inconsistency detected by ld.so: dl-lookup.c: 107: check_match: Assertion `version->filename == NULL "
            "|| ! _dl_name_match_p (version->filename, map)' failed!";
        return err;
      }
    }
  }
  return std::nullopt;
}

std::vector<Process::UnversionedNeed> Process::unversioned_needs() const {
  std::vector<UnversionedNeed> out;
  for (const ListEntry& e : chain_) {
    if (e.object < 0 || dead_[e.object] || !objects_[e.object].elf) continue;
    for (const elf::VersionNeed& vn : objects_[e.object].elf->verneed)
      for (const Resolution& r : objects_[e.object].deps)
        if (r.object >= 0 && r.name == vn.file && objects_[r.object].elf && !objects_[r.object].elf->has_verdef()) {
          out.push_back({e.object, r.object});
          break;
        }
  }
  return out;
}

std::vector<int> Process::scope_of(int object) const {
  std::vector<int> scope = global_scope_;
  int root = objects_[object].local_root;
  if (root >= 0 && !objects_[root].global)
    scope.insert(scope.end(), objects_[root].searchlist.begin(), objects_[root].searchlist.end());
  return scope;
}

// rtld.c, do_preload: each name mapped as a dependency of the main program (_dl_map_object with
// main_map as the loader); a name that cannot be is said and ignored, and one that maps an
// object already loaded (a name given twice, ld.so itself) adds nothing.
void Process::preload(int main) {
  for (Preload& p : preloads(*config_)) {
    size_t before = objects_.size();
    Resolution r = resolve(p.name, main);
    if (r.object >= 0) {
      if (objects_.size() > before) preloaded_.push_back(r.object);
      continue;
    }
    // err_str of _dl_catch_error: the message without the object's name (or errno's words).
    std::string reason = "cannot open shared object file";
    if (r.ended_fatally()) {
      auto rejected = std::find_if(r.attempts.rbegin(), r.attempts.rend(),
                                   [](const Attempt& a) { return a.kind == Attempt::Kind::kRejected; });
      if (rejected != r.attempts.rend()) reason = rejected->outcome;
    } else {
      std::string message = resolution_error(r, main, objects_[main].path, host_class_).message;
      if (message.starts_with(r.name + ": wrong ELF class: ")) reason = message.substr(r.name.size() + 2);
    }
    preload_failures_.push_back({std::move(p), std::move(reason), std::move(r)});
  }
}

bool Process::load_main(const std::string& path, bool bind) {
  auto op = store_.open(path);
  if (op->status != OpenResult::Status::kOk) {
    LoadError err;
    err.kind =
        op->status == OpenResult::Status::kInvalid ? LoadError::Kind::kInvalidElf : LoadError::Kind::kMissingLibrary;
    err.path = path;
    err.library = path;
    err.message =
        path + ": " +
        (op->status == OpenResult::Status::kInvalid ? op->error : "cannot open shared object file: " + op->error);
    // open_verify judges the class, then the byte order, before the rest (a class of neither kind
    // is "the other class" to it); the reader's words come from further on.
    const OpenResult::Ident& id = op->ident;
    if (op->status == OpenResult::Status::kInvalid && id.magic && id.elf_class != ELFCLASS32 &&
        id.elf_class != ELFCLASS64)
      err.message =
          path + ": wrong ELF class: " + elf::elf_class_name(host_class_ == ELFCLASS64 ? ELFCLASS32 : ELFCLASS64);
    else if (op->status == OpenResult::Status::kInvalid && id.magic && id.data != host_data_)
      err.message = path + (host_data_ == ELFDATA2LSB ? ": ELF file data encoding not little-endian"
                                                      : ": ELF file data encoding not big-endian");
    errors_.push_back(err);
    return false;
  }
  if (op->elf->crash) {
    // ld.so maps the program as any object (elf/dl-map-segments.h): one cut short kills it.
    errors_.push_back({LoadError::Kind::kInvalidElf, -1, path, path, "", "", path + ": " + *op->elf->crash, ""});
    return false;
  }
  host_class_ = op->elf->elf_class;
  host_data_ = op->elf->data;
  host_machine_ = op->elf->machine;
  if (host_machine_ == EM_386) {
    // A 32-bit program gets the i386 loader's directories: a configuration of its own.
    own_config_ = std::make_unique<LoaderConfig>(LoaderConfig::for_i386(*config_));
    config_ = own_config_.get();
    searches_ = new_search_memo();  // searches depend on the configuration
  }

  // The main program, as `ld.so FILE` maps it: its name is the path as given, and it has no
  // file identity, so nothing is ever matched to it by inode.
  int main = add_object(path, op, -1, Rule::kMain);
  objects_[main].id = FileId{};
  add_name(main, path);

  // ld.so is loaded before anything else, under its PT_INTERP name and its SONAME.
  std::string interp = op->elf->interp ? std::string(*op->elf->interp) : config_->interpreter;
  auto iop = store_.open(interp);
  interpreter_ = add_object(interp, iop->status == OpenResult::Status::kOk ? iop : nullptr, -1, Rule::kInterpreter);
  add_name(interpreter_, interp);
  objects_[interpreter_].is_interpreter = true;
  if (iop->status != OpenResult::Status::kOk) add_name(interpreter_, interp.substr(interp.rfind('/') + 1));

  preload(main);
  std::vector<LoadError> missing, versions, symbols;
  std::vector<int> searchlist = map_deps(main, missing, /*trace=*/true, preloaded_);
  global_scope_ = searchlist;
  if (fatal_) {
    errors_ = missing;
    return true;
  }
  for (const ListEntry& e : chain_)
    if (e.object >= 0) check_versions(e.object, versions);
  if (bind) {
    // Relocation runs over the searchlist in reverse, dependencies before their users.
    Scope scope = make_scope(global_scope_);
    for (auto it = searchlist.rbegin(); it != searchlist.rend(); ++it)
      if (*it != interpreter_) bind_symbols(*it, scope, symbols);
    if (auto abort = unversioned_abort(objects_, {searchlist.rbegin(), searchlist.rend()}, scope.order))
      symbols.push_back(*abort);
  }

  for (auto* list : {&missing, &versions, &symbols}) errors_.insert(errors_.end(), list->begin(), list->end());
  return true;
}

Process::DlopenResult Process::dlopen(const std::string& path, bool global, int caller) {
  DlopenResult result;
  size_t first_new = objects_.size();
  Resolution r = resolve(path, caller);
  auto note = [&](LoadError err) {
    result.errors.push_back(err);
    if (!result.first) result.first = err;
  };
  if (r.object < 0) {
    // The name dlopen was given is the one its message names.
    note(resolution_error(r, -1, path, host_class_));
    return result;
  }
  result.object = r.object;
  if (static_cast<size_t>(r.object) < first_new) return result;  // already loaded: nothing to do

  int root = r.object;
  // elf/dl-open.c looks for the caller's link map only for a name without '/' (or with a DST):
  // an object opened by path has no loader, and its dependencies search no caller's RPATH.
  if (path.find('/') != std::string::npos && path.find('$') == std::string::npos) objects_[root].loader = -1;
  std::vector<LoadError> missing, versions, symbols;
  std::vector<int> searchlist = map_deps(root, missing, /*trace=*/false);
  for (size_t i = first_new; i < objects_.size(); ++i) {
    objects_[i].local_root = root;
    result.new_objects.push_back(static_cast<int>(i));
  }
  objects_[root].global = false;
  for (int i : searchlist) check_versions(i, versions);
  // Every object this call added has the same scope: the global one, then root's searchlist.
  Scope scope = make_scope(scope_of(root));
  for (auto it = searchlist.rbegin(); it != searchlist.rend(); ++it)
    if (static_cast<size_t>(*it) >= first_new) bind_symbols(*it, scope, symbols);
  std::vector<int> relocated;
  for (auto it = searchlist.rbegin(); it != searchlist.rend(); ++it)
    if (static_cast<size_t>(*it) >= first_new) relocated.push_back(*it);
  if (auto abort = unversioned_abort(objects_, relocated, scope.order)) symbols.push_back(*abort);

  for (auto* list : {&missing, &versions, &symbols})
    for (const LoadError& e : *list) note(e);
  if (!result.errors.empty()) {
    // dlopen fails and unloads what it mapped.
    for (int i : result.new_objects) dead_[i] = true;
    forget_dead();
    result.object = -1;
    return result;
  }
  if (global) {
    for (int i : searchlist)
      if (std::find(global_scope_.begin(), global_scope_.end(), i) == global_scope_.end()) global_scope_.push_back(i);
    objects_[root].global = true;
  }
  return result;
}

Process::Mark Process::mark() const {
  Mark m;
  m.objects = objects_.size();
  m.names.reserve(objects_.size());
  m.deps.reserve(objects_.size());
  for (const LoadedObject& o : objects_) {
    m.names.push_back(static_cast<u32>(o.names.size()));
    m.deps.push_back(static_cast<u32>(o.deps.size()));
  }
  m.chain = chain_;
  m.global_scope = global_scope_;
  m.by_name = by_name_;
  m.slots = slots_;
  m.fatal = fatal_;
  return m;
}

void Process::rollback(Mark m) {
  // What a load changes in the objects it found loaded: names they answer to (a SONAME match,
  // the same file under another name) and, for those in its search list, the dependencies the
  // walk resolved again. Everything else it added.
  objects_.resize(m.objects);
  dead_.resize(m.objects);
  for (size_t i = 0; i < m.objects; ++i) {
    objects_[i].names.resize(m.names[i]);
    objects_[i].deps.resize(m.deps[i]);
  }
  chain_ = std::move(m.chain);
  global_scope_ = std::move(m.global_scope);
  by_name_ = std::move(m.by_name);
  slots_ = std::move(m.slots);
  fatal_ = m.fatal;
}

std::vector<Process::ListEntry> Process::list_order() const {
  std::vector<ListEntry> out;
  if (fatal_) return out;  // ld.so died before printing anything
  // The listing walks the chain from main->l_next (rtld.c), so the main program's own filtees
  // and auxiliary objects, which dl-deps.c links in before it, are not printed.
  auto main_at = std::find_if(chain_.begin(), chain_.end(), [](const ListEntry& e) { return e.object == 0; });
  for (auto it = main_at == chain_.end() ? chain_.begin() : main_at + 1; it != chain_.end(); ++it)
    if (it->object != interpreter_) out.push_back(*it);
  if (objects_.empty()) return out;
  // ld.so goes back into the chain right after the object before it in main's searchlist.
  const std::vector<int>& sl = objects_[0].searchlist;
  auto pos = std::find(sl.begin(), sl.end(), interpreter_);
  if (pos == sl.end()) return out;
  int before = *(pos - 1);
  auto at = std::find_if(out.begin(), out.end(), [&](const ListEntry& e) { return e.object == before; });
  out.insert(at == out.end() ? out.begin() : at + 1, ListEntry{interpreter_, {}});
  return out;
}

}  // namespace envdoctor::loader
