// _dl_map_object's search for a name (glibc 2.36 elf/dl-load.c): a name already loaded, a path
// opened as it is, then DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, ld.so.cache and the default
// directories, each candidate checked as open_verify does; the searches a process and its
// copies share, and the error a failed search gives.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "loader/process.h"

namespace envdoctor::loader {

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
    if (!(quiet_if_absent && op->errnum == ENOENT)) {
      attempt(op->error, Attempt::Kind::kMissing);
      s.out->attempts.back().errnum = op->errnum;
    }
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
LoadError Process::resolution_error(const Resolution& r, int obj, const std::string& requester, u8 host_class) {
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

}  // namespace envdoctor::loader
