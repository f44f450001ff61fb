// libFuzzer target for the fatbinary reader: the input is read twice, once as the bytes of a
// .nv_fatbin section and once as a whole ELF file whose sections are then walked by
// read_fatbins. ASan/UBSan report any read outside the input or any undefined arithmetic; the
// reader must only ever return entries and problems. Seeds: fuzz/corpus/fatbin_fuzz/ (sections
// cut from tests/fixtures/data/cuda fixtures, and one whole fixture).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/arch.h"
#include "cuda/fatbin.h"
#include "elf/elf_file.h"

using envdoctor::Bytes;
using envdoctor::MappedFile;
using envdoctor::u8;
namespace cuda = envdoctor::cuda;

static size_t consume(const cuda::FatbinInfo& info) {
  size_t sink = info.containers + info.problems.size();
  for (const cuda::FatbinEntry& e : info.entries) sink += e.arch_name().size() + e.size + e.offset;
  // The rules must take whatever numbers a header holds.
  cuda::CudaTables tables;
  sink += cuda::classify(info, 90, std::nullopt, tables).deciding.size();
  return sink;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t sink = consume(cuda::parse_fatbin_section(Bytes(data, size)));
  sink += consume(cuda::parse_fatbin_section(Bytes(data, size), "__nv_relfatbin", 1000));

  std::shared_ptr<const MappedFile> file = MappedFile::from_buffer("fuzz.so", std::vector<u8>(data, data + size));
  std::string error;
  if (auto elf = envdoctor::elf::ElfFile::parse(file, &error)) sink += consume(cuda::read_fatbins(*elf));
  volatile size_t keep = sink;
  (void)keep;
  return 0;
}
