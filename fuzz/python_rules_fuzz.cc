// libFuzzer target for the readers of a package's own Python source: any bytes as
// TransformerEngine's transformer_engine/common/__init__.py (either release shape), and every
// name that a rule read from them expands.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "checks/transformer_engine_rule.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<envdoctor::checks::TeRule> rule = envdoctor::checks::read_te_rule("/f/__init__.py", text);
  if (!rule) return 0;
  size_t sink = envdoctor::checks::te_for_library(rule->wheel_glob, "cudnn").size();
  for (const auto& loader : rule->loaders)
    for (const auto& step : loader.steps)
      sink += envdoctor::checks::te_for_library(step.pattern, loader.lib).size() + step.command.size();
  for (const auto& place : rule->places) sink += envdoctor::checks::te_for_library(place.variable, "nvrtc").size();
  volatile size_t keep = sink;
  (void)keep;
  return 0;
}
