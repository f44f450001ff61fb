// The relocation tables (DT_RELA, DT_REL, DT_JMPREL): the undefined symbols they bind, in the
// order glibc processes them, and the TLS blocks their TLS relocations place in static TLS.
#include <set>

#include "elf/elf_file.h"
#include "elf/elf_parser.h"

namespace envdoctor::elf {

template <typename E>
std::vector<u32> Parser::scan_relocations(const ElfFile& f) {
  std::vector<u32> out;
  if (f.required_.empty()) return out;
  enum : u8 { kOther, kRequired, kListed };
  std::vector<u8> state(f.nsyms_, kOther);
  for (u32 sym : f.required_) state[sym] = kRequired;
  u64 left = f.required_.size();
  Bytes b = f.bytes();
  for (const auto& t : f.rel_tables_) {
    u64 ent = t.rela ? sizeof(Rela<E>) : sizeof(Rel<E>);
    if (t.entsize != ent) continue;
    u64 n = t.size / ent;
    f.advise(t.off, t.size);
    for (u64 i = 0; i < n && left > 0; ++i) {
      const u8* p = b.data() + t.off + i * ent;  // the table was bounds-checked as a whole
      u32 sym = t.rela ? reinterpret_cast<const Rela<E>*>(p)->sym() : reinterpret_cast<const Rel<E>*>(p)->sym();
      if (sym >= f.nsyms_ || state[sym] != kRequired) continue;
      state[sym] = kListed;
      --left;
      out.push_back(sym);
    }
  }
  return out;
}

namespace {

enum class TlsRelocation { kNone, kStatic, kOptional };

// The dynamic relocation types by which ld.so places a TLS block in the static TLS block, per
// machine (glibc 2.36 sysdeps/*/dl-machine.h, elf_machine_rela / elf_machine_rel):
// CHECK_STATIC_TLS for initial-exec offsets, TRY_STATIC_TLS for TLS descriptors in a shared ld.so.
// x86-64's ld.so handles R_X86_64_TPOFF64 only; R_X86_64_TPOFF32 never reaches it.
TlsRelocation tls_relocation(u16 machine, u32 type) {
  switch (machine) {
    case EM_X86_64:
      if (type == R_X86_64_TPOFF64) return TlsRelocation::kStatic;
      if (type == R_X86_64_TLSDESC) return TlsRelocation::kOptional;
      break;
    case EM_386:
      if (type == R_386_TLS_TPOFF || type == R_386_TLS_TPOFF32) return TlsRelocation::kStatic;
      if (type == R_386_TLS_DESC) return TlsRelocation::kOptional;
      break;
    case EM_AARCH64:
      if (type == R_AARCH64_TLS_TPREL) return TlsRelocation::kStatic;
      if (type == R_AARCH64_TLSDESC) return TlsRelocation::kOptional;
      break;
  }
  return TlsRelocation::kNone;
}

}  // namespace

// A relocation's target block: the symbol's definer. Symbol 0 and local symbols are the object's
// own (resolve_map in elf/dl-reloc.c keeps the map for STB_LOCAL); so is a symbol it defines,
// which is what its own lookup finds unless another object interposes a TLS definition.
template <typename E>
std::vector<StaticTlsTarget> Parser::scan_tls_relocations(const ElfFile& f) {
  std::vector<StaticTlsTarget> out;
  if (!f.tls && !(f.flags & DF_STATIC_TLS)) return out;
  std::set<std::pair<std::string_view, bool>> seen;
  Bytes b = f.bytes();
  for (const auto& t : f.rel_tables_) {
    u64 ent = t.rela ? sizeof(Rela<E>) : sizeof(Rel<E>);
    if (t.entsize != ent) continue;
    u64 n = t.size / ent;
    f.advise(t.off, t.size);
    for (u64 i = 0; i < n; ++i) {
      const u8* p = b.data() + t.off + i * ent;  // the table was bounds-checked as a whole
      u32 type = t.rela ? reinterpret_cast<const Rela<E>*>(p)->type() : reinterpret_cast<const Rel<E>*>(p)->type();
      TlsRelocation kind = tls_relocation(f.machine, type);
      if (kind == TlsRelocation::kNone) continue;
      u32 sym = t.rela ? reinterpret_cast<const Rela<E>*>(p)->sym() : reinterpret_cast<const Rel<E>*>(p)->sym();
      StaticTlsTarget target{"", kind == TlsRelocation::kOptional};
      if (sym != 0) {
        std::optional<Symbol> s = read_symbol<E>(f, sym, true);
        if (!s) continue;  // beyond the symbol table: nothing a model can say
        if (!s->defined() && s->bind != STB_LOCAL) target.symbol = s->name;
      }
      if (seen.insert({target.symbol, target.optional}).second) out.push_back(target);
    }
  }
  return out;
}

std::vector<StaticTlsTarget> ElfFile::static_tls_targets() const {
  return scan_tls_relocations_ ? scan_tls_relocations_(*this) : std::vector<StaticTlsTarget>{};
}

std::vector<u32> ElfFile::relocation_order() const {
  return scan_relocations_ ? scan_relocations_(*this) : std::vector<u32>{};
}

// The instantiations the other files of the reader call, one per (class, byte order).
template std::vector<u32> Parser::scan_relocations<Elf32<false>>(const ElfFile&);
template std::vector<u32> Parser::scan_relocations<Elf32<true>>(const ElfFile&);
template std::vector<u32> Parser::scan_relocations<Elf64<false>>(const ElfFile&);
template std::vector<u32> Parser::scan_relocations<Elf64<true>>(const ElfFile&);
template std::vector<StaticTlsTarget> Parser::scan_tls_relocations<Elf32<false>>(const ElfFile&);
template std::vector<StaticTlsTarget> Parser::scan_tls_relocations<Elf32<true>>(const ElfFile&);
template std::vector<StaticTlsTarget> Parser::scan_tls_relocations<Elf64<false>>(const ElfFile&);
template std::vector<StaticTlsTarget> Parser::scan_tls_relocations<Elf64<true>>(const ElfFile&);

}  // namespace envdoctor::elf
