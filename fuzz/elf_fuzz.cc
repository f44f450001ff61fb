// libFuzzer target for the ELF reader: parse any bytes as a file the loader might open, then walk
// every accessor the loader model, the CUDA stage and wheel-tag use. ASan/UBSan report any read outside the
// input or any undefined arithmetic; the reader must only ever return errors or partial results.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "elf/elf_file.h"
#include "loader/static_tls.h"
#include "python/manylinux.h"

using envdoctor::MappedFile;
using envdoctor::u16;
using envdoctor::u32;
using envdoctor::u8;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::shared_ptr<const MappedFile> file = MappedFile::from_buffer("fuzz.so", std::vector<u8>(data, data + size));
  std::string error;
  auto elf = envdoctor::elf::ElfFile::parse(file, &error);
  if (!elf) return 0;

  size_t sink = 0;
  for (std::string_view n : elf->needed) sink += n.size();
  if (elf->soname) sink += elf->soname->size();
  for (const auto& vn : elf->verneed) {
    sink += vn.file.size();
    for (const auto& v : vn.versions) {
      sink += v.name.size();
      if (elf->vernaux_for(v.other)) ++sink;
    }
  }
  for (const auto& vd : elf->verdef)
    if (elf->verdef_for(vd.ndx)) sink += vd.name.size();

  // Every symbol, and a hash lookup of each name (capped: a crafted table may claim 2^32).
  u32 n = std::min<u32>(elf->symbol_count(), 4096);
  for (u32 i = 0; i < n; ++i) {
    auto s = elf->symbol(i);
    if (!s) continue;
    sink += s->name.size();
    if (s->versym) {
      if (elf->verdef_for(*s->versym)) ++sink;
      if (elf->vernaux_for(*s->versym)) ++sink;
    }
    if (i < 256) sink += elf->find_symbols(s->name).size();
  }
  sink += elf->find_symbols("malloc").size();
  for (u32 idx : elf->relocation_order())
    if (auto s = elf->symbol(idx)) sink += s->name.size();
  for (const auto& sec : elf->sections()) sink += sec.name.size() + sec.size;
  // PT_TLS's numbers through the static TLS model's arithmetic, and the relocations reaching it.
  for (const auto& t : envdoctor::loader::static_tls_targets(*elf)) sink += t.symbol.size() + t.optional;
  if (elf->tls) {
    envdoctor::loader::TlsBlock block = envdoctor::loader::TlsBlock::of(*elf->tls);
    envdoctor::loader::StaticTls area(*envdoctor::loader::TlsAbi::for_machine(EM_X86_64), {}, {block, block});
    sink += area.try_allocate(block, false) + area.try_allocate(block, true);
  }
  // What wheel-tag reads of it: the architecture (e_flags, the GNU property notes), the C library,
  // the versions and undefined symbols.
  envdoctor::python::ElfAbi abi = envdoctor::python::read_elf_abi(*elf, "fuzz.cpython-311-x86_64-linux-gnu.so");
  sink += abi.arch.size() + abi.isa.size() + abi.versions.size() + abi.undefined.size() + abi.python_extension;
  volatile size_t keep = sink;
  (void)keep;
  return 0;
}
