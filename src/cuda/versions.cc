#include "cuda/versions.h"

#include <charconv>
#include <vector>

namespace envdoctor::cuda {

// Splits "a.b.c" into at most `max` non-empty decimal parts; nullopt if anything else is there.
static std::optional<std::vector<int>> decimal_parts(std::string_view s, size_t max) {
  std::vector<int> parts;
  while (true) {
    size_t dot = s.find('.');
    std::string_view part = s.substr(0, dot);
    int v = 0;
    if (part.empty() || part.size() > 6) return std::nullopt;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || ptr != part.data() + part.size()) return std::nullopt;
    parts.push_back(v);
    if (parts.size() > max) return std::nullopt;
    if (dot == std::string_view::npos) return parts;
    s.remove_prefix(dot + 1);
  }
}

std::optional<DriverVersion> DriverVersion::parse(std::string_view s) {
  std::optional<std::vector<int>> p = decimal_parts(s, 3);
  if (!p) return std::nullopt;
  DriverVersion v;
  v.major = (*p)[0];
  v.minor = p->size() > 1 ? (*p)[1] : 0;
  v.patch = p->size() > 2 ? (*p)[2] : 0;
  v.text = std::string(s);
  return v;
}

std::optional<MajorMinor> MajorMinor::parse(std::string_view s) {
  std::optional<std::vector<int>> p = decimal_parts(s, 2);
  if (!p) return std::nullopt;
  if (p->size() == 2) return MajorMinor{(*p)[0], (*p)[1]};
  // The integer form: 1000 * major + 10 * minor (CUDA_VERSION in cuda.h).
  int n = (*p)[0];
  if (n < 1000) return std::nullopt;
  return MajorMinor{n / 1000, (n % 1000) / 10};
}

}  // namespace envdoctor::cuda
