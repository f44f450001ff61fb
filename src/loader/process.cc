// The load model's core (glibc 2.36 elf/rtld.c and elf/dl-open.c): the objects of one process
// and the names they answer to, the main program's load (rtld.c: dl_main, do_preload), dlopen
// (dl-open.c: dl_open_worker) and the marks a dlopen is undone to. The search for a name is in
// search.cc (elf/dl-load.c), the walk of dependencies in dependencies.cc (elf/dl-deps.c), version
// checks in versions.cc (elf/dl-version.c) and symbol binding in binding.cc (elf/dl-lookup.c).
#include "loader/process.h"

#include <algorithm>

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

Process::Process(const LoaderConfig& config, ObjectStore& store, std::shared_ptr<SearchMemo> searches)
    : config_(&config), store_(store), searches_(searches ? std::move(searches) : new_search_memo()) {}
static size_t name_hash(std::string_view name) { return std::hash<std::string_view>{}(name); }

bool Process::answers_to(const LoadedObject& o, std::string_view name) {
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
      LoadError error = resolution_error(r, main, objects_[main].path, host_class_);
      if (error.kind == LoadError::Kind::kWrongElfClass) reason = error.message.substr(r.name.size() + 2);
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
