// Version numbers of the CUDA world: driver versions ("580.65.06"), CUDA toolkit and runtime
// versions ("12.8"), PTX ISA versions ("9.0"). Value types, parsed from text, compared in order.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace envdoctor::cuda {

// An NVIDIA driver version as the driver prints it: major.minor[.patch]. The patch keeps its
// written width ("06") in `text`, which is what messages quote.
struct DriverVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  std::string text;

  // "580.65.06", "580.65", "580"; nullopt on anything else.
  static std::optional<DriverVersion> parse(std::string_view s);

  friend bool operator==(const DriverVersion& a, const DriverVersion& b) {
    return a.major == b.major && a.minor == b.minor && a.patch == b.patch;
  }
  friend std::strong_ordering operator<=>(const DriverVersion& a, const DriverVersion& b) {
    if (auto c = a.major <=> b.major; c != 0) return c;
    if (auto c = a.minor <=> b.minor; c != 0) return c;
    return a.patch <=> b.patch;
  }
};

// A two-part version: a CUDA release ("12.8") or a PTX ISA version ("9.0").
struct MajorMinor {
  int major = 0;
  int minor = 0;

  // "12.8"; also "12080" (the integer form of cudaRuntimeGetVersion and NVML).
  static std::optional<MajorMinor> parse(std::string_view s);
  std::string str() const { return std::to_string(major) + "." + std::to_string(minor); }

  friend bool operator==(const MajorMinor&, const MajorMinor&) = default;
  friend auto operator<=>(const MajorMinor&, const MajorMinor&) = default;
};

}  // namespace envdoctor::cuda
