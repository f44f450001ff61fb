#include "elf/elf_file.h"

#include <algorithm>
#include <set>

#include "elf/elf_types.h"

namespace envdoctor::elf {

const char* elf_class_name(u8 elf_class) {
  switch (elf_class) {
    case ELFCLASS32: return "ELFCLASS32";
    case ELFCLASS64: return "ELFCLASS64";
    default: return "ELFCLASSNONE";
  }
}

// glibc's VALID_ELF_OSABI and VALID_ELF_ABIVERSION for Linux targets: SYSV or GNU, and an ABI
// version of 0 (GNU allows the small set of versions that ld.so knows: up to LIBC_ABI_MAX - 1).
static bool valid_osabi(u8 osabi) { return osabi == ELFOSABI_SYSV || osabi == ELFOSABI_GNU; }
static bool valid_abiversion(u8 osabi, u8 abiversion) {
  constexpr u8 kLibcAbiMax = 4;  // glibc 2.36: LIBC_ABI_DEFAULT, UNIQUE, IFUNC, ABSOLUTE
  return osabi == ELFOSABI_GNU ? abiversion < kLibcAbiMax : abiversion == 0;
}

// Walks the fields glibc's open_verify checks, in its order, and returns its message for the first
// that fails; nullopt for a header the loader accepts (class and machine are checked by the caller,
// since they depend on who is loading).
static std::optional<std::string> verify_ident(Bytes b) {
  // open_verify reads a whole Ehdr of the loader's own class (64 bytes on x86_64) before it
  // looks at anything.
  if (b.size() < sizeof(Ehdr<Elf64<false>>)) return std::string("file too short");
  const u8* id = b.data();
  if (std::memcmp(id, ELFMAG, SELFMAG) != 0) return std::string("invalid ELF header");
  if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64) return std::string("invalid ELF header");
  if (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB)
    return std::string("ELF file data encoding not little-endian");
  if (id[EI_VERSION] != EV_CURRENT) return std::string("ELF file version ident does not match current one");
  if (!valid_osabi(id[EI_OSABI])) return std::string("ELF file OS ABI invalid");
  if (!valid_abiversion(id[EI_OSABI], id[EI_ABIVERSION])) return std::string("ELF file ABI version invalid");
  for (int i = EI_PAD; i < EI_NIDENT; ++i)
    if (id[i] != 0) return std::string("nonzero padding in e_ident");
  return std::nullopt;
}

// The dynamic section's entries that the reader uses, as addresses and counts; nothing read yet.
struct DynamicTags {
  std::optional<u64> strtab, strsz, symtab, syment, versym, verneed, verneednum, verdef, verdefnum;
  std::optional<u64> gnu_hash, sysv_hash;
  std::optional<u64> rela, relasz, relaent, rel, relsz, relent, jmprel, pltrelsz, pltrel;
  u64 relacount = 0, relcount = 0;
  std::vector<u64> needed_offsets;
  struct FilteeOffset {
    u64 off;
    bool auxiliary;
    size_t needed_before;
  };
  std::vector<FilteeOffset> filtee_offsets;
  std::optional<u64> soname_off, rpath_off, runpath_off;
};

// GLRO(dl_pagesize) of the loaders we model (x86-64, i386): segment offsets and addresses must
// agree modulo a page.
constexpr u64 kLoaderPageSize = 4096;

// The notes of one PT_NOTE segment, each passed to `visit(n_type, name, desc)` with its name and
// descriptor bounds-checked against the segment's end first.
template <typename E, typename Visit>
static void walk_notes(Bytes notes, u64 p_align, Visit visit) {
  const u64 align = p_align == 8 ? 8 : 4;
  auto pad = [&](u64 n) { return (n + align - 1) & ~(align - 1); };
  u64 off = 0;
  while (const u8* at = notes.at(off, sizeof(Nhdr<E>))) {
    const auto* nh = reinterpret_cast<const Nhdr<E>*>(at);
    u64 namesz = nh->n_namesz, descsz = nh->n_descsz;
    u64 name_off = off + sizeof(Nhdr<E>);
    if (!notes.contains(name_off, namesz)) break;
    // The descriptor and the next note start at the segment's alignment, counted from the
    // segment's start: with 8 (NT_GNU_PROPERTY_TYPE_0 on 64-bit) the 12-byte header and "GNU\0"
    // end at 16, where the descriptor begins (binutils' and glibc's ELF_NOTE_NEXT_OFFSET).
    u64 desc_off = pad(name_off + namesz);
    if (!notes.contains(desc_off, descsz)) break;
    std::string_view name(reinterpret_cast<const char*>(notes.data() + name_off), namesz);
    visit(static_cast<u32>(nh->n_type), name, Bytes(notes.data() + desc_off, descsz));
    off = pad(desc_off + descsz);
  }
}

static std::string hex_of(Bytes desc) {
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (u64 i = 0; i < desc.size(); ++i) {
    u8 byte = desc.data()[i];
    hex += kHex[byte >> 4];
    hex += kHex[byte & 15];
  }
  return hex;
}

// GNU_PROPERTY_X86_ISA_1_NEEDED among the properties of an NT_GNU_PROPERTY_TYPE_0 note: an array
// of (pr_type, pr_datasz, data padded to the class's word), binutils' include/elf/common.h.
template <typename E>
static std::optional<u32> x86_isa_needed(Bytes desc) {
  constexpr u32 kIsa1Needed = 0xc0008002;  // GNU_PROPERTY_X86_UINT32_OR_LO + 2
  const u64 align = E::is_64 ? 8 : 4;
  u64 off = 0;
  while (const u8* at = desc.at(off, 8)) {
    const auto* words = reinterpret_cast<const typename E::Word*>(at);
    u32 type = words[0], size = words[1];
    if (!desc.contains(off + 8, size)) break;
    if (type == kIsa1Needed && size == 4) return static_cast<u32>(*reinterpret_cast<const typename E::Word*>(at + 8));
    off += 8 + ((u64{size} + align - 1) & ~(align - 1));
  }
  return std::nullopt;
}

// What the notes of one PT_NOTE segment say: the GNU build-id (hex) and the x86 ISA level needed.
template <typename E>
static void read_notes(ElfFile& f, Bytes notes, u64 p_align) {
  walk_notes<E>(notes, p_align, [&](u32 type, std::string_view name, Bytes desc) {
    if (name != std::string_view("GNU\0", 4)) return;
    if (type == NT_GNU_BUILD_ID && f.build_id.empty()) f.build_id = hex_of(desc);
    if (type == NT_GNU_PROPERTY_TYPE_0 && !f.x86_isa_needed) f.x86_isa_needed = x86_isa_needed<E>(desc);
  });
}

// The class- and endian-specific half of the reader. One instantiation per (class, byte order);
// ElfFile keeps function pointers into the one that matches the file.
struct Parser {
  template <typename E>
  static std::unique_ptr<ElfFile> parse(std::shared_ptr<const MappedFile> file, std::string* error, bool* header_error);

  template <typename E>
  static std::optional<u64> vaddr_to_offset(Bytes b, const std::vector<const Phdr<E>*>& loads, u64 addr);

  template <typename E>
  static std::pair<u64, u64> read_dynamic(ElfFile& f, Bytes dyn, const std::vector<const Phdr<E>*>& loads);
  static void read_strings(ElfFile& f, const DynamicTags& t, std::optional<u64> strtab_off, bool has_strtab);

  template <typename E>
  static void read_verneed(ElfFile& f, u64 off, u64 count);
  template <typename E>
  static void read_verdef(ElfFile& f, u64 off, u64 count);

  template <typename E>
  static u32 count_symbols(ElfFile& f);

  template <typename E>
  static std::optional<Symbol> read_symbol(const ElfFile& f, u32 index, bool with_name);
  template <typename E>
  static std::vector<u32> scan_required(const ElfFile& f);
  template <typename E>
  static std::vector<u32> scan_relocations(const ElfFile& f);
  template <typename E>
  static std::vector<StaticTlsTarget> scan_tls_relocations(const ElfFile& f);
  template <typename E>
  static bool name_equals(const ElfFile& f, u32 index, std::string_view name);
  template <typename E>
  static void locate_gnu_table(ElfFile& f);
  template <typename E>
  static void gnu_lookup(const ElfFile& f, const SymbolKey& key, std::vector<u32>& out);
  template <typename E>
  static void sysv_lookup(const ElfFile& f, const SymbolKey& key, std::vector<u32>& out);
  template <typename E>
  static std::vector<Section> read_sections(const ElfFile& f);
};

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

// glibc 2.36 elf/dl-load.c, open_verify: the program headers are taken from its first read of the
// file (FILEBUF_SIZE bytes: 832 for a 64-bit loader, 512 for a 32-bit one) when they lie inside
// it, else read by pread at e_phoff, and a short read is "cannot read file data" with the errno it
// left: none past the end of the file, EINVAL for an offset that is negative as an off_t. Null
// when the read succeeds.
template <typename E>
static const char* open_verify_read_error(Bytes b, u64 offset, u64 length) {
  constexpr u64 kFilebufSize = E::is_64 ? 832 : 512;
  u64 buffered = std::min<u64>(b.size(), kFilebufSize);
  if (offset + length <= buffered) return nullptr;  // u64 arithmetic, as the loader's size_t
  if (static_cast<i64>(offset) < 0) return "cannot read file data: Invalid argument";
  if (length == 0) return nullptr;  // pread of nothing succeeds wherever it starts
  if (offset > b.size() || b.size() - offset < length) return "cannot read file data";
  return nullptr;
}

// glibc 2.36 elf/dl-load.c, _dl_map_object_from_fd: the program headers are judged in order
// before anything is mapped; the first complaint is the loader's. Keeps the notes, PT_TLS's
// numbers and PT_INTERP; returns the last PT_DYNAMIC (nullptr: none) and fills `loads`.
template <typename E>
static const Phdr<E>* read_program_headers(ElfFile& f, Bytes b, const Phdr<E>* phdrs, u64 phnum,
                                           std::vector<const Phdr<E>*>& loads) {
  const Phdr<E>* dynamic = nullptr;
  auto map_error = [&](const char* msg) {
    if (!f.map_error) f.map_error = msg;
  };
  for (u64 i = 0; i < phnum; ++i) {
    const Phdr<E>* ph = &phdrs[i];
    switch (static_cast<u32>(ph->p_type)) {
      case PT_LOAD:
        if ((static_cast<u64>(ph->p_vaddr) - static_cast<u64>(ph->p_offset)) & (kLoaderPageSize - 1))
          map_error("ELF load command address/offset not page-aligned");
        loads.push_back(ph);
        break;
      case PT_DYNAMIC:
        if (ph->p_filesz == 0) map_error("object file has no dynamic section");
        dynamic = ph;
        break;
      case PT_NOTE:
        if (auto notes = b.slice(ph->p_offset, ph->p_filesz)) read_notes<E>(f, *notes, ph->p_align);
        break;
      case PT_TLS:
        // Only the header's numbers are kept: the initialisation image is never read.
        if (ph->p_memsz != 0) f.tls = TlsSegment{ph->p_vaddr, ph->p_filesz, ph->p_memsz, ph->p_align};
        break;
      case PT_INTERP:
        if (auto s = b.slice(ph->p_offset, ph->p_filesz)) {
          if (auto str = s->cstr(0)) f.interp = *str;
        }
        break;
    }
  }
  return dynamic;
}

static std::string hex(u64 v) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  do out.insert(out.begin(), kHex[v & 15]);
  while (v >>= 4);
  return "0x" + out;
}

// A mapping of file offsets [from, to) touches the pages that hold them: a page that starts at or
// past the end of the file has no bytes behind it, and touching it is SIGBUS (the last page, partly
// in the file, reads zeros past the end). glibc 2.36 maps each PT_LOAD's file part without
// comparing it with the file's size, then reads the dynamic section at l_ld (its p_vaddr, in the
// mapping) and relocates: a dynamic section past the end kills the loader itself.
template <typename E>
static std::optional<std::string> segments_past_end(u64 size, const Phdr<E>* dynamic,
                                                    const std::vector<const Phdr<E>*>& loads) {
  const u64 backed = (size + kLoaderPageSize - 1) & ~(kLoaderPageSize - 1);
  auto past = [&](u64 from, u64 length) { return length != 0 && (from >= backed || backed - from < length); };
  std::string cut = "the file is " + std::to_string(size) + " bytes (cut short?), and ";
  if (dynamic) {
    for (const Phdr<E>* ph : loads) {
      u64 vaddr = ph->p_vaddr, at = dynamic->p_vaddr;
      if (at < vaddr || at - vaddr >= ph->p_filesz) continue;
      u64 off = static_cast<u64>(ph->p_offset) + (at - vaddr);
      u64 length = std::min<u64>(dynamic->p_memsz, ph->p_filesz - (at - vaddr));
      if (past(off, length))
        return "Bus error: " + cut + "its dynamic section (file offset " + hex(off) +
               ") lies past the end: the process dies of SIGBUS when the loader reads it";
    }
  }
  for (const Phdr<E>* ph : loads)
    if (past(ph->p_offset, ph->p_filesz))
      return "Bus error: " + cut + "its PT_LOAD segment at file offset " + hex(ph->p_offset) + " (" +
             hex(ph->p_filesz) + " bytes) ends past the end: the loader maps it, and the process dies of SIGBUS " +
             "when it touches a page past the end";
  return std::nullopt;
}

// The dynamic section as the loader reads it: at its p_vaddr in the mapped segments (l_ld), which
// is where its p_offset says in any file a linker wrote; else, as a reader would, at p_offset.
template <typename E>
static std::optional<Bytes> dynamic_bytes(Bytes b, const Phdr<E>* dynamic, const std::vector<const Phdr<E>*>& loads) {
  for (const Phdr<E>* ph : loads) {
    u64 vaddr = ph->p_vaddr, at = dynamic->p_vaddr;
    if (at < vaddr || at - vaddr >= ph->p_filesz) continue;
    u64 length = std::min<u64>(dynamic->p_filesz, ph->p_filesz - (at - vaddr));
    if (auto s = b.slice(static_cast<u64>(ph->p_offset) + (at - vaddr), length)) return s;
  }
  return b.slice(dynamic->p_offset, dynamic->p_filesz);
}

template <typename E>
std::unique_ptr<ElfFile> Parser::parse(std::shared_ptr<const MappedFile> file, std::string* error, bool* header_error) {
  Bytes b = file->bytes();
  const auto* eh = reinterpret_cast<const Ehdr<E>*>(b.data());
  std::unique_ptr<ElfFile> f(new ElfFile());
  f->file_ = std::move(file);
  f->elf_class = eh->e_ident[EI_CLASS];
  f->data = eh->e_ident[EI_DATA];
  f->osabi = eh->e_ident[EI_OSABI];
  f->type = eh->e_type;
  f->machine = eh->e_machine;
  f->header_flags = eh->e_flags;

  auto fail = [&](const char* msg) {
    if (error) *error = msg;
    return nullptr;
  };
  if (eh->e_version != EV_CURRENT) {
    if (header_error) *header_error = true;
    return fail("ELF file version does not match current one");
  }
  if (f->type != ET_DYN && f->type != ET_EXEC) return fail("only ET_DYN and ET_EXEC can be loaded");
  if (eh->e_phentsize != sizeof(Phdr<E>)) return fail("ELF file's phentsize not the expected size");

  u64 phoff = eh->e_phoff, phnum = eh->e_phnum;
  if (const char* read_error = open_verify_read_error<E>(b, phoff, phnum * sizeof(Phdr<E>))) return fail(read_error);
  const u8* ph_bytes = phnum ? b.at(phoff, phnum * sizeof(Phdr<E>)) : b.data();
  if (!ph_bytes) return fail("cannot read file data");  // an e_phoff + length that wraps: no sane reading
  const auto* phdrs = reinterpret_cast<const Phdr<E>*>(ph_bytes);
  // Earlier releases' open_verify also read each PT_NOTE that could be the ABI tag; 2.36's does
  // not (a note past the end of the file loads: LoaderFixture.UnreadableHeadersInTheLoadersWords).

  std::vector<const Phdr<E>*> loads;
  const Phdr<E>* dynamic = read_program_headers<E>(*f, b, phdrs, phnum, loads);
  auto map_error = [&](const char* msg) {
    if (!f->map_error) f->map_error = msg;
  };
  if (loads.empty()) map_error("object file has no loadable segments");
  // After mapping: an ET_DYN object without PT_DYNAMIC (l_ld == 0) is refused.
  if (!dynamic && f->type == ET_DYN) map_error("object file has no dynamic section");
  std::pair<u64, u64> advised{0, 0};
  f->crash = segments_past_end<E>(b.size(), dynamic, loads);
  if (dynamic) {
    f->has_dynamic = true;
    if (auto dyn = dynamic_bytes<E>(b, dynamic, loads)) {
      f->advise(static_cast<u64>(dyn->data() - b.data()), dyn->size());
      advised = read_dynamic<E>(*f, *dyn, loads);
    } else {
      f->problems.push_back("PT_DYNAMIC lies outside the file");
    }
  }

  f->read_symbol_ = &read_symbol<E>;
  f->scan_relocations_ = &scan_relocations<E>;
  f->scan_tls_relocations_ = &scan_tls_relocations<E>;
  f->gnu_lookup_ = &gnu_lookup<E>;
  f->sysv_lookup_ = &sysv_lookup<E>;
  f->read_sections_ = &read_sections<E>;
  f->nsyms_ = count_symbols<E>(*f);
  // The symbol table is walked whole next (scan_required), and its versions with it: what lies
  // beyond the span already asked for is asked for now.
  auto advise_beyond = [&](std::optional<u64> off, u64 len) {
    if (!off) return;
    u64 end = *off + len, from = *off >= advised.first && *off < advised.second ? advised.second : *off;
    if (end > from) f->advise(from, end - from);
  };
  advise_beyond(f->symtab_off_, static_cast<u64>(f->nsyms_) * f->syment_);
  advise_beyond(f->versym_off_, static_cast<u64>(f->nsyms_) * 2);
  locate_gnu_table<E>(*f);
  f->required_ = scan_required<E>(*f);
  f->index_versions();
  return f;
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
// start. Tables spread further apart (32 MiB) are asked for one by one. Returns the span asked
// for as a whole ([0, 0) when none).
template <typename ToOff>
static std::pair<u64, u64> advise_tables(const ElfFile& f, const DynamicTags& t, ToOff&& to_off) {
  constexpr u64 kAfterStart = 64 << 10, kMaxSpan = 32 << 20;
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

template <typename E>
void Parser::read_verneed(ElfFile& f, u64 off, u64 count) {
  Bytes b = f.bytes();
  // Each record is at least 16 bytes, so a file cannot hold more than size/16 of them: a bound
  // on crafted counts and vn_next loops alike.
  u64 limit = b.size() / sizeof(Verneed<E>);
  for (u64 i = 0; i < count && i < limit; ++i) {
    const u8* p = b.at(off, sizeof(Verneed<E>));
    if (!p) {
      f.problems.push_back("DT_VERNEED lies outside the file");
      return;
    }
    const auto* vn = reinterpret_cast<const Verneed<E>*>(p);
    VersionNeed need;
    if (auto s = f.dynstr_.cstr(vn->vn_file)) need.file = *s;
    u64 aoff = off + static_cast<u64>(vn->vn_aux);
    for (u64 j = 0; j < vn->vn_cnt && j < limit; ++j) {
      const u8* ap = b.at(aoff, sizeof(Vernaux<E>));
      if (!ap) {
        f.problems.push_back("a Vernaux entry lies outside the file");
        break;
      }
      const auto* aux = reinterpret_cast<const Vernaux<E>*>(ap);
      VersionNeedAux v;
      v.hash = aux->vna_hash;
      v.flags = aux->vna_flags;
      v.other = aux->vna_other;
      if (auto s = f.dynstr_.cstr(aux->vna_name)) v.name = *s;
      need.versions.push_back(v);
      if (aux->vna_next == 0) break;
      aoff += static_cast<u64>(aux->vna_next);
    }
    f.verneed.push_back(std::move(need));
    if (vn->vn_next == 0) break;
    off += static_cast<u64>(vn->vn_next);
  }
}

template <typename E>
void Parser::read_verdef(ElfFile& f, u64 off, u64 count) {
  Bytes b = f.bytes();
  u64 limit = b.size() / sizeof(Verdef<E>);
  for (u64 i = 0; i < count && i < limit; ++i) {
    const u8* p = b.at(off, sizeof(Verdef<E>));
    if (!p) {
      f.problems.push_back("DT_VERDEF lies outside the file");
      return;
    }
    const auto* vd = reinterpret_cast<const Verdef<E>*>(p);
    VersionDef def;
    def.ndx = vd->vd_ndx;
    def.flags = vd->vd_flags;
    def.hash = vd->vd_hash;
    if (const u8* ap = b.at(off + static_cast<u64>(vd->vd_aux), sizeof(Verdaux<E>))) {
      const auto* aux = reinterpret_cast<const Verdaux<E>*>(ap);
      if (auto s = f.dynstr_.cstr(aux->vda_name)) def.name = *s;
    }
    f.verdef.push_back(def);
    if (vd->vd_next == 0) break;
    off += static_cast<u64>(vd->vd_next);
  }
}

template <typename E>
u32 Parser::count_symbols(ElfFile& f) {
  Bytes b = f.bytes();
  if (!f.symtab_off_) return 0;
  u64 max_by_size = (b.size() - *f.symtab_off_) / sizeof(Sym<E>);
  auto clamp = [&](u64 n) { return static_cast<u32>(std::min<u64>({n, max_by_size, UINT32_MAX})); };

  if (f.sysv_hash_off_) {
    if (const u8* p = b.at(*f.sysv_hash_off_, 8)) {
      typename E::Word nchain;
      std::memcpy(&nchain, p + 4, 4);
      return clamp(static_cast<u32>(nchain));
    }
  }
  if (f.gnu_hash_off_) {
    // The GNU table has no count: the last symbol is the end of the longest chain.
    u64 off = *f.gnu_hash_off_;
    const u8* h = b.at(off, 16);
    if (!h) return 0;
    const auto* w = reinterpret_cast<const typename E::Word*>(h);
    u64 nbuckets = w[0], symoffset = w[1], bloom_size = w[2];
    u64 word = E::is_64 ? 8 : 4;
    u64 buckets_off = off + 16 + bloom_size * word;
    const u8* bp = bloom_size < b.size() ? b.at(buckets_off, nbuckets * 4) : nullptr;
    if (!bp) return 0;
    const auto* buckets = reinterpret_cast<const typename E::Word*>(bp);
    u64 last = 0;
    for (u64 i = 0; i < nbuckets; ++i) last = std::max<u64>(last, buckets[i]);
    if (last < symoffset) {
      // No hashed symbol: the table says nothing of the undefined ones, which GNU ld then numbers
      // from 1 with symoffset 1 (a library that only calls out, from a constructor). ld.so reads
      // symtab[ELF64_R_SYM (r_info)] without a count (elf/do-rel.h), so take the .dynsym
      // section's size when there are section headers.
      for (const Section& s : read_sections<E>(f))
        if (s.type == SHT_DYNSYM) return clamp(std::max<u64>(symoffset, s.size / sizeof(Sym<E>)));
      return clamp(symoffset);
    }
    u64 chain_off = buckets_off + nbuckets * 4;
    for (u64 idx = last; idx < max_by_size; ++idx) {
      const u8* cp = b.at(chain_off + (idx - symoffset) * 4, 4);
      if (!cp) return clamp(idx);
      if (static_cast<u32>(*reinterpret_cast<const typename E::Word*>(cp)) & 1) return clamp(idx + 1);
    }
    return clamp(max_by_size);
  }
  for (const Section& s : read_sections<E>(f))
    if (s.type == SHT_DYNSYM) return clamp(s.size / sizeof(Sym<E>));
  return 0;
}

template <typename E>
std::optional<Symbol> Parser::read_symbol(const ElfFile& f, u32 index, bool with_name) {
  if (!f.symtab_off_ || index >= f.nsyms_) return std::nullopt;
  Bytes b = f.bytes();
  const u8* p = b.at(*f.symtab_off_ + static_cast<u64>(index) * sizeof(Sym<E>), sizeof(Sym<E>));
  if (!p) return std::nullopt;
  const auto* s = reinterpret_cast<const Sym<E>*>(p);
  Symbol sym;
  if (with_name) {
    if (auto name = f.dynstr_.cstr(s->st_name)) sym.name = *name;
  }
  sym.bind = s->st_info >> 4;
  sym.type = s->st_info & 0xf;
  sym.visibility = s->st_other & 0x3;
  sym.shndx = s->st_shndx;
  sym.value = s->st_value;
  if (f.versym_off_) {
    if (const u8* v = b.at(*f.versym_off_ + static_cast<u64>(index) * 2, 2))
      sym.versym = static_cast<u16>(*reinterpret_cast<const typename E::Half*>(v));
  }
  return sym;
}

// One sequential pass over the symbol table: reading each symbol where a relocation names it
// would jump around the table (most relocations of a C++ library name its own exported
// symbols), and reading the relocation tables at all is needed only when a symbol fails to bind.
// count_symbols clamped nsyms_ to what the file holds after symtab_off_.
template <typename E>
std::vector<u32> Parser::scan_required(const ElfFile& f) {
  std::vector<u32> out;
  if (!f.symtab_off_) return out;
  const auto* syms = reinterpret_cast<const Sym<E>*>(f.bytes().data() + *f.symtab_off_);
  for (u32 i = 1; i < f.nsyms_; ++i) {
    u8 bind = syms[i].st_info >> 4;
    if (syms[i].st_shndx == SHN_UNDEF && bind != STB_LOCAL && bind != STB_WEAK) out.push_back(i);
  }
  return out;
}

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

// Compares a symbol's name in place: no strlen over the string table on the lookup path.
template <typename E>
bool Parser::name_equals(const ElfFile& f, u32 index, std::string_view name) {
  if (!f.symtab_off_ || index >= f.nsyms_) return false;
  const u8* p = f.bytes().at(*f.symtab_off_ + static_cast<u64>(index) * sizeof(Sym<E>), sizeof(Sym<E>));
  if (!p) return false;
  u64 off = reinterpret_cast<const Sym<E>*>(p)->st_name;
  const u8* str = f.dynstr_.at(off, name.size() + 1);
  // An empty name may have a null data(): memcmp must not see it, even for 0 bytes.
  return str && (name.empty() || std::memcmp(str, name.data(), name.size()) == 0) && str[name.size()] == 0;
}

// Locates DT_GNU_HASH's bloom filter, buckets and chains once, so that a lookup is a few loads.
template <typename E>
void Parser::locate_gnu_table(ElfFile& f) {
  if (!f.gnu_hash_off_ || !f.symtab_off_) return;
  Bytes b = f.bytes();
  u64 off = *f.gnu_hash_off_;
  const u8* h = b.at(off, 16);
  if (!h) return;
  const auto* w = reinterpret_cast<const typename E::Word*>(h);
  u64 nbuckets = w[0], symoffset = w[1], bloom_words = w[2], shift = w[3];
  constexpr u64 word_size = E::is_64 ? 8 : 4;
  if (nbuckets == 0 || bloom_words == 0 || bloom_words > b.size() / word_size) return;
  u64 bloom_off = off + 16;
  u64 buckets_off = bloom_off + bloom_words * word_size;
  if (!b.contains(bloom_off, bloom_words * word_size) || nbuckets > b.size() / 4 ||
      !b.contains(buckets_off, nbuckets * 4))
    return;
  u64 chains_off = buckets_off + nbuckets * 4;
  u64 readable = (b.size() - chains_off) / 4;
  u64 after = f.nsyms_ > symoffset ? f.nsyms_ - symoffset : 0;
  f.gnu_ = {bloom_off,
            bloom_words,
            static_cast<u32>(shift % 32),
            buckets_off,
            static_cast<u32>(nbuckets),
            static_cast<u32>(symoffset),
            chains_off,
            std::min(readable, after)};
}

// elf/dl-lookup.c's do_lookup_x over DT_GNU_HASH: the bloom filter rejects most names with one
// load; otherwise the bucket gives the first index of a chain of hashes whose low bit ends it.
template <typename E>
void Parser::gnu_lookup(const ElfFile& f, const SymbolKey& key, std::vector<u32>& out) {
  const ElfFile::GnuTable& t = f.gnu_;
  if (t.nbuckets == 0) return;
  constexpr u64 bits = E::is_64 ? 64 : 32;
  const u8* base = f.bytes().data();  // every offset below was bounds-checked by locate_gnu_table
  u32 hash = key.gnu;
  u64 word = static_cast<u64>(
      *reinterpret_cast<const typename E::Addr*>(base + t.bloom_off + ((hash / bits) % t.bloom_words) * (bits / 8)));
  u64 mask = (u64{1} << (hash % bits)) | (u64{1} << ((hash >> t.shift) % bits));
  if ((word & mask) != mask) return;
  u32 idx = *reinterpret_cast<const typename E::Word*>(base + t.buckets_off + u64{hash % t.nbuckets} * 4);
  if (idx == 0 || idx < t.symoffset) return;
  for (u64 i = idx - t.symoffset; i < t.nchains; ++i) {
    u32 chain = *reinterpret_cast<const typename E::Word*>(base + t.chains_off + i * 4);
    if ((chain | 1) == (hash | 1) && name_equals<E>(f, static_cast<u32>(i + t.symoffset), key.name))
      out.push_back(static_cast<u32>(i + t.symoffset));
    if (chain & 1) break;
  }
}

template <typename E>
void Parser::sysv_lookup(const ElfFile& f, const SymbolKey& key, std::vector<u32>& out) {
  Bytes b = f.bytes();
  u64 off = *f.sysv_hash_off_;
  const u8* h = b.at(off, 8);
  if (!h) return;
  const auto* w = reinterpret_cast<const typename E::Word*>(h);
  u64 nbucket = w[0], nchain = w[1];
  if (nbucket == 0) return;
  const u8* bp = b.at(off + 8 + (elf_hash(key.name) % nbucket) * 4, 4);
  if (!bp) return;
  u64 idx = static_cast<u32>(*reinterpret_cast<const typename E::Word*>(bp));
  // At most one step per symbol the file can hold (nsyms_ is nchain clamped to the file's size):
  // a crafted chain can neither loop forever nor claim 2^32 entries.
  u64 limit = std::min<u64>(nchain, f.nsyms_);
  for (u64 steps = 0; idx != 0 && idx < limit && steps < limit; ++steps) {
    if (name_equals<E>(f, static_cast<u32>(idx), key.name)) out.push_back(static_cast<u32>(idx));
    const u8* cp = b.at(off + 8 + nbucket * 4 + idx * 4, 4);
    if (!cp) break;
    idx = static_cast<u32>(*reinterpret_cast<const typename E::Word*>(cp));
  }
}

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

std::unique_ptr<ElfFile> ElfFile::parse(std::shared_ptr<const MappedFile> file, std::string* error,
                                        bool* header_error) {
  Bytes b = file->bytes();
  if (header_error) *header_error = false;
  if (auto bad = verify_ident(b)) {
    if (error) *error = *bad;
    if (header_error) *header_error = true;
    return nullptr;
  }
  bool is64 = b.data()[EI_CLASS] == ELFCLASS64;
  bool be = b.data()[EI_DATA] == ELFDATA2MSB;
  if (is64)
    return be ? Parser::parse<Elf64<true>>(std::move(file), error, header_error)
              : Parser::parse<Elf64<false>>(std::move(file), error, header_error);
  return be ? Parser::parse<Elf32<true>>(std::move(file), error, header_error)
            : Parser::parse<Elf32<false>>(std::move(file), error, header_error);
}

std::optional<Symbol> ElfFile::symbol(u32 index) const { return read_symbol_(*this, index, true); }

std::optional<Symbol> ElfFile::symbol_without_name(u32 index) const { return read_symbol_(*this, index, false); }

SymbolKey::SymbolKey(std::string_view n) : name(n), gnu(gnu_hash(n)) {}

void ElfFile::find_symbols(const SymbolKey& key, std::vector<u32>& out) const {
  if (!symtab_off_) return;
  if (gnu_hash_off_) return gnu_lookup_(*this, key, out);
  if (sysv_hash_off_) return sysv_lookup_(*this, key, out);
  for (u32 i = 1; i < nsyms_; ++i) {
    auto s = symbol(i);
    if (s && s->name == key.name) out.push_back(i);
  }
}

std::vector<u32> ElfFile::find_symbols(std::string_view name) const {
  std::vector<u32> out;
  find_symbols(SymbolKey(name), out);
  return out;
}

std::vector<Section> ElfFile::sections() const { return read_sections_(*this); }

std::vector<StaticTlsTarget> ElfFile::static_tls_targets() const {
  return scan_tls_relocations_ ? scan_tls_relocations_(*this) : std::vector<StaticTlsTarget>{};
}

std::vector<u32> ElfFile::relocation_order() const {
  return scan_relocations_ ? scan_relocations_(*this) : std::vector<u32>{};
}

void ElfFile::index_versions() {
  auto grow = [](auto& v, u16 ndx) {
    if (v.size() <= ndx) v.resize(static_cast<size_t>(ndx) + 1);
  };
  for (size_t i = 0; i < verdef.size() && i < UINT16_MAX; ++i) {
    u16 ndx = verdef[i].ndx & 0x7fff;
    grow(verdef_by_ndx_, ndx);
    if (verdef_by_ndx_[ndx] == 0) verdef_by_ndx_[ndx] = static_cast<u16>(i + 1);
  }
  for (size_t n = 0; n < verneed.size() && n < UINT16_MAX; ++n)
    for (size_t a = 0; a < verneed[n].versions.size() && a < UINT16_MAX; ++a) {
      u16 ndx = verneed[n].versions[a].other & 0x7fff;
      grow(vernaux_by_ndx_, ndx);
      if (vernaux_by_ndx_[ndx].first == 0) vernaux_by_ndx_[ndx] = {static_cast<u16>(n + 1), static_cast<u16>(a)};
    }
}

const VersionDef* ElfFile::verdef_for(u16 ndx) const {
  ndx &= 0x7fff;
  if (ndx < 2 || ndx >= verdef_by_ndx_.size() || verdef_by_ndx_[ndx] == 0) return nullptr;
  return &verdef[verdef_by_ndx_[ndx] - 1];
}

const VersionNeedAux* ElfFile::vernaux_for(u16 ndx, std::string_view* file) const {
  ndx &= 0x7fff;
  if (ndx < 2 || ndx >= vernaux_by_ndx_.size() || vernaux_by_ndx_[ndx].first == 0) return nullptr;
  const VersionNeed& n = verneed[vernaux_by_ndx_[ndx].first - 1];
  if (file) *file = n.file;
  return &n.versions[vernaux_by_ndx_[ndx].second];
}

}  // namespace envdoctor::elf
