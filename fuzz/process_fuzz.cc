// libFuzzer target for the load model: a crafted main program and up to three libraries, laid in
// memory under /fuzz, loaded as `ld.so /fuzz/main` would and then dlopen'd, with every search,
// version check and symbol binding that implies. The input is split into equal parts; the first
// byte says how many.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "loader/object_store.h"
#include "loader/process.h"

using namespace envdoctor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  size_t parts = 1 + data[0] % 4;
  ++data;
  --size;
  size_t part = size / parts;
  const char* names[] = {"/fuzz/main", "/fuzz/liba.so", "/fuzz/libb.so", "/fuzz/libc.so.6"};

  loader::ObjectStore store;
  for (size_t i = 0; i < parts; ++i) {
    const uint8_t* begin = data + i * part;
    size_t len = i + 1 == parts ? size - i * part : part;
    store.add_overlay(names[i], MappedFile::from_buffer(names[i], std::vector<u8>(begin, begin + len)));
  }
  loader::LoaderConfig config;
  config.default_dirs = {"/fuzz"};
  config.interpreter = "/fuzz/ld.so";
  config.cwd = "/fuzz";
  loader::Process p(config, store);
  if (p.load_main("/fuzz/main")) {
    p.list_order();
    for (size_t i = 1; i < parts; ++i) p.dlopen(names[i], i % 2 == 0);
  }
  return 0;
}
