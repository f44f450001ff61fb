#include "report/wheel_tag.h"

#include <nlohmann/json.hpp>

namespace envdoctor::report {

namespace {

using nlohmann::ordered_json;

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string tag_or_none(const checks::ManylinuxNeeds& f) { return f.taggable() ? f.tag() : "no manylinux tag"; }

// "needs glibc 2.34: GLIBC_2.34 of libc.so.6 (the highest of 27 glibc versions it needs)".
std::string floor_line(const checks::ManylinuxNeeds& f) {
  if (f.floor.empty()) return "needs no glibc symbol version: the oldest policy, glibc " + f.glibc.str();
  std::string versions;
  for (const auto& v : f.floor) versions += (versions.empty() ? "" : ", ") + v.version + " of " + v.library;
  std::string line = "needs glibc " + f.glibc.str() + ": " + versions + " (the highest of " +
                     std::to_string(f.versions_needed) + " glibc versions it needs)";
  checks::GlibcVersion floor = *checks::glibc_version_of(f.floor.front().version);
  if (floor < f.glibc) line += ", below the oldest policy for " + f.arch;
  return line;
}

void file_text(std::string& out, const checks::ManylinuxNeeds& f, const std::string& indent) {
  out += indent + f.file + ": " + tag_or_none(f) + "\n";
  out += indent + "  " + floor_line(f) + "\n";
  for (const std::string& p : f.problems) out += indent + "  " + p + "\n";
}

ordered_json file_json(const checks::ManylinuxNeeds& f) {
  ordered_json j;
  j["file"] = f.file;
  j["tag"] = f.taggable() ? ordered_json(f.tag()) : ordered_json(nullptr);
  j["arch"] = f.arch;
  j["glibc"] = f.glibc.str();
  ordered_json floor = ordered_json::array();
  for (const auto& v : f.floor) floor.push_back({{"library", v.library}, {"version", v.version}});
  j["floor"] = std::move(floor);
  j["versions_needed"] = f.versions_needed;
  j["problems"] = f.problems;
  return j;
}

}  // namespace

std::string manylinux_policy_text(const std::vector<std::string>& libraries) {
  return "a manylinux_2_N file may need only " + join(libraries) +
         ", and the highest GLIBC_2.N symbol version it needs from them sets N";
}

std::string render_wheel_tag_text(const WheelTagReport& r) {
  std::string out;
  for (const checks::ManylinuxNeeds& f : r.files) file_text(out, f, "");
  for (const checks::WheelTagAudit& w : r.wheels) {
    std::string earned = w.tag();
    if (earned.empty()) earned = w.files.empty() ? "no ELF files" : "no manylinux tag";
    out += w.wheel + ": " + earned + " (tagged " + join(w.claimed) + ")\n";
    for (const checks::ManylinuxNeeds& f : w.files) file_text(out, f, "  ");
    for (const std::string& p : w.problems) out += "  error: " + p + "\n";
  }
  out += "policy: " + manylinux_policy_text(r.policy_libraries) + "\n";
  return out;
}

std::string render_wheel_tag_json(const WheelTagReport& r) {
  ordered_json out;
  out["schema"] = 1;
  out["policy"] = {{"libraries", r.policy_libraries},
                   {"floor", "the highest GLIBC_2.N symbol version needed from them"}};
  ordered_json files = ordered_json::array();
  for (const checks::ManylinuxNeeds& f : r.files) files.push_back(file_json(f));
  out["files"] = std::move(files);
  ordered_json wheels = ordered_json::array();
  for (const checks::WheelTagAudit& w : r.wheels) {
    ordered_json j;
    j["wheel"] = w.wheel;
    std::string tag = w.tag();
    j["tag"] = tag.empty() ? ordered_json(nullptr) : ordered_json(tag);
    j["claimed"] = w.claimed;
    j["glibc"] = w.glibc ? ordered_json(w.glibc->str()) : ordered_json(nullptr);
    ordered_json members = ordered_json::array();
    for (const checks::ManylinuxNeeds& f : w.files) members.push_back(file_json(f));
    j["files"] = std::move(members);
    j["problems"] = w.problems;
    wheels.push_back(std::move(j));
  }
  out["wheels"] = std::move(wheels);
  return out.dump(2) + "\n";
}

}  // namespace envdoctor::report
