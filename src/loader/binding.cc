// Symbol binding (glibc 2.36 elf/dl-lookup.c, _dl_lookup_symbol_x): the scope an object's
// references are looked up in, the references that stay unbound, and the assertion an
// unversioned copy of a versioned library meets (check_match).
#include <algorithm>
#include <iterator>

#include "loader/process.h"
#include "loader/symbols.h"

namespace envdoctor::loader {

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

// The library each verneed entry names (vn_file) among a list of providers: the first that
// answers to that SONAME, found once per binding rather than once per reference. A versioned
// reference's SymbolVersion::file is its entry's vn_file itself (the same bytes of the mapping),
// so the entry is told by address.
struct ExpectedProviders {
  ExpectedProviders(const elf::ElfFile& object, const std::vector<const elf::ElfFile*>& ask) {
    for (const elf::VersionNeed& vn : object.verneed) {
      auto it = std::find_if(ask.begin(), ask.end(),
                             [&](const elf::ElfFile* e) { return e->soname && *e->soname == vn.file; });
      if (it != ask.end()) by_file.emplace_back(vn.file.data(), *it);
    }
  }
  const elf::ElfFile* of(const std::optional<SymbolVersion>& version) const {
    if (version)
      for (const auto& [file, provider] : by_file)
        if (file == version->file.data()) return provider;
    return nullptr;
  }
  std::vector<std::pair<const char*, const elf::ElfFile*>> by_file;
};

// The provider in `ask` that defines the reference, or nullptr. A versioned reference names the
// library it expects (vn_file), `expected` in `ask`, which is asked first. The provider that
// answered goes to the front: an unversioned library (GTK, say) with thirty dependencies takes
// most of its symbols from a few of them, and asks those first from then on.
const elf::ElfFile* find_provider(std::vector<const elf::ElfFile*>& ask, const elf::ElfFile* expected,
                                  const elf::SymbolKey& key, const std::optional<SymbolVersion>& version,
                                  std::vector<u32>& scratch) {
  if (expected && defines(*expected, key, version, scratch)) return expected;
  for (auto it = ask.begin(); it != ask.end(); ++it) {
    if (*it == expected || !defines(**it, key, version, scratch)) continue;
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
  ExpectedProviders expected_of_all(*self, providers), expected_of_unasked(*self, unasked);
  const std::vector<u32>& refs = o.elf->required_symbols();
  for (size_t ref = 0; ref < refs.size(); ++ref) {
    const elf::ElfFile* before = known[ref];
    if (before && in_scope(before)) continue;
    auto sym = o.elf->symbol(refs[ref]);
    if (!sym) continue;
    std::optional<SymbolVersion> version = reference_version(*o.elf, *sym);
    const elf::ElfFile* found =
        before ? find_provider(providers, expected_of_all.of(version), elf::SymbolKey(sym->name), version, scratch)
               : find_provider(unasked, expected_of_unasked.of(version), elf::SymbolKey(sym->name), version, scratch);
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
std::optional<LoadError> Process::unversioned_abort(const std::vector<LoadedObject>& objects,
                                                    const std::vector<int>& order, const std::vector<int>& scope) {
  // Only a copy without .gnu.version can be met: most scopes hold none, and then no reference is
  // looked at.
  std::vector<int> unversioned;
  for (int i : scope)
    if (objects[i].elf && !objects[i].elf->has_versym()) unversioned.push_back(i);
  if (unversioned.empty()) return std::nullopt;
  std::vector<u32> scratch;
  for (int object : order) {
    const LoadedObject& o = objects[object];
    if (!o.elf) continue;
    std::vector<std::string_view> suspects;  // vn_file names of loaded copies without .gnu.version
    for (const elf::VersionNeed& vn : o.elf->verneed)
      for (int i : unversioned)
        if (answers_to(objects[i], vn.file)) suspects.push_back(vn.file);
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

}  // namespace envdoctor::loader
