// Hand-made ELF shared objects for machines this host cannot compile for: the header says the
// machine, class, byte order and e_flags; a PT_DYNAMIC names NEEDED libraries and a SONAME, and
// the dynamic symbol table holds undefined references, each with the symbol version it needs
// (DT_VERSYM, DT_VERNEED), and defined functions. Written byte by byte in the chosen order, so
// that the reader is checked against an independent writer, not against itself.
#pragma once

#include <elf.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "support/types.h"

namespace envdoctor::test {

// Appends ELF fields in a chosen class and byte order.
class ElfWriter {
 public:
  ElfWriter(bool is64, bool be) : is64_(is64), be_(be) {}
  void put(u64 v, int size) {
    for (int i = 0; i < size; ++i) {
      int shift = be_ ? 8 * (size - 1 - i) : 8 * i;
      out.push_back(static_cast<u8>(v >> shift));
    }
  }
  void half(u64 v) { put(v, 2); }
  void word(u64 v) { put(v, 4); }
  void xword(u64 v) { put(v, is64_ ? 8 : 4); }  // Addr, Off, Xword, Sxword
  void bytes(const std::string& s) { out.insert(out.end(), s.begin(), s.end()); }
  void pad_to(u64 size) { out.resize(size, 0); }
  std::vector<u8> out;

 private:
  bool is64_, be_;
};

struct HandElf {
  bool is64 = true, be = false;
  u16 machine = EM_X86_64;
  u32 e_flags = 0;
  std::string soname;               // "" for none
  std::vector<std::string> needed;  // DT_NEEDED, in order
  std::string interp;               // PT_INTERP, "" for none
  struct Reference {
    std::string symbol, library, version;  // library and version "" for an unversioned one
  };
  std::vector<Reference> undefined;  // global, STT_FUNC
  std::vector<std::string> defined;  // global STT_FUNC symbols defined in the file, before the undefined
};

// The bytes of `spec`: one PT_LOAD over the whole file at address 0, PT_DYNAMIC, PT_INTERP.
inline std::vector<u8> write_elf(const HandElf& spec) {
  const bool is64 = spec.is64;
  const u64 ehsize = is64 ? 64 : 52, phentsize = is64 ? 56 : 32, dynent = is64 ? 16 : 8, syment = is64 ? 24 : 16;
  // The string table.
  std::string strtab(1, '\0');
  std::map<std::string, u64> at;
  auto str = [&](const std::string& s) {
    if (!at.count(s)) {
      at[s] = strtab.size();
      strtab += s + '\0';
    }
    return at[s];
  };
  for (const std::string& n : spec.needed) str(n);
  if (!spec.soname.empty()) str(spec.soname);
  if (!spec.interp.empty()) str(spec.interp);
  // Version needs: per library, its versions, each with an index from 2.
  std::map<std::string, std::vector<std::pair<std::string, u16>>> verneed;
  std::map<std::pair<std::string, std::string>, u16> index;
  u16 next = 2;
  for (const HandElf::Reference& r : spec.undefined) {
    str(r.symbol);
    if (r.version.empty() || index.count({r.library, r.version})) continue;
    str(r.library);
    str(r.version);
    index[{r.library, r.version}] = next;
    verneed[r.library].push_back({r.version, next++});
  }
  for (const std::string& d : spec.defined) str(d);
  const u64 nsyms = 1 + spec.undefined.size() + spec.defined.size();
  const u64 nphdr = spec.interp.empty() ? 2 : 3;
  const u64 phoff = ehsize, stroff = phoff + nphdr * phentsize;
  const u64 symoff = (stroff + strtab.size() + 7) & ~u64{7};
  const u64 versymoff = symoff + nsyms * syment;
  const u64 verneedoff = (versymoff + 2 * nsyms + 7) & ~u64{7};
  u64 nvernaux = 0;
  for (const auto& [lib, versions] : verneed) nvernaux += versions.size();
  const u64 hashoff = verneedoff + 16 * (verneed.size() + nvernaux);
  const u64 dynoff = (hashoff + 4 * (2 + 1 + nsyms) + 7) & ~u64{7};
  const u64 ndyn = spec.needed.size() + (spec.soname.empty() ? 0 : 1) + 6 + (verneed.empty() ? 0 : 3) + 1;
  const u64 total = dynoff + ndyn * dynent;

  ElfWriter w(is64, spec.be);
  w.bytes(
      std::string("\x7f"
                  "ELF",
                  4));
  w.out.push_back(is64 ? ELFCLASS64 : ELFCLASS32);
  w.out.push_back(spec.be ? ELFDATA2MSB : ELFDATA2LSB);
  w.out.push_back(EV_CURRENT);
  w.pad_to(EI_NIDENT);
  w.half(ET_DYN);
  w.half(spec.machine);
  w.word(EV_CURRENT);
  w.xword(0);      // e_entry
  w.xword(phoff);  // e_phoff
  w.xword(0);      // e_shoff
  w.word(spec.e_flags);
  w.half(ehsize);
  w.half(phentsize);
  w.half(nphdr);
  w.half(is64 ? 64 : 40);
  w.half(0);
  w.half(0);
  auto phdr = [&](u32 type, u64 off, u64 size) {
    if (is64) {
      w.word(type);
      w.word(PF_R);
      for (u64 v : {off, off, off, size, size, u64{8}}) w.xword(v);
    } else {
      w.word(type);
      for (u64 v : {off, off, off, size, size}) w.word(v);
      w.word(PF_R);
      w.word(4);
    }
  };
  phdr(PT_LOAD, 0, total);
  phdr(PT_DYNAMIC, dynoff, ndyn * dynent);
  if (!spec.interp.empty()) phdr(PT_INTERP, stroff + at[spec.interp], spec.interp.size() + 1);
  w.bytes(strtab);
  w.pad_to(symoff);
  auto sym = [&](u64 name, u8 info, u16 shndx, u64 value) {
    if (is64) {
      w.word(name);
      w.out.push_back(info);
      w.out.push_back(0);
      w.half(shndx);
      w.xword(value);
      w.xword(0);
    } else {
      w.word(name);
      w.word(value);
      w.word(0);
      w.out.push_back(info);
      w.out.push_back(0);
      w.half(shndx);
    }
  };
  sym(0, 0, 0, 0);
  for (const std::string& d : spec.defined) sym(at[d], ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), 5, 0x100);
  for (const HandElf::Reference& r : spec.undefined)
    sym(at[r.symbol], ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), SHN_UNDEF, 0);
  // .gnu.version: 0 for the null symbol, 1 (global) for definitions and unversioned references.
  w.half(0);
  for (size_t i = 0; i < spec.defined.size(); ++i) w.half(1);
  for (const HandElf::Reference& r : spec.undefined) w.half(r.version.empty() ? 1 : index[{r.library, r.version}]);
  w.pad_to(verneedoff);
  size_t lib_i = 0;
  for (const auto& [lib, versions] : verneed) {
    w.half(1);  // vn_version
    w.half(versions.size());
    w.word(at[lib]);
    w.word(16);  // vn_aux: right after this entry
    w.word(++lib_i == verneed.size() ? 0 : 16 * (1 + versions.size()));
    for (size_t i = 0; i < versions.size(); ++i) {
      const auto& [name, ndx] = versions[i];
      u32 h = 0;  // elf_hash
      for (unsigned char c : name) {
        h = (h << 4) + c;
        u32 g = h & 0xf0000000;
        if (g) h ^= g >> 24;
        h &= ~g;
      }
      w.word(h);
      w.half(0);  // vna_flags
      w.half(ndx);
      w.word(at[name]);
      w.word(i + 1 == versions.size() ? 0 : 16);
    }
  }
  // A SysV hash table with one bucket chaining every symbol, last to first.
  w.word(1);
  w.word(nsyms);
  w.word(nsyms - 1);
  for (u64 i = 0; i < nsyms; ++i) w.word(i == 0 ? 0 : i - 1);
  w.pad_to(dynoff);
  auto dyn = [&](i64 tag, u64 val) {
    w.xword(static_cast<u64>(tag));
    w.xword(val);
  };
  for (const std::string& n : spec.needed) dyn(DT_NEEDED, at[n]);
  if (!spec.soname.empty()) dyn(DT_SONAME, at[spec.soname]);
  dyn(DT_STRTAB, stroff);
  dyn(DT_STRSZ, strtab.size());
  dyn(DT_SYMTAB, symoff);
  dyn(DT_SYMENT, syment);
  dyn(DT_HASH, hashoff);
  dyn(DT_VERSYM, versymoff);
  if (!verneed.empty()) {
    dyn(DT_VERNEED, verneedoff);
    dyn(DT_VERNEEDNUM, verneed.size());
    dyn(DT_FLAGS_1, 0);
  }
  dyn(DT_NULL, 0);
  return w.out;
}

}  // namespace envdoctor::test
