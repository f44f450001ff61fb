// The ELF reader on files it must read (both classes, both byte orders, real libraries) and on
// files it must survive (every truncation of a real library, absurd counts and offsets). The
// big-endian and 32-bit inputs are written byte by byte here, so that the reader's byte swapping
// is checked against an independent writer, not against itself.
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include "elf/elf_file.h"
#include "elf/elf_types.h"
#include "fixtures/elf_writer.h"
#include "fixtures/fixture.h"
#include "loader/static_tls.h"

namespace envdoctor::test {
namespace {

using elf::ElfFile;

// A minimal ET_DYN (fixtures/elf_writer.h): one PT_LOAD over the whole file at address 0, a
// PT_DYNAMIC with two NEEDED entries, a SONAME, and a SysV hash table over three symbols (null,
// sym_a defined, sym_b undefined) whose bucket leads to sym_b, then sym_a.
std::vector<u8> minimal_dyn(bool is64, bool be, u16 machine) {
  return write_elf({is64, be, machine, 0, "libbe.so", {"libc.so.6", "libm.so.6"}, "", {{"sym_b", "", ""}}, {"sym_a"}});
}

std::unique_ptr<ElfFile> parse_bytes(std::vector<u8> bytes, std::string* error) {
  std::shared_ptr<const MappedFile> file = MappedFile::from_buffer("test.so", std::move(bytes));
  return ElfFile::parse(file, error);
}

std::vector<u8> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<u8>(std::istreambuf_iterator<char>(in), {});
}

// Touches everything the reader offers; returns a number so that nothing is optimized away.
size_t walk(const ElfFile& f) {
  size_t n = f.needed.size() + f.verneed.size() + f.verdef.size() + f.problems.size();
  if (f.soname) n += f.soname->size();
  for (const auto& vn : f.verneed)
    for (const auto& v : vn.versions) n += v.name.size() + (f.vernaux_for(v.other) != nullptr);
  u32 count = std::min<u32>(f.symbol_count(), 2000);
  for (u32 i = 0; i < count; ++i)
    if (auto s = f.symbol(i)) n += s->name.size() + (i < 50 ? f.find_symbols(s->name).size() : 0);
  n += f.required_symbols().size() + f.relocation_order().size() + f.sections().size();
  for (const loader::StaticTlsTarget& t : loader::static_tls_targets(f)) n += t.symbol.size() + t.optional;
  if (f.tls) n += f.tls->memsz & 1;
  return n;
}

struct Flavor {
  bool is64, be;
  u16 machine;
  const char* name;
};

class HandWritten : public ::testing::TestWithParam<Flavor> {};

TEST_P(HandWritten, ReadsDynamicSectionAndSymbols) {
  Flavor fl = GetParam();
  std::string error;
  auto f = parse_bytes(minimal_dyn(fl.is64, fl.be, fl.machine), &error);
  ASSERT_TRUE(f) << error;
  EXPECT_EQ(f->is_64(), fl.is64);
  EXPECT_EQ(f->big_endian(), fl.be);
  EXPECT_EQ(f->machine, fl.machine);
  EXPECT_EQ(f->type, ET_DYN);
  EXPECT_TRUE(f->has_dynamic);
  ASSERT_TRUE(f->soname);
  EXPECT_EQ(*f->soname, "libbe.so");
  EXPECT_EQ(f->needed, (std::vector<std::string_view>{"libc.so.6", "libm.so.6"}));
  EXPECT_TRUE(f->problems.empty()) << f->problems.front();
  ASSERT_EQ(f->symbol_count(), 3u);
  auto a = f->symbol(1);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->name, "sym_a");
  EXPECT_EQ(a->value, 0x100u);
  EXPECT_EQ(a->shndx, 5);
  EXPECT_EQ(a->type, STT_FUNC);
  EXPECT_EQ(a->bind, STB_GLOBAL);
  EXPECT_EQ(f->find_symbols("sym_a"), std::vector<u32>{1});
  EXPECT_EQ(f->find_symbols("sym_b"), std::vector<u32>{2});
  EXPECT_TRUE(f->find_symbols("sym_c").empty());
}

INSTANTIATE_TEST_SUITE_P(AllClassesAndByteOrders, HandWritten,
                         ::testing::Values(Flavor{true, false, EM_X86_64, "Elf64LE"},
                                           Flavor{true, true, EM_PPC64, "Elf64BE"},
                                           Flavor{false, false, EM_386, "Elf32LE"},
                                           Flavor{false, true, EM_MIPS, "Elf32BE"}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ElfHeader, LoaderMessagesForBadIdents) {
  auto base = minimal_dyn(true, false, EM_X86_64);
  struct Case {
    size_t off;
    u8 value;
    const char* message;
  } cases[] = {
      {0, 0x7e, "invalid ELF header"},
      {EI_VERSION, 2, "ELF file version ident does not match current one"},
      {EI_OSABI, 9, "ELF file OS ABI invalid"},
      {EI_ABIVERSION, 1, "ELF file ABI version invalid"},
      {EI_PAD + 2, 1, "nonzero padding in e_ident"},
      {offsetof(Elf64_Ehdr, e_type), ET_REL, "only ET_DYN and ET_EXEC can be loaded"},
      {offsetof(Elf64_Ehdr, e_phentsize), 55, "ELF file's phentsize not the expected size"},
  };
  for (const Case& c : cases) {
    auto bytes = base;
    bytes[c.off] = c.value;
    std::string error;
    EXPECT_FALSE(parse_bytes(bytes, &error)) << c.message;
    EXPECT_EQ(error, c.message);
  }
  std::string error;
  EXPECT_FALSE(parse_bytes(std::vector<u8>(base.begin(), base.begin() + 63), &error));
  EXPECT_EQ(error, "file too short");
  EXPECT_FALSE(parse_bytes({}, &error));
  EXPECT_EQ(error, "file too short");
  // The program headers lie past the end: open_verify's pread comes back short.
  EXPECT_FALSE(parse_bytes(std::vector<u8>(base.begin(), base.begin() + 100), &error));
  EXPECT_EQ(error, "cannot read file data");
}

std::vector<elf::Section> full_sections(const std::vector<u8>& bytes) {
  std::string error;
  auto f = parse_bytes(bytes, &error);
  return f ? f->sections() : std::vector<elf::Section>{};
}

// A small real library, built here, with versions, RPATH and both hash styles.
class RealLibrary : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_tool("gcc")) GTEST_SKIP() << "needs gcc";
    std::string map = tmp.write("v.map", "V1 { global: f1; local: *; };\nV2 { global: f2; v; } V1;\n");
    path = tmp / "libsmall.so";
    build_shared(path, "#include <stdio.h>\nint v = 3; int f1(void){return puts(\"x\");} int f2(void){return 2;}",
                 "-Wl,-soname,libsmall.so.1 -Wl,-rpath,/opt/x -Wl,--hash-style=both -Wl,--version-script=" + map, tmp);
  }
  TempDir tmp;
  std::string path;
};

TEST_F(RealLibrary, EveryTruncationIsAnErrorOrAPartialResult) {
  std::vector<u8> whole = read_file(path);
  ASSERT_GT(whole.size(), 1000u);
  std::string error;
  auto full = parse_bytes(whole, &error);
  ASSERT_TRUE(full) << error;
  EXPECT_EQ(full->soname.value_or(""), "libsmall.so.1");
  for (size_t n = 0; n < whole.size(); ++n) {
    std::string err;
    auto f = parse_bytes(std::vector<u8>(whole.begin(), whole.begin() + n), &err);
    if (!f) {
      EXPECT_FALSE(err.empty()) << n;
      if (n < 64) {
        EXPECT_EQ(err, "file too short");
      }
      continue;
    }
    walk(*f);
  }
}

// Writes `value` (little-endian, `size` bytes) at `off` of a copy of `bytes`.
std::vector<u8> patched(std::vector<u8> bytes, u64 off, u64 value, int size) {
  for (int i = 0; i < size && off + i < bytes.size(); ++i) bytes[off + i] = static_cast<u8>(value >> (8 * i));
  return bytes;
}

TEST_F(RealLibrary, AbsurdCountsAndOffsets) {
  std::vector<u8> whole = read_file(path);
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(whole.data());
  std::string error;

  EXPECT_FALSE(parse_bytes(patched(whole, offsetof(Elf64_Ehdr, e_phoff), ~u64{0} - 8, 8), &error));
  EXPECT_EQ(error, "cannot read file data");
  EXPECT_FALSE(parse_bytes(patched(whole, offsetof(Elf64_Ehdr, e_phnum), 0xffff, 2), &error));
  EXPECT_EQ(error, "cannot read file data");
  for (u64 shoff : {u64{1} << 62, whole.size() - 10, ~u64{0}}) {
    auto f = parse_bytes(patched(whole, offsetof(Elf64_Ehdr, e_shoff), shoff, 8), &error);
    ASSERT_TRUE(f) << error;
    EXPECT_TRUE(f->sections().empty());
  }
  auto f = parse_bytes(patched(whole, offsetof(Elf64_Ehdr, e_shnum), 0xffff, 2), &error);
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->sections().empty());

  // Every d_val of the dynamic section, in turn, set to absurd values.
  const auto* ph = reinterpret_cast<const Elf64_Phdr*>(whole.data() + eh->e_phoff);
  const Elf64_Phdr* dyn = nullptr;
  for (int i = 0; i < eh->e_phnum; ++i)
    if (ph[i].p_type == PT_DYNAMIC) dyn = &ph[i];
  ASSERT_TRUE(dyn);
  size_t ndyn = dyn->p_filesz / sizeof(Elf64_Dyn);
  for (size_t i = 0; i < ndyn; ++i) {
    u64 val_off = dyn->p_offset + i * sizeof(Elf64_Dyn) + offsetof(Elf64_Dyn, d_un);
    for (u64 value : {u64{0}, u64{1}, u64{0xffffffff}, ~u64{0}, ~u64{0} - 3, whole.size() - 1, u64{1} << 40}) {
      SCOPED_TRACE(testing::Message() << "dynamic entry " << i << " = " << value);
      auto g = parse_bytes(patched(whole, val_off, value, 8), &error);
      ASSERT_TRUE(g) << error;
      walk(*g);
    }
  }
  // The hash tables' counts, and the version records' counts and links.
  for (const elf::Section& s : full_sections(whole)) {
    if (s.type != SHT_HASH && s.type != SHT_GNU_HASH && s.type != SHT_GNU_verneed && s.type != SHT_GNU_verdef) continue;
    for (u64 field = 0; field < 16 && field < s.size; field += 2)
      for (u64 value : {u64{0}, u64{0xffff}, u64{0xffffffff}}) {
        auto g = parse_bytes(patched(whole, s.offset + field, value, field % 4 == 0 ? 4 : 2), &error);
        ASSERT_TRUE(g) << error;
        walk(*g);
      }
  }
}

// The hash lookups must find exactly what a scan of the whole table finds (for the symbols the
// table covers: a GNU table leaves out the undefined ones below symoffset).
void expect_hash_agrees_with_scan(const ElfFile& f, bool gnu) {
  ASSERT_GT(f.symbol_count(), 1u);
  std::map<std::string_view, std::set<u32>> by_name;
  for (u32 i = 1; i < f.symbol_count(); ++i) {
    auto s = f.symbol(i);
    ASSERT_TRUE(s) << i;
    if (gnu && !s->defined()) continue;
    by_name[s->name].insert(i);
  }
  size_t checked = 0;
  for (const auto& [name, indices] : by_name) {
    std::vector<u32> found = f.find_symbols(name);
    std::set<u32> got(found.begin(), found.end());
    if (gnu) {
      for (auto it = got.begin(); it != got.end();) it = f.symbol(*it)->defined() ? std::next(it) : got.erase(it);
    }
    EXPECT_EQ(got, indices) << name;
    ++checked;
  }
  EXPECT_GT(checked, 10u);
  EXPECT_TRUE(f.find_symbols("no_such_symbol_anywhere").empty());
  // The inline Bloom test never rules out a name the table holds, and a name it rules out is one
  // the lookup does not find.
  for (const auto& [name, indices] : by_name) EXPECT_FALSE(f.bloom_rejects(elf::SymbolKey(name).gnu)) << name;
  size_t rejected = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string absent = "absent_" + std::to_string(i);
    if (!f.bloom_rejects(elf::SymbolKey(absent).gnu)) continue;
    ++rejected;
    EXPECT_TRUE(f.find_symbols(absent).empty()) << absent;
  }
  if (gnu) EXPECT_GT(rejected, 1000u);  // the filter answers most lookups of absent names
  else EXPECT_EQ(rejected, 0u);         // no GNU table: nothing to answer with
}

// The GNU hash of DT_GNU_HASH (h = h * 33 + c from 5381), computed four characters a step, is the
// one-character recurrence for every length, and gives the values the format's descriptions give.
TEST(HashLookup, GnuHashIsTheOneCharacterRecurrence) {
  auto reference = [](std::string_view name) {
    u32 h = 5381;
    for (unsigned char c : name) h = h * 33 + c;
    return h;
  };
  std::string name;
  for (int len = 0; len < 70; ++len) {
    EXPECT_EQ(elf::gnu_hash(name), reference(name)) << name;
    name += static_cast<char>(len % 2 ? 0xe9 - len : '_' + len % 30);  // bytes above 0x7f too
  }
  EXPECT_EQ(elf::gnu_hash(""), 0x00001505u);
  EXPECT_EQ(elf::gnu_hash("printf"), 0x156b2bb8u);
  EXPECT_EQ(elf::gnu_hash("exit"), 0x7c967e3fu);
  EXPECT_EQ(elf::gnu_hash("syscall"), 0xbac212a0u);
}

TEST(HashLookup, GnuHashOfLibcAgreesWithScan) {
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  if (!fs::exists(libc)) GTEST_SKIP() << "no " << libc;
  std::string error;
  auto f = parse_bytes(read_file(libc), &error);
  ASSERT_TRUE(f) << error;
  // The count the GNU table implies equals the .dynsym section's.
  for (const elf::Section& s : f->sections())
    if (s.type == SHT_DYNSYM) {
      EXPECT_EQ(f->symbol_count(), s.size / sizeof(Elf64_Sym));
    }
  expect_hash_agrees_with_scan(*f, /*gnu=*/true);
}

// A library whose only dynamic symbols are undefined (a constructor that calls out): GNU ld
// writes a GNU table with no hashed symbol and symoffset 1, which bounds nothing; the symbols
// relocations name must still be read, or a missing one goes unreported.
TEST(HashLookup, GnuHashWithoutDefinedSymbolsCountsEveryUndefinedOne) {
  if (!have_tool("gcc")) GTEST_SKIP() << "needs gcc";
  TempDir tmp;
  std::string path = tmp / "libcallsout.so";
  build_shared(path,
               "void not_defined_anywhere(void);\n"
               "__attribute__((constructor)) static void init(void) { not_defined_anywhere(); }\n",
               "-Wl,--hash-style=gnu", tmp);
  std::string error;
  auto f = parse_bytes(read_file(path), &error);
  ASSERT_TRUE(f) << error;
  size_t dynsym = 0;
  for (const elf::Section& s : f->sections())
    if (s.type == SHT_DYNSYM) dynsym = s.size / sizeof(Elf64_Sym);
  EXPECT_GT(dynsym, 2u);
  EXPECT_EQ(f->symbol_count(), dynsym);
  bool named = false;
  for (u32 i = 1; i < f->symbol_count(); ++i) named |= f->symbol(i) && f->symbol(i)->name == "not_defined_anywhere";
  EXPECT_TRUE(named);
}

TEST(HashLookup, SysvHashAgreesWithScan) {
  if (!have_tool("gcc")) GTEST_SKIP() << "needs gcc";
  TempDir tmp;
  std::string src;
  for (int i = 0; i < 300; ++i) src += "int fn" + std::to_string(i) + "(void){return " + std::to_string(i) + ";}\n";
  src += "extern int ext_a(void); int call(void){return ext_a();}\n";
  std::string path = tmp / "libsysv.so";
  build_shared(path, src, "-Wl,--hash-style=sysv", tmp);
  std::string error;
  auto f = parse_bytes(read_file(path), &error);
  ASSERT_TRUE(f) << error;
  expect_hash_agrees_with_scan(*f, /*gnu=*/false);
  EXPECT_EQ(f->find_symbols("fn299").size(), 1u);
  EXPECT_EQ(f->find_symbols("ext_a").size(), 1u);  // SysV chains hold undefined symbols too
}

// PT_TLS and the relocations that reach the static TLS block, from a library gcc and ld built:
// its own initial-exec TLS (ld marks the library DF_STATIC_TLS for it), another library's
// (an undefined symbol), its global-dynamic TLS (not listed), and a TLS descriptor (optional).
class TlsLibrary : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_tool("gcc")) GTEST_SKIP() << "needs gcc";
    ie = tmp / "libie.so";
    build_shared(ie,
                 "__thread char own_ie[100] __attribute__((tls_model(\"initial-exec\")));\n"
                 "__thread char own_gd[50];\n"
                 "extern __thread int other_ie __attribute__((tls_model(\"initial-exec\")));\n"
                 "int f(void) { return own_ie[0] + own_gd[0] + other_ie; }\n",
                 "", tmp);
    desc = tmp / "libdesc.so";
    build_shared(desc, "__thread char d[300]; int g(void) { return d[1]; }", "-mtls-dialect=gnu2", tmp);
  }
  TempDir tmp;
  std::string ie, desc;
};

TEST_F(TlsLibrary, ReadsPtTlsAndTheRelocationsThatReachStaticTls) {
  std::string error;
  auto f = parse_bytes(read_file(ie), &error);
  ASSERT_TRUE(f) << error;
  ASSERT_TRUE(f->tls);
  EXPECT_GE(f->tls->memsz, 150u);
  EXPECT_TRUE(f->flags & DF_STATIC_TLS);
  std::vector<loader::StaticTlsTarget> targets = loader::static_tls_targets(*f);
  std::sort(targets.begin(), targets.end(), [](auto& a, auto& b) { return a.symbol < b.symbol; });
  EXPECT_EQ(targets, (std::vector<loader::StaticTlsTarget>{{"", false}, {"other_ie", false}}));

  auto d = parse_bytes(read_file(desc), &error);
  ASSERT_TRUE(d) << error;
  ASSERT_TRUE(d->tls);
  EXPECT_EQ(d->tls->memsz, 300u);
  EXPECT_FALSE(d->flags & DF_STATIC_TLS);
  EXPECT_EQ(loader::static_tls_targets(*d), (std::vector<loader::StaticTlsTarget>{{"", true}}));
}

TEST_F(TlsLibrary, TruncatedAndAbsurdTlsTablesAreReadAround) {
  std::vector<u8> whole = read_file(ie);
  for (size_t n = 0; n < whole.size(); ++n) {
    std::string err;
    if (auto f = parse_bytes(std::vector<u8>(whole.begin(), whole.begin() + n), &err)) walk(*f);
  }
  // PT_TLS's numbers, and every relocation's r_info, set to absurd values.
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(whole.data());
  const auto* ph = reinterpret_cast<const Elf64_Phdr*>(whole.data() + eh->e_phoff);
  std::string error;
  for (int i = 0; i < eh->e_phnum; ++i) {
    if (ph[i].p_type != PT_TLS) continue;
    u64 at = eh->e_phoff + i * sizeof(Elf64_Phdr);
    for (u64 field : {offsetof(Elf64_Phdr, p_vaddr), offsetof(Elf64_Phdr, p_memsz), offsetof(Elf64_Phdr, p_align)})
      for (u64 value : {u64{0}, u64{3}, ~u64{0}, u64{1} << 63}) {
        auto f = parse_bytes(patched(whole, at + field, value, 8), &error);
        ASSERT_TRUE(f) << error;
        walk(*f);
      }
  }
  for (const elf::Section& s : full_sections(whole)) {
    if (s.type != SHT_RELA) continue;
    for (u64 off = s.offset + offsetof(Elf64_Rela, r_info); off + 8 <= s.offset + s.size; off += sizeof(Elf64_Rela))
      for (u64 value : {(u64{0xffffffff} << 32) | R_X86_64_TPOFF64, (u64{1} << 32) | R_X86_64_TLSDESC}) {
        auto f = parse_bytes(patched(whole, off, value, 8), &error);
        ASSERT_TRUE(f) << error;
        walk(*f);
      }
  }
}

// Whether the page of `path` at `offset` is in the page cache, as mincore says; nullopt when it
// cannot be asked.
std::optional<bool> in_page_cache(const std::string& path, u64 offset) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  long page = ::sysconf(_SC_PAGESIZE);
  u64 at = offset & ~static_cast<u64>(page - 1);
  void* p = ::mmap(nullptr, static_cast<size_t>(page), PROT_READ, MAP_SHARED, fd, static_cast<off_t>(at));
  ::close(fd);
  if (p == MAP_FAILED) return std::nullopt;
  unsigned char v = 0;
  int rc = ::mincore(p, static_cast<size_t>(page), &v);
  ::munmap(p, static_cast<size_t>(page));
  if (rc != 0) return std::nullopt;
  return (v & 1) != 0;
}

// Drops `path`'s pages from the page cache (written back first); false where the file system
// keeps them anyway (tmpfs).
bool drop_from_page_cache(const std::string& path, u64 size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ::fsync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  for (u64 off : {u64{0}, u64{64} << 10, size / 2, size - 1})
    if (in_page_cache(path, off).value_or(true)) return false;
  return true;
}

// The page cache is the referee of what a cold read reads: a library of 24 MiB, nearly all of it
// one constant array, parsed with its pages dropped from the cache. A fault on a page that is not
// there reads read_ahead_kb around it (8 MB on some disks): the header's would bring in the first
// 8 MB of the array, the dynamic section's (behind the array) its last 4 MB. The reader asks for
// the header, the dynamic section, its tables and the section headers instead, and finds the same
// as a reader of the file in memory.
TEST(ColdRead, ALargeLibraryIsReadForItsTablesNotItsData) {
  if (!have_tool("gcc")) GTEST_SKIP() << "needs gcc";
  TempDir tmp;
  std::string path = tmp / "libbig.so";
  build_shared(path,
               "const char big[24 << 20] = {1};\n"
               "extern int elsewhere(void);\n"
               "int first(int i) { return big[i] + elsewhere(); }\n",
               "", tmp);
  std::string error;
  auto warm = parse_bytes(read_file(path), &error);
  ASSERT_TRUE(warm) << error;
  u64 size = fs::file_size(path), rodata = 0, rodata_size = 0, dynamic = 0, dynsym = 0;
  for (const elf::Section& s : warm->sections()) {
    if (s.name == ".rodata") rodata = s.offset, rodata_size = s.size;
    if (s.name == ".dynamic") dynamic = s.offset;
    if (s.name == ".dynsym") dynsym = s.offset;
  }
  ASSERT_GE(rodata_size, u64{24} << 20);
  ASSERT_GT(dynamic, rodata + (u64{20} << 20));
  if (!drop_from_page_cache(path, size)) GTEST_SKIP() << "the file system keeps the file's pages cached";
  {
    // MappedFile asks whether a page is cached with a read that may not wait; some file systems
    // cannot answer it. (The read starts a small read-ahead of its own, in the middle of the
    // array, away from the pages looked at below.)
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    char byte;
    struct iovec one = {&byte, 1};
    bool unsupported = ::preadv2(fd, &one, 1, static_cast<off_t>(size / 2), RWF_NOWAIT) < 0 && errno == EOPNOTSUPP;
    ::close(fd);
    if (unsupported) GTEST_SKIP() << "the file system cannot say whether a page is cached (RWF_NOWAIT)";
  }

  std::shared_ptr<const MappedFile> file = MappedFile::open(path, &error);
  ASSERT_TRUE(file) << error;
  auto cold = ElfFile::parse(file, &error);
  ASSERT_TRUE(cold) << error;
  EXPECT_EQ(cold->needed, warm->needed);
  EXPECT_EQ(cold->symbol_count(), warm->symbol_count());
  EXPECT_EQ(cold->required_symbols(), warm->required_symbols());
  EXPECT_EQ(cold->find_symbols("first"), warm->find_symbols("first"));
  EXPECT_EQ(cold->sections().size(), warm->sections().size());
  // Ranges outside the file, or running past its end, are asked for without harm.
  file->will_read(size + 1, 10);
  file->will_read(size - 1, ~u64{0});
  file->will_read(0, 0);

  EXPECT_EQ(in_page_cache(path, 0), true);
  EXPECT_EQ(in_page_cache(path, dynsym), true);
  EXPECT_EQ(in_page_cache(path, dynamic), true);
  // 6 MiB into the array lies within the header's read-around, 2 MiB before the dynamic section
  // within the dynamic section's.
  EXPECT_EQ(in_page_cache(path, rodata + (u64{6} << 20)), false);
  EXPECT_EQ(in_page_cache(path, dynamic - (u64{2} << 20)), false);
}

}  // namespace
}  // namespace envdoctor::test
