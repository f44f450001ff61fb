#include "loader/symbols.h"

#include <algorithm>

namespace envdoctor::loader {

std::optional<SymbolVersion> reference_version(const elf::ElfFile& object, const elf::Symbol& ref) {
  if (!ref.versym) return std::nullopt;
  u16 ndx = *ref.versym & 0x7fff;
  std::string_view file;
  const elf::VersionNeedAux* aux = object.vernaux_for(ndx, &file);
  if (!aux || aux->hash == 0) return std::nullopt;
  return SymbolVersion{aux->name, aux->hash, (aux->other & 0x8000) != 0, file};
}

namespace {

bool usable(const elf::Symbol& s) {
  if (s.value == 0 && s.shndx != SHN_ABS && s.type != STT_TLS) return false;
  if (s.shndx == SHN_UNDEF) return false;
  constexpr unsigned kAllowed = (1u << STT_NOTYPE) | (1u << STT_OBJECT) | (1u << STT_FUNC) | (1u << STT_COMMON) |
                                (1u << STT_TLS) | (1u << STT_GNU_IFUNC);
  if (s.type > 15 || ((1u << s.type) & kAllowed) == 0) return false;
  if (s.visibility == STV_HIDDEN || s.visibility == STV_INTERNAL) return false;
  return s.bind == STB_GLOBAL || s.bind == STB_WEAK || s.bind == STB_GNU_UNIQUE;
}

// The hash and name of the version a definition carries; {0, ""} for index 0 and 1 and for the
// file's base version, which glibc does not enter in l_versions.
std::pair<u32, std::string_view> definition_version(const elf::ElfFile& e, u16 versym) {
  const elf::VersionDef* d = e.verdef_for(versym & 0x7fff);
  if (!d || (d->flags & VER_FLG_BASE)) return {0, {}};
  return {d->hash, d->name};
}

}  // namespace

bool defines(const elf::ElfFile& e, const elf::SymbolKey& key, const std::optional<SymbolVersion>& version,
             std::vector<u32>& scratch) {
  if (e.bloom_rejects(key.gnu)) return false;
  int versioned_candidates = 0;
  scratch.clear();
  e.find_symbols(key, scratch);
  for (u32 idx : scratch) {
    auto s = e.symbol_without_name(idx);  // find_symbols compared the name already
    if (!s || !usable(*s)) continue;
    if (version) {
      if (!s->versym) return true;
      auto [hash, vname] = definition_version(e, *s->versym);
      bool same = hash == version->hash && vname == version->name;
      if (!same && (version->hidden || hash != 0 || (*s->versym & 0x8000))) continue;
      return true;
    }
    if (!s->versym || (*s->versym & 0x7fff) < 3) return true;
    if ((*s->versym & 0x8000) == 0) ++versioned_candidates;
  }
  return versioned_candidates == 1;
}

std::shared_ptr<const BindingCache::Entry> BindingCache::get(const elf::ElfFile* object) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(object);
  return it == entries_.end() ? nullptr : it->second;
}

void BindingCache::copy_from(const BindingCache& other) {
  std::scoped_lock lock(mu_, other.mu_);
  entries_ = other.entries_;
}

void BindingCache::remember(const elf::ElfFile* object, std::vector<const elf::ElfFile*> per_ref,
                            std::vector<const elf::ElfFile*> searched) {
  Entry e;
  e.complete = std::find(per_ref.begin(), per_ref.end(), nullptr) == per_ref.end();
  e.distinct = per_ref;
  std::erase(e.distinct, nullptr);
  std::sort(e.distinct.begin(), e.distinct.end());
  e.distinct.erase(std::unique(e.distinct.begin(), e.distinct.end()), e.distinct.end());
  e.per_ref = std::move(per_ref);
  e.searched = std::move(searched);
  auto shared = std::make_shared<const Entry>(std::move(e));
  std::lock_guard lock(mu_);
  entries_[object] = std::move(shared);
}

}  // namespace envdoctor::loader
