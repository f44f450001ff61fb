// What `envdoctor uv pip` reads from text it does not control: uv's dry-run output
// (parse_uv_dry_run). It may not crash, hang or read out of bounds on any input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "python/uv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string error;
  if (auto plan = envdoctor::python::parse_uv_dry_run(text, &error))
    for (const auto& line : plan->lines)
      if (line.name.empty()) __builtin_trap();  // an item always has a name
  return 0;
}
