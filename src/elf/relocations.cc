// The relocation tables (DT_RELA, DT_REL, DT_JMPREL): the undefined symbols they bind, in the
// order glibc processes them, and the relocations of the types a caller asks for (the loader's
// static TLS model asks for the TLS ones).
#include "elf/elf_file.h"
#include "elf/elf_parser.h"

namespace envdoctor::elf {

// Each relocation of the tables, in order, passed to `visit(Relocation)` until it returns false;
// then the next table.
template <typename E, typename Visit>
void Parser::for_each_relocation(const ElfFile& f, Visit visit) {
  Bytes b = f.bytes();
  for (const auto& t : f.rel_tables_) {
    u64 ent = t.rela ? sizeof(Rela<E>) : sizeof(Rel<E>);
    if (t.entsize != ent) continue;
    u64 n = t.size / ent;
    f.advise(t.off, t.size);
    for (u64 i = 0; i < n; ++i) {
      const u8* p = b.data() + t.off + i * ent;  // the table was bounds-checked as a whole
      auto read = [](const auto* rel) { return Relocation{rel->type(), rel->sym()}; };
      Relocation r = t.rela ? read(reinterpret_cast<const Rela<E>*>(p)) : read(reinterpret_cast<const Rel<E>*>(p));
      if (!visit(r)) break;
    }
  }
}

template <typename E>
std::vector<u32> Parser::scan_relocations(const ElfFile& f) {
  std::vector<u32> out;
  if (f.required_.empty()) return out;
  enum : u8 { kOther, kRequired, kListed };
  std::vector<u8> state(f.nsyms_, kOther);
  for (u32 sym : f.required_) state[sym] = kRequired;
  u64 left = f.required_.size();
  for_each_relocation<E>(f, [&](Relocation r) {
    if (left == 0) return false;
    if (r.symbol >= f.nsyms_ || state[r.symbol] != kRequired) return true;
    state[r.symbol] = kListed;
    --left;
    out.push_back(r.symbol);
    return true;
  });
  return out;
}

template <typename E>
std::vector<Relocation> Parser::scan_relocations_of(const ElfFile& f, bool (*wanted)(u16, u32)) {
  std::vector<Relocation> out;
  for_each_relocation<E>(f, [&](Relocation r) {
    if (wanted(f.machine, r.type)) out.push_back(r);
    return true;
  });
  return out;
}

std::vector<Relocation> ElfFile::relocations(bool (*wanted)(u16 machine, u32 type)) const {
  return scan_relocations_of_ ? scan_relocations_of_(*this, wanted) : std::vector<Relocation>{};
}

std::vector<u32> ElfFile::relocation_order() const {
  return scan_relocations_ ? scan_relocations_(*this) : std::vector<u32>{};
}

// The instantiations the other files of the reader call, one per (class, byte order).
template std::vector<u32> Parser::scan_relocations<Elf32<false>>(const ElfFile&);
template std::vector<u32> Parser::scan_relocations<Elf32<true>>(const ElfFile&);
template std::vector<u32> Parser::scan_relocations<Elf64<false>>(const ElfFile&);
template std::vector<u32> Parser::scan_relocations<Elf64<true>>(const ElfFile&);
template std::vector<Relocation> Parser::scan_relocations_of<Elf32<false>>(const ElfFile&, bool (*)(u16, u32));
template std::vector<Relocation> Parser::scan_relocations_of<Elf32<true>>(const ElfFile&, bool (*)(u16, u32));
template std::vector<Relocation> Parser::scan_relocations_of<Elf64<false>>(const ElfFile&, bool (*)(u16, u32));
template std::vector<Relocation> Parser::scan_relocations_of<Elf64<true>>(const ElfFile&, bool (*)(u16, u32));

}  // namespace envdoctor::elf
