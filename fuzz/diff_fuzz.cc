// libFuzzer target for `envdoctor diff A B`: two snapshot documents, as a node or a colleague may
// send them, read by snapshot::parse and compared by snapshot::diff (which respells one side's
// absolute paths as the other side's prefix gives them). The input is split at its first NUL byte
// (none: both sides are the whole input).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "snapshot/diff.h"
#include "snapshot/snapshot.h"

using namespace envdoctor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  size_t nul = input.find('\0');
  std::string first = nul == std::string::npos ? input : input.substr(0, nul);
  std::string second = nul == std::string::npos ? input : input.substr(nul + 1);
  std::string error;
  std::optional<nlohmann::json> a = snapshot::parse(first, &error);
  std::optional<nlohmann::json> b = snapshot::parse(second, &error);
  if (!a || !b) return 0;
  snapshot::Diff d = snapshot::diff(*a, *b);
  (void)d.same();
  return 0;
}
