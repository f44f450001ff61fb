// The ELF header and the program headers: what glibc's open_verify and _dl_map_object_from_fd
// check before mapping (PT_LOAD, PT_DYNAMIC, PT_TLS, PT_INTERP, and PT_NOTE through notes.cc),
// then the parse that reads the tables the dynamic section points to (dynamic_section.cc,
// version_tables.cc, dynamic_symbols.cc, relocations.cc, section_headers.cc).
#include "elf/elf_file.h"

#include <algorithm>

#include "elf/elf_parser.h"
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

// GLRO(dl_pagesize) of the loaders we model (x86-64, i386): segment offsets and addresses must
// agree modulo a page.
constexpr u64 kLoaderPageSize = 4096;

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
  f->scan_relocations_of_ = &scan_relocations_of<E>;
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

}  // namespace envdoctor::elf
