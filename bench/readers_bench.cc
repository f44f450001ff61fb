// The readers on real files of this machine, page cache warm: mapping and parsing an ELF file
// (what the loader model needs of it), and listing every fatbinary entry of NVIDIA's largest
// library by its headers alone. A benchmark whose file is absent or unreadable is skipped.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <string>

#include "cuda/fatbin.h"
#include "elf/elf_file.h"

namespace {

using namespace envdoctor;

std::unique_ptr<elf::ElfFile> open_elf(const std::string& path) {
  std::string error;
  std::shared_ptr<const MappedFile> file = MappedFile::open(path, &error);
  return file ? elf::ElfFile::parse(file, &error) : nullptr;
}

void ParseElf(benchmark::State& state, const std::string& path) {
  if (!std::filesystem::exists(path)) {
    state.SkipWithError(("absent: " + path).c_str());
    return;
  }
  for (auto _ : state) {
    auto f = open_elf(path);
    if (!f) {  // removed or replaced since the check above (a package upgrade)
      state.SkipWithError(("unreadable: " + path).c_str());
      break;
    }
    benchmark::DoNotOptimize(f->required_symbols().size());
  }
}

void ListFatbins(benchmark::State& state, const std::string& path) {
  if (!std::filesystem::exists(path)) {
    state.SkipWithError(("absent: " + path).c_str());
    return;
  }
  size_t entries = 0;
  for (auto _ : state) {
    auto f = open_elf(path);
    if (!f) {
      state.SkipWithError(("unreadable: " + path).c_str());
      break;
    }
    cuda::FatbinInfo info = cuda::read_fatbins(*f);
    entries = info.entries.size();
    benchmark::DoNotOptimize(entries);
  }
  state.counters["entries"] = static_cast<double>(entries);
}

BENCHMARK_CAPTURE(ParseElf, libc, std::string("/lib/x86_64-linux-gnu/libc.so.6"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(ParseElf, libcublasLt, std::string("/usr/local/cuda/lib64/libcublasLt.so.13"))
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(ListFatbins, libcublasLt, std::string("/usr/local/cuda/lib64/libcublasLt.so.13"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(ListFatbins, libcudnn_engines_precompiled,
                  std::string("/usr/local/cuda/lib64/libcudnn_engines_precompiled.so.9"))
    ->Unit(benchmark::kMillisecond);

}  // namespace
