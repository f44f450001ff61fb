// The ELF reader's internals, shared by the files that each read one part of the file: the
// class- and endian-specific Parser (one instantiation per class and byte order, each file
// instantiating the members it defines for the four) and the dynamic section's tags as
// addresses. Private to src/elf: the interface is elf_file.h.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "elf/elf_types.h"
#include "elf/mapped_file.h"

namespace envdoctor::elf {

// elf_file.h's types, declared only: that header includes none of this one, and the files that
// define Parser's members include both.
class ElfFile;
struct Relocation;
struct Section;
struct Symbol;
struct SymbolKey;

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

// What the notes of one PT_NOTE segment say (notes.cc).
template <typename E>
void read_notes(ElfFile& f, Bytes notes, u64 p_align);

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
  template <typename E, typename Visit>
  static void for_each_relocation(const ElfFile& f, Visit visit);
  template <typename E>
  static std::vector<u32> scan_relocations(const ElfFile& f);
  template <typename E>
  static std::vector<Relocation> scan_relocations_of(const ElfFile& f, bool (*wanted)(u16, u32));
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

}  // namespace envdoctor::elf
