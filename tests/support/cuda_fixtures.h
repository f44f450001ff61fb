// CUDA fixtures shared by tests/cuda and tests/cuda_check: the shipped knowledge tables, fatbinary
// headers patched in place (an architecture or PTX ISA that the local nvcc cannot write), and the
// independent header walk (tests/support/fatbin_walk.py) that says what a patched file holds.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda/tables.h"

namespace envdoctor::test {

// data/cuda.json of the source tree; fails the test that first asks if it does not load.
const cuda::CudaTables& shipped_cuda_tables();

std::vector<uint8_t> read_bytes(const std::string& path);
void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes);

// Calls `patch` with the 64-byte header of every entry of every container in the ELF64 file's
// `.nv_fatbin`, found from the section headers and the container sizes, as the layout of
// docs/cuda.md says. The header bytes may be changed in place.
void for_each_fatbin_entry(std::vector<uint8_t>& elf, const std::function<void(uint8_t* header)>& patch);

// Entry header fields (docs/cuda.md, "Entry header").
void set_entry_arch(uint8_t* header, uint32_t sm);
void set_entry_ptx_isa(uint8_t* header, uint16_t major, uint16_t minor);
uint16_t entry_kind(const uint8_t* header);  // 1 PTX, 2 cubin
// A patch for for_each_fatbin_entry that sets every PTX entry's ISA.
std::function<void(uint8_t*)> ptx_isa_patch(uint16_t major, uint16_t minor);

// tests/data/cuda/NAME, the committed nvcc fixtures.
std::string cuda_fixture(const std::string& name);
// The folder of those fixtures, with its trailing '/'.
inline const std::string kCudaData = std::string(ENVDOCTOR_SOURCE_DIR) + "/tests/data/cuda/";
// The machine's CUDA toolkit: its nvcc and its CUDA 13 runtime.
inline const std::string kNvcc = "/usr/local/cuda/bin/nvcc";
inline const std::string kCudart13 = "/usr/local/cuda/lib64/libcudart.so.13";
// The tag of the wheels the CUDA checks build: any Python 3, this platform.
inline const std::string kTag = "py3-none-linux_x86_64";
// A driver version from its text ("580.65.06"), which the test knows to be one.
inline cuda::DriverVersion driver_version(const char* text) { return *cuda::DriverVersion::parse(text); }
// A driver version, or "none".
inline std::string text(const std::optional<cuda::DriverVersion>& v) { return v ? v->text : "none"; }
// The findings of a `check --json` report with `code`.
std::vector<nlohmann::json> findings_with_code(const nlohmann::json& report, const std::string& code);

// The entries of `path`'s .nv_fatbin as tests/support/fatbin_walk.py lists them, one per line:
// "sm_100f", "compute_80 isa9.4". Empty with `skipped` set when python3 is absent.
std::vector<std::string> fatbin_walk(const std::string& path, bool* skipped);

}  // namespace envdoctor::test
