// The section headers (e_shoff) and their names (e_shstrndx): read on demand, never trusted by the
// loader model.
#include <algorithm>

#include "elf/elf_file.h"
#include "elf/elf_parser.h"

namespace envdoctor::elf {

template <typename E>
std::vector<Section> Parser::read_sections(const ElfFile& f) {
  std::vector<Section> out;
  Bytes b = f.bytes();
  const auto* eh = reinterpret_cast<const Ehdr<E>*>(b.data());
  u64 shoff = eh->e_shoff, shnum = eh->e_shnum, shstrndx = eh->e_shstrndx;
  if (shoff == 0 || eh->e_shentsize != sizeof(Shdr<E>)) return out;
  f.advise(shoff, std::max<u64>(shnum, 1) * sizeof(Shdr<E>));
  const u8* first = b.at(shoff, sizeof(Shdr<E>));
  if (!first) return out;
  const auto* sh0 = reinterpret_cast<const Shdr<E>*>(first);
  if (shnum == 0) shnum = sh0->sh_size;  // more than SHN_LORESERVE sections
  if (shstrndx == SHN_XINDEX) shstrndx = sh0->sh_link;
  if (shnum > b.size() / sizeof(Shdr<E>)) return out;
  const u8* all = b.at(shoff, shnum * sizeof(Shdr<E>));
  if (!all) return out;
  const auto* sh = reinterpret_cast<const Shdr<E>*>(all);
  Bytes names;
  if (shstrndx < shnum) {
    if (auto s = b.slice(sh[shstrndx].sh_offset, sh[shstrndx].sh_size)) {
      f.advise(sh[shstrndx].sh_offset, sh[shstrndx].sh_size);
      names = *s;
    }
  }
  out.reserve(shnum);
  for (u64 i = 0; i < shnum; ++i) {
    Section s;
    if (auto n = names.cstr(sh[i].sh_name)) s.name = *n;
    s.type = sh[i].sh_type;
    s.offset = sh[i].sh_offset;
    s.size = sh[i].sh_size;
    s.addr = sh[i].sh_addr;
    s.addralign = sh[i].sh_addralign;
    out.push_back(s);
  }
  return out;
}

std::vector<Section> ElfFile::sections() const { return read_sections_(*this); }

// The instantiations the other files of the reader call, one per (class, byte order).
template std::vector<Section> Parser::read_sections<Elf32<false>>(const ElfFile&);
template std::vector<Section> Parser::read_sections<Elf32<true>>(const ElfFile&);
template std::vector<Section> Parser::read_sections<Elf64<false>>(const ElfFile&);
template std::vector<Section> Parser::read_sections<Elf64<true>>(const ElfFile&);

}  // namespace envdoctor::elf
