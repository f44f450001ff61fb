#include "support/cuda_fixtures.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "support/fixture.h"

namespace envdoctor::test {

const cuda::CudaTables& shipped_cuda_tables() {
  static const cuda::CudaTables tables = [] {
    std::string error;
    std::optional<cuda::CudaTables> t = cuda::load_cuda_tables(std::string(ENVDOCTOR_SOURCE_DIR) + "/data", &error);
    if (!t) ADD_FAILURE() << error;
    return t.value_or(cuda::CudaTables{});
  }();
  return tables;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

namespace {

template <typename T>
T le(const std::vector<uint8_t>& b, uint64_t at) {
  (void)b.at(at + sizeof(T) - 1);  // throws past the end
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}

}  // namespace

void for_each_fatbin_entry(std::vector<uint8_t>& elf, const std::function<void(uint8_t* header)>& patch) {
  // ELF64 little-endian: e_shoff at 0x28, e_shentsize 0x3a, e_shnum 0x3c, e_shstrndx 0x3e;
  // a section header's sh_name at 0, sh_offset at 0x18, sh_size at 0x20.
  uint64_t shoff = le<uint64_t>(elf, 0x28);
  uint16_t shentsize = le<uint16_t>(elf, 0x3a), shnum = le<uint16_t>(elf, 0x3c), shstrndx = le<uint16_t>(elf, 0x3e);
  uint64_t strtab = le<uint64_t>(elf, shoff + uint64_t(shstrndx) * shentsize + 0x18);
  for (uint16_t i = 0; i < shnum; ++i) {
    uint64_t sh = shoff + uint64_t(i) * shentsize;
    const char* name = reinterpret_cast<const char*>(&elf.at(strtab + le<uint32_t>(elf, sh)));
    if (std::strcmp(name, ".nv_fatbin") != 0) continue;
    uint64_t at = le<uint64_t>(elf, sh + 0x18), end = at + le<uint64_t>(elf, sh + 0x20);
    while (at + 16 <= end) {
      if (le<uint32_t>(elf, at) != 0xBA55ED50) {  // zero padding between containers
        at += 8;
        continue;
      }
      uint64_t entry = at + le<uint16_t>(elf, at + 6);
      uint64_t container_end = entry + le<uint64_t>(elf, at + 8);
      while (entry < container_end) {
        patch(&elf.at(entry));
        entry += le<uint32_t>(elf, entry + 4) + le<uint64_t>(elf, entry + 8);
      }
      at = container_end;
    }
  }
}

void set_entry_arch(uint8_t* header, uint32_t sm) { std::memcpy(header + 28, &sm, 4); }

void set_entry_ptx_isa(uint8_t* header, uint16_t major, uint16_t minor) {
  std::memcpy(header + 24, &minor, 2);
  std::memcpy(header + 26, &major, 2);
}

uint16_t entry_kind(const uint8_t* header) {
  uint16_t kind;
  std::memcpy(&kind, header, 2);
  return kind;
}

std::function<void(uint8_t*)> ptx_isa_patch(uint16_t major, uint16_t minor) {
  return [=](uint8_t* header) {
    if (entry_kind(header) == 1) set_entry_ptx_isa(header, major, minor);
  };
}

std::string cuda_fixture(const std::string& name) {
  return std::string(ENVDOCTOR_SOURCE_DIR) + "/tests/data/cuda/" + name;
}

std::vector<nlohmann::json> findings_with_code(const nlohmann::json& report, const std::string& code) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& f : report["findings"])
    if (f["code"] == code) out.push_back(f);
  return out;
}

std::vector<std::string> fatbin_walk(const std::string& path, bool* skipped) {
  *skipped = !have_tool("python3");
  if (*skipped) return {};
  CommandResult r =
      run("python3 " + quote(std::string(ENVDOCTOR_SOURCE_DIR) + "/tests/support/fatbin_walk.py") + " " + quote(path));
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace envdoctor::test
