// `envdoctor wheel-tag`: the manylinux tag each file earns and what each wheel's tags promise,
// as text for people or JSON for programs (the wheel build reads the tag from it). The verdicts
// are checks::manylinux's; this only formats them.
#pragma once

#include <string>
#include <vector>

#include "checks/manylinux.h"

namespace envdoctor::report {

struct WheelTagReport {
  std::vector<checks::ManylinuxNeeds> files;  // ELF files given on the command line
  std::vector<checks::WheelTagAudit> wheels;  // wheels given on the command line
  std::vector<std::string> policy_libraries;  // checks::manylinux_libraries of the files' machine
};

// One sentence stating the policy the verdicts follow.
std::string manylinux_policy_text(const std::vector<std::string>& libraries);

std::string render_wheel_tag_text(const WheelTagReport& report);
std::string render_wheel_tag_json(const WheelTagReport& report);

}  // namespace envdoctor::report
