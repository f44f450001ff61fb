// The ELF reader: what the dynamic loader looks at, parsed once from a read-only mapping.
//
// ElfFile::parse validates the ELF header the way glibc's open_verify does (and fails with the
// loader's own words), then reads the program headers, the PT_DYNAMIC array and the tables it
// points to: SONAME, NEEDED, RPATH, RUNPATH, FLAGS, FLAGS_1, version needs and definitions.
// Dynamic symbols are not copied: lookups go through the GNU or SysV hash table and read only
// the chain they need; the undefined symbols an object binds at load time are listed from its
// relocation tables, in the order glibc processes them. Section headers are read only on demand
// (for fatbinary sections), never trusted by the loader model.
//
// Every offset read from the file goes through Bytes' checked accessors. A malformed table is
// not fatal: what can be read is kept, and `problems` says what was wrong.
#pragma once

#include <elf.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elf/mapped_file.h"

namespace envdoctor::elf {

struct VersionNeedAux {
  std::string_view name;
  u32 hash = 0;
  u16 flags = 0;  // VER_FLG_WEAK
  u16 other = 0;  // the version index used in .gnu.version, bit 15 = hidden
};

struct VersionNeed {
  std::string_view file;
  std::vector<VersionNeedAux> versions;
};

struct VersionDef {
  u16 ndx = 0;
  u16 flags = 0;  // VER_FLG_BASE for the file's own name
  u32 hash = 0;
  std::string_view name;  // the first vda_name
};

struct Symbol {
  std::string_view name;
  u8 bind = 0;        // STB_*
  u8 type = 0;        // STT_*
  u8 visibility = 0;  // STV_*
  u16 shndx = 0;
  u64 value = 0;
  // The raw .gnu.version entry: index in bits 0-14, hidden in bit 15. Absent without DT_VERSYM.
  std::optional<u16> versym;

  bool defined() const { return shndx != SHN_UNDEF; }
};

// A symbol name with its GNU hash, computed once for a lookup that asks many objects.
struct SymbolKey {
  explicit SymbolKey(std::string_view name);
  std::string_view name;
  u32 gnu = 0;
};

// PT_TLS as glibc keeps it (elf/dl-load.c, _dl_map_object_from_fd): l_tls_blocksize = p_memsz,
// l_tls_align = p_align, l_tls_firstbyte_offset = p_vaddr & (p_align - 1), l_tls_initimage_size
// = p_filesz. A PT_TLS with p_memsz 0 is "nothing to do" there, and absent here.
struct TlsSegment {
  u64 vaddr = 0;
  u64 filesz = 0;
  u64 memsz = 0;
  u64 align = 0;
};

// One dynamic relocation, as r_info holds it: its type (R_X86_64_*, ...) and its symbol's index
// in the dynamic symbol table (0: none).
struct Relocation {
  u32 type = 0;
  u32 symbol = 0;
};

struct Section {
  std::string_view name;
  u32 type = 0;
  u64 offset = 0;
  u64 size = 0;
  u64 addr = 0;
  u64 addralign = 0;
};

class ElfFile {
 public:
  // Parses `file` (kept alive by the ElfFile). On a file the loader would reject, returns nullptr
  // with `error` set to glibc's message ("invalid ELF header", "file too short", ...) and
  // `header_error` saying whether open_verify meets it before it compares the machine (e_ident
  // and e_version) or after (e_type, e_phentsize, the program headers).
  static std::unique_ptr<ElfFile> parse(std::shared_ptr<const MappedFile> file, std::string* error,
                                        bool* header_error = nullptr);

  const std::string& path() const { return file_->path(); }
  Bytes bytes() const { return file_->bytes(); }

  // Identity from the header.
  u8 elf_class = 0;  // ELFCLASS32 / ELFCLASS64
  u8 data = 0;       // ELFDATA2LSB / ELFDATA2MSB
  u8 osabi = 0;
  u16 type = 0;          // ET_DYN, ET_EXEC
  u16 machine = 0;       // EM_X86_64, ...
  u32 header_flags = 0;  // e_flags: the ARM EABI version and float ABI, ...
  bool is_64() const { return elf_class == ELFCLASS64; }
  bool big_endian() const { return data == ELFDATA2MSB; }

  // Program headers.
  std::optional<std::string_view> interp;  // PT_INTERP
  std::optional<TlsSegment> tls;           // PT_TLS, when its p_memsz is not 0
  // NT_GNU_BUILD_ID's descriptor as lower-case hex (the linker's --build-id); "" when absent.
  std::string build_id;
  // GNU_PROPERTY_X86_ISA_1_NEEDED of an NT_GNU_PROPERTY_TYPE_0 note (-march=x86-64-v2 and up, or
  // -mneeded): bit 0 baseline, 1 x86-64-v2, 2 v3, 3 v4. Absent when no note says it.
  std::optional<u32> x86_isa_needed;
  bool has_dynamic = false;
  // What _dl_map_object_from_fd says of the program headers before and after mapping ("object
  // file has no loadable segments"); the file is still read, since a reader (not a loader) can.
  std::optional<std::string> map_error;
  // A segment the loader maps that lies past the end of the file (a copy cut short): glibc 2.36
  // checks no segment against the file's size (elf/dl-map-segments.h maps whole pages), so the
  // process dies of SIGBUS when the loader or the code touches a page past the end. Says how.
  std::optional<std::string> crash;

  // The dynamic section, in file order.
  std::optional<std::string_view> soname;
  std::vector<std::string_view> needed;
  // DT_AUXILIARY and DT_FILTER entries: objects ld.so loads *before* this one (elf/dl-deps.c).
  // `needed_before` is how many DT_NEEDED entries precede it, since glibc handles both kinds in
  // one walk of the dynamic section.
  struct Filtee {
    std::string_view name;
    bool auxiliary = false;  // DT_AUXILIARY: a missing one is ignored; DT_FILTER: required
    size_t needed_before = 0;
  };
  std::vector<Filtee> filtees;
  std::optional<std::string_view> rpath;    // DT_RPATH
  std::optional<std::string_view> runpath;  // DT_RUNPATH
  u64 flags = 0;                            // DT_FLAGS
  u64 flags_1 = 0;                          // DT_FLAGS_1
  bool symbolic = false;                    // DT_SYMBOLIC or DF_SYMBOLIC
  std::vector<VersionNeed> verneed;
  std::vector<VersionDef> verdef;
  bool has_verdef() const { return !verdef.empty(); }
  // DT_VERSYM (.gnu.version): without it, ld.so accepts any definition for a versioned reference,
  // unless the version names this very file (elf/dl-lookup.c, check_match).
  bool has_versym() const { return versym_off_.has_value(); }

  // What was malformed but not fatal, in the order found.
  std::vector<std::string> problems;

  // Dynamic symbols.
  u32 symbol_count() const { return nsyms_; }
  std::optional<Symbol> symbol(u32 index) const;
  // The same without the name (no walk of the string table): for a symbol found by name.
  std::optional<Symbol> symbol_without_name(u32 index) const;

  // Indices of every dynamic symbol named `key.name`, appended to `out`, found through the hash
  // table (GNU preferred, as glibc does); a linear scan only when the object has neither table.
  void find_symbols(const SymbolKey& key, std::vector<u32>& out) const;
  std::vector<u32> find_symbols(std::string_view name) const;
  // Whether DT_GNU_HASH's Bloom filter rules out every symbol of this GNU hash (SymbolKey::gnu):
  // elf/dl-lookup.c's first test, which answers most lookups of a name another library defines,
  // made here without a call. False where the filter cannot say so: no usable GNU table, or a
  // file of another class or byte order than 64-bit little-endian (find_symbols decides then).
  bool bloom_rejects(u32 hash) const {
    if (!bloom_words64_) return false;
    u64 word;
    std::memcpy(&word, bloom_words64_ + ((hash / 64) % gnu_.bloom_words) * 8, 8);
    u64 mask = (u64{1} << (hash % 64)) | (u64{1} << ((hash >> gnu_.shift) % 64));
    return (word & mask) != mask;
  }

  // The undefined references whose failure to bind would be an error: dynamic symbols that are
  // undefined here and neither local nor weak (an unbound weak reference is simply 0,
  // elf/dl-lookup.c), in symbol-table order. Listed once at parse time, from the symbol table
  // alone.
  const std::vector<u32>& required_symbols() const { return required_; }
  // The required symbols that relocations actually use (only those are looked up by ld.so), in
  // the order glibc processes them (DT_REL/DT_RELA, then DT_JMPREL), each at its first use. A
  // pass over the relocation tables, made on each call: the loader model asks only when a
  // required symbol did not bind, to know whether it matters and where its error comes.
  std::vector<u32> relocation_order() const;

  // The dynamic relocations whose type `wanted(machine, type)` accepts, in the order glibc
  // processes them (DT_RELA/DT_REL, then DT_JMPREL), leading R_*_RELATIVE entries left out. A
  // pass over the relocation tables on each call.
  std::vector<Relocation> relocations(bool (*wanted)(u16 machine, u32 type)) const;

  // Asks for [off, off + len) of the file to be read ahead, before a reader walks it
  // (MappedFile::will_read).
  void advise(u64 off, u64 len) const { file_->will_read(off, len); }

  // Section headers, read on each call (for .nv_fatbin and friends); empty when absent or bad.
  std::vector<Section> sections() const;

  // Version name for a .gnu.version index of this object: from its verdefs (for definitions) or
  // its verneeds (for references). Null for 0 and 1.
  const VersionDef* verdef_for(u16 ndx) const;
  const VersionNeedAux* vernaux_for(u16 ndx, std::string_view* file = nullptr) const;

 private:
  friend struct Parser;
  ElfFile() = default;

  std::shared_ptr<const MappedFile> file_;

  // Tables located through the dynamic section (file offsets, already bounds-checked).
  Bytes dynstr_;
  std::optional<u64> symtab_off_;
  u64 syment_ = 0;
  u32 nsyms_ = 0;
  std::optional<u64> versym_off_;
  std::optional<u64> gnu_hash_off_;
  std::optional<u64> sysv_hash_off_;
  // DT_GNU_HASH's parts, located and bounds-checked once at parse time; nbuckets is 0 when the
  // table is absent or unusable.
  struct GnuTable {
    u64 bloom_off = 0;
    u64 bloom_words = 0;
    u32 shift = 0;
    u64 buckets_off = 0;
    u32 nbuckets = 0;
    u32 symoffset = 0;
    u64 chains_off = 0;
    u64 nchains = 0;  // chain words readable: at most the symbols after symoffset
  } gnu_;
  // The Bloom filter's first byte, for bloom_rejects: set only for a 64-bit little-endian file on
  // a little-endian host, whose words are read as they are.
  const u8* bloom_words64_ = nullptr;
  struct RelTable {
    u64 off = 0;
    u64 size = 0;
    u64 entsize = 0;
    bool rela = false;
  };
  std::vector<RelTable> rel_tables_;

  // Class/endian-specific readers, chosen once at parse time.
  std::optional<Symbol> (*read_symbol_)(const ElfFile&, u32, bool) = nullptr;
  std::vector<u32> (*scan_relocations_)(const ElfFile&) = nullptr;
  std::vector<Relocation> (*scan_relocations_of_)(const ElfFile&, bool (*)(u16, u32)) = nullptr;
  void (*gnu_lookup_)(const ElfFile&, const SymbolKey&, std::vector<u32>&) = nullptr;
  void (*sysv_lookup_)(const ElfFile&, const SymbolKey&, std::vector<u32>&) = nullptr;
  std::vector<Section> (*read_sections_)(const ElfFile&) = nullptr;

  std::vector<u32> required_;
  // .gnu.version index -> position in verdef / in verneed (need, aux), plus one; 0 for none.
  // The first entry with an index wins, as a walk of the tables would find it.
  std::vector<u16> verdef_by_ndx_;
  std::vector<std::pair<u16, u16>> vernaux_by_ndx_;
  void index_versions();
};

// glibc's name for an ELF class in "wrong ELF class: ELFCLASS32".
const char* elf_class_name(u8 elf_class);

}  // namespace envdoctor::elf
