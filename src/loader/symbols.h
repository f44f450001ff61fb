// Symbol binding as glibc's elf/dl-lookup.c does it: which definition, if any, a reference
// binds to over a scope. check_match's rules, in one place:
//  - a candidate needs a value (or SHN_ABS, or TLS), a definition (not SHN_UNDEF), a data or
//    code type (NOTYPE, OBJECT, FUNC, COMMON, TLS, GNU_IFUNC), default or protected visibility,
//    and GLOBAL, WEAK or GNU_UNIQUE binding;
//  - a versioned reference accepts a provider without .gnu.version, the same version, or an
//    unversioned, non-hidden definition;
//  - an unversioned reference accepts index 0..2 at once, and otherwise the one non-hidden
//    versioned definition if there is exactly one.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "elf/elf_file.h"

namespace envdoctor::loader {

// A version a reference asks for. The strings point into the referencing object's mapping.
struct SymbolVersion {
  std::string_view name;
  u32 hash = 0;
  bool hidden = false;
  std::string_view file;  // the vn_file it was required from
};

// The version a reference asks for (from the referencing object's .gnu.version and verneed),
// or nullopt for an unversioned reference.
std::optional<SymbolVersion> reference_version(const elf::ElfFile& object, const elf::Symbol& ref);

// Whether `object` holds a definition of `key` that check_match accepts for `version`.
// `scratch` is reused between calls to keep lookups free of allocation.
bool defines(const elf::ElfFile& object, const elf::SymbolKey& key, const std::optional<SymbolVersion>& version,
             std::vector<u32>& scratch);

// Whether a reference binds at all depends only on the *set* of providers in scope (each is
// asked on its own; order only picks the winner), and only grows with that set. So what one
// binding learnt holds for every later scope: a provider that satisfied a reference satisfies it
// in any scope that contains it, and a reference that no provider of a set satisfied needs only
// the providers outside that set asked. One `ldd` over a thousand files binds libc's references
// once, not a thousand times. Shared by all processes; safe across threads.
class BindingCache {
 public:
  struct Entry {
    // For each required symbol of the object (an index into its required_symbols()), a provider
    // known to define it, or nullptr when none of `searched` does.
    std::vector<const elf::ElfFile*> per_ref;
    // The distinct providers of per_ref, sorted; when `complete` (every reference has one), a
    // scope holding all of them satisfies every reference again.
    std::vector<const elf::ElfFile*> distinct;
    // Sorted: every provider asked, in vain, about each reference whose per_ref is nullptr.
    std::vector<const elf::ElfFile*> searched;
    bool complete = false;
  };
  // What the last binding of `object` learnt; nullptr the first time.
  std::shared_ptr<const Entry> get(const elf::ElfFile* object) const;
  void remember(const elf::ElfFile* object, std::vector<const elf::ElfFile*> per_ref,
                std::vector<const elf::ElfFile*> searched);
  // Starts from what `other` learnt (a what-if's store, from the store it is layered on).
  void copy_from(const BindingCache& other);

 private:
  mutable std::mutex mu_;
  std::unordered_map<const elf::ElfFile*, std::shared_ptr<const Entry>> entries_;
};

}  // namespace envdoctor::loader
