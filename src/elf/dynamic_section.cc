// The dynamic section (PT_DYNAMIC) and its string table (DT_STRTAB): the tags, the names they
// point to (NEEDED, filtees, SONAME, RPATH, RUNPATH), and where the other tables lie in the file.
#include <algorithm>

#include "elf/elf_file.h"
#include "elf/elf_parser.h"

namespace envdoctor::elf {

template <typename E>
std::optional<u64> Parser::vaddr_to_offset(Bytes b, const std::vector<const Phdr<E>*>& loads, u64 addr) {
  for (const Phdr<E>* ph : loads) {
    u64 vaddr = ph->p_vaddr, filesz = ph->p_filesz;
    if (addr >= vaddr && addr - vaddr < filesz) {
      u64 off = static_cast<u64>(ph->p_offset) + (addr - vaddr);
      if (off < b.size()) return off;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// The entries up to DT_NULL (elf/get-dynamic-info.h); the flags go straight into `f`.
template <typename E>
static DynamicTags scan_dynamic(ElfFile& f, Bytes dyn) {
  DynamicTags t;
  u64 n = dyn.size() / sizeof(Dyn<E>);
  const auto* d = reinterpret_cast<const Dyn<E>*>(dyn.data());
  for (u64 i = 0; i < n; ++i) {
    i64 tag = d[i].d_tag;
    u64 val = d[i].d_val;
    if (tag == DT_NULL) break;
    switch (tag) {
      case DT_NEEDED: t.needed_offsets.push_back(val); break;
      case DT_AUXILIARY:
      case DT_FILTER: t.filtee_offsets.push_back({val, tag == DT_AUXILIARY, t.needed_offsets.size()}); break;
      case DT_SONAME: t.soname_off = val; break;
      case DT_RPATH: t.rpath_off = val; break;
      case DT_RUNPATH: t.runpath_off = val; break;
      case DT_STRTAB: t.strtab = val; break;
      case DT_STRSZ: t.strsz = val; break;
      case DT_SYMTAB: t.symtab = val; break;
      case DT_SYMENT: t.syment = val; break;
      case DT_VERSYM: t.versym = val; break;
      case DT_VERNEED: t.verneed = val; break;
      case DT_VERNEEDNUM: t.verneednum = val; break;
      case DT_VERDEF: t.verdef = val; break;
      case DT_VERDEFNUM: t.verdefnum = val; break;
      case DT_GNU_HASH: t.gnu_hash = val; break;
      case DT_HASH: t.sysv_hash = val; break;
      case DT_RELA: t.rela = val; break;
      case DT_RELASZ: t.relasz = val; break;
      case DT_RELAENT: t.relaent = val; break;
      case DT_REL: t.rel = val; break;
      case DT_RELSZ: t.relsz = val; break;
      case DT_RELENT: t.relent = val; break;
      case DT_JMPREL: t.jmprel = val; break;
      case DT_PLTRELSZ: t.pltrelsz = val; break;
      case DT_PLTREL: t.pltrel = val; break;
      case DT_RELACOUNT: t.relacount = val; break;
      case DT_RELCOUNT: t.relcount = val; break;
      case DT_FLAGS:
        f.flags = val;
        if (val & DF_SYMBOLIC) f.symbolic = true;
        break;
      case DT_FLAGS_1: f.flags_1 = val; break;
      case DT_SYMBOLIC: f.symbolic = true; break;
    }
  }
  return t;
}

// The tables a loader reads lie together near the start of the file (.gnu.hash, .dynsym,
// .dynstr, .gnu.version, .gnu.version_r, as the linkers lay them out): they are asked to be read
// ahead in one span, from the first to the end of the string table or 64 KiB past the last one's
// start. Tables spread further apart (2 MiB) are asked for one by one: patchelf, which auditwheel
// runs on every repaired wheel, moves .dynstr (and often .dynsym) to the end of the file, and one
// span from the start to there is the whole library's code (the torch venv's cold check read 686
// MB with 32 MiB spans, 618 MB with 2 MiB). Returns the span asked for as a whole ([0, 0) when
// none).
template <typename ToOff>
static std::pair<u64, u64> advise_tables(const ElfFile& f, const DynamicTags& t, ToOff&& to_off) {
  constexpr u64 kAfterStart = 64 << 10, kMaxSpan = 2 << 20;
  std::optional<u64> strtab = to_off(t.strtab);
  u64 strsz = t.strsz.value_or(0);
  std::vector<std::pair<u64, u64>> tables;  // offset, length
  if (strtab) tables.push_back({*strtab, std::max(strsz, kAfterStart)});
  for (std::optional<u64> a : {t.symtab, t.versym, t.gnu_hash, t.sysv_hash, t.verneed, t.verdef})
    if (std::optional<u64> off = to_off(a)) tables.push_back({*off, kAfterStart});
  if (tables.empty()) return {0, 0};
  u64 lo = UINT64_MAX, hi = 0;
  for (const auto& [off, len] : tables) {
    lo = std::min(lo, off);
    hi = std::max(hi, off + std::min(len, f.bytes().size() - off));
  }
  if (hi - lo <= std::max(kMaxSpan, strsz + kAfterStart)) {
    f.advise(lo, hi - lo);
    return {lo, hi};
  }
  for (const auto& [off, len] : tables) f.advise(off, len);
  return {0, 0};
}

// Returns the span of the file asked to be read ahead for the tables ([0, 0) for none).
template <typename E>
std::pair<u64, u64> Parser::read_dynamic(ElfFile& f, Bytes dyn, const std::vector<const Phdr<E>*>& loads) {
  Bytes b = f.bytes();
  DynamicTags t = scan_dynamic<E>(f, dyn);
  auto to_off = [&](std::optional<u64> addr) -> std::optional<u64> {
    if (!addr) return std::nullopt;
    return vaddr_to_offset<E>(b, loads, *addr);
  };
  std::pair<u64, u64> advised = advise_tables(f, t, to_off);
  read_strings(f, t, to_off(t.strtab), t.strtab.has_value());

  f.symtab_off_ = to_off(t.symtab);
  f.syment_ = t.syment.value_or(sizeof(Sym<E>));
  if (f.syment_ != sizeof(Sym<E>)) {
    f.problems.push_back("DT_SYMENT is not the size of a symbol");
    f.syment_ = sizeof(Sym<E>);
  }
  f.versym_off_ = to_off(t.versym);
  f.gnu_hash_off_ = to_off(t.gnu_hash);
  f.sysv_hash_off_ = to_off(t.sysv_hash);

  if (auto off = to_off(t.verneed)) read_verneed<E>(f, *off, t.verneednum.value_or(0));
  if (auto off = to_off(t.verdef)) read_verdef<E>(f, *off, t.verdefnum.value_or(0));

  // `relative` leading entries are R_*_RELATIVE, which bind no symbol: glibc's elf/do-rel.h
  // applies them without a lookup, and we skip them without reading them (libcublasLt has
  // 350,000 of them).
  auto add_rel = [&](std::optional<u64> addr, std::optional<u64> size, u64 entsize, bool is_rela, u64 relative) {
    auto off = to_off(addr);
    if (!off || !size || *size == 0) return;
    if (!b.contains(*off, *size)) {
      f.problems.push_back("a relocation table lies outside the file");
      return;
    }
    u64 skip = entsize ? std::min(relative, *size / entsize) * entsize : 0;
    f.rel_tables_.push_back({*off + skip, *size - skip, entsize, is_rela});
  };
  // glibc processes DT_REL/DT_RELA before DT_JMPREL (elf/do-rel.h).
  add_rel(t.rela, t.relasz, t.relaent.value_or(sizeof(Rela<E>)), true, t.relacount);
  add_rel(t.rel, t.relsz, t.relent.value_or(sizeof(Rel<E>)), false, t.relcount);
  bool plt_is_rela = t.pltrel ? *t.pltrel == DT_RELA : (t.rela.has_value() || !t.rel.has_value());
  add_rel(t.jmprel, t.pltrelsz, plt_is_rela ? sizeof(Rela<E>) : sizeof(Rel<E>), plt_is_rela, 0);
  return advised;
}

// DT_STRTAB and the names in it: NEEDED, the filtees, SONAME, RPATH and RUNPATH.
void Parser::read_strings(ElfFile& f, const DynamicTags& t, std::optional<u64> strtab_off, bool has_strtab) {
  Bytes b = f.bytes();
  if (strtab_off) {
    u64 size = t.strsz.value_or(0);
    if (auto s = b.slice(*strtab_off, std::min<u64>(size, b.size() - *strtab_off))) f.dynstr_ = *s;
  } else if (has_strtab) {
    f.problems.push_back("DT_STRTAB points outside the file");
  }
  auto str = [&](u64 off, const char* what) -> std::optional<std::string_view> {
    auto s = f.dynstr_.cstr(off);
    if (!s) f.problems.push_back(std::string(what) + " string lies outside DT_STRTAB");
    return s;
  };
  // read[k]: how many of the first k NEEDED strings were readable, so that a filtee's position
  // counts the entries actually kept.
  std::vector<size_t> read(t.needed_offsets.size() + 1, 0);
  for (size_t k = 0; k < t.needed_offsets.size(); ++k) {
    if (auto s = str(t.needed_offsets[k], "DT_NEEDED")) f.needed.push_back(*s);
    read[k + 1] = f.needed.size();
  }
  for (const DynamicTags::FilteeOffset& fo : t.filtee_offsets)
    if (auto s = str(fo.off, fo.auxiliary ? "DT_AUXILIARY" : "DT_FILTER"))
      f.filtees.push_back({*s, fo.auxiliary, read[fo.needed_before]});
  if (t.soname_off) f.soname = str(*t.soname_off, "DT_SONAME");
  if (t.rpath_off) f.rpath = str(*t.rpath_off, "DT_RPATH");
  if (t.runpath_off) f.runpath = str(*t.runpath_off, "DT_RUNPATH");
}

// The instantiations the other files of the reader call, one per (class, byte order).
template std::pair<u64, u64> Parser::read_dynamic<Elf32<false>>(ElfFile&, Bytes,
                                                                const std::vector<const Phdr<Elf32<false>>*>&);
template std::pair<u64, u64> Parser::read_dynamic<Elf32<true>>(ElfFile&, Bytes,
                                                               const std::vector<const Phdr<Elf32<true>>*>&);
template std::pair<u64, u64> Parser::read_dynamic<Elf64<false>>(ElfFile&, Bytes,
                                                                const std::vector<const Phdr<Elf64<false>>*>&);
template std::pair<u64, u64> Parser::read_dynamic<Elf64<true>>(ElfFile&, Bytes,
                                                               const std::vector<const Phdr<Elf64<true>>*>&);

}  // namespace envdoctor::elf
