#include "snapshot/diff.h"

#include <map>
#include <set>
#include <tuple>

namespace envdoctor::snapshot {

namespace {

using nlohmann::json;

// A member of an object as text: strings as they are, numbers and booleans dumped, anything
// else (absent, null, another type) as "".
std::string text(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number() || it->is_boolean()) return it->dump();
  return "";
}

const json& member(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::string joined(const json& array, const std::string& separator) {
  std::string out;
  if (!array.is_array()) return out;
  for (const json& item : array) {
    if (!out.empty()) out += separator;
    out += item.is_string() ? item.get<std::string>() : item.dump();
  }
  return out;
}

// PEP 503's normalization, so that "Flash_Attn" on A is "flash-attn" on B.
std::string normalized(std::string name) {
  std::string out;
  for (char c : name) {
    char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if (l == '_' || l == '.') l = '-';
    if (l == '-' && !out.empty() && out.back() == '-') continue;
    out += l;
  }
  return out;
}

// Compares two keyed maps of descriptions; a subject on one side only is added or removed.
void compare(const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b,
             std::vector<Change>& out) {
  for (const auto& [subject, before] : a) {
    auto it = b.find(subject);
    if (it == b.end()) out.push_back({subject, before, std::nullopt, {}});
    else if (it->second != before) out.push_back({subject, before, it->second, {}});
  }
  for (const auto& [subject, after] : b)
    if (!a.count(subject)) out.push_back({subject, std::nullopt, after, {}});
}

std::map<std::string, std::string> packages(const json& s) {
  std::map<std::string, std::string> out;
  for (const json& p : member(s, "packages")) {
    std::string key = normalized(text(p, "name"));
    std::string installer = text(p, "installer");
    std::string d = text(p, "version") + (installer.empty() ? "" : " (" + installer + ")");
    out[key] = out.count(key) ? out[key] + ", " + d : d;  // two copies of one project: both
  }
  return out;
}

std::map<std::string, std::string> files(const json& s) {
  std::map<std::string, std::string> out;
  for (const json& f : member(s, "files")) {
    std::string d = "size " + text(f, "size");
    if (std::string id = text(f, "build_id"); !id.empty()) d += ", build-id " + id;
    if (std::string soname = text(f, "soname"); !soname.empty()) d += ", SONAME " + soname;
    if (std::string error = text(f, "error"); !error.empty()) d += ", unreadable: " + error;
    out[text(f, "path")] = d;
  }
  return out;
}

// Where a NEEDED entry went, for people: "nvidia-cudnn-cu13's copy lib/.../libcudnn.so.9 (runpath)",
// "/usr/local/cuda-13.0/lib64/libcudart.so.13 (ld_library_path)", "not found".
std::string where(const json& r) {
  std::string resolved = text(r, "resolved");
  if (resolved.empty()) return "not found";
  std::string owner = text(r, "owner");
  return (owner.empty() ? "" : owner + "'s copy ") + resolved + " (" + text(r, "rule") + ")";
}

void resolutions(const json& a, const json& b, std::vector<Change>& out) {
  std::map<std::pair<std::string, std::string>, std::string> before;
  for (const json& r : member(a, "resolutions")) before[{text(r, "file"), text(r, "needed")}] = where(r);
  // (needed, before, after) -> files: one lost library needed by many files is one change.
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> grouped;
  for (const json& r : member(b, "resolutions")) {
    auto it = before.find({text(r, "file"), text(r, "needed")});
    if (it == before.end()) continue;  // a file on one side only is a file change
    std::string after = where(r);
    if (after != it->second) grouped[{text(r, "needed"), it->second, after}].push_back(text(r, "file"));
  }
  for (auto& [key, consumers] : grouped)
    out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::move(consumers)});
}

std::map<std::string, std::string> environment(const json& s) {
  const json& e = member(s, "environment");
  return {{"python", text(e, "python")},
          {"version", text(e, "version")},
          {"implementation", text(e, "implementation")},
          {"soabi", text(e, "soabi")}};
}

std::map<std::string, std::string> loader(const json& s) {
  const json& l = member(s, "loader");
  return {{"glibc", text(l, "glibc")},
          {"ld.so.cache", text(member(l, "ld_so_cache"), "sha256")},
          {"LD_LIBRARY_PATH", joined(member(l, "ld_library_path"), ":")},
          {"glibc-hwcaps", joined(member(l, "hwcaps"), " ")}};
}

std::map<std::string, std::string> cuda(const json& s) {
  const json& c = member(s, "cuda");
  std::string gpus;
  for (const json& g : member(c, "gpus"))
    gpus += (gpus.empty() ? "" : ", ") + std::string("sm_") + text(g, "sm") + " (" + text(g, "name") + ")";
  std::map<std::string, std::string> out = {{"driver", text(c, "driver")},
                                            {"driver's CUDA", text(c, "driver_cuda")},
                                            {"GPUs", gpus},
                                            {"forward compatibility", text(member(c, "forward_compat"), "version")},
                                            {"driver libraries", joined(member(c, "driver_libraries"), " ")}};
  for (const json& rt : member(c, "runtimes")) {
    std::string version = text(rt, "version");
    std::string owner = text(rt, "owner");
    out["runtime " + text(rt, "path")] =
        text(rt, "soname") + (version.empty() ? "" : " " + version) + (owner.empty() ? "" : " (" + owner + ")");
  }
  // A fact absent on both sides is no difference; one absent on one side reads as "none".
  return out;
}

void compare_facts(const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b,
                   std::vector<Change>& out) {
  std::set<std::string> subjects;
  for (const auto& [k, v] : a) subjects.insert(k);
  for (const auto& [k, v] : b) subjects.insert(k);
  for (const std::string& k : subjects) {
    auto ia = a.find(k), ib = b.find(k);
    std::string va = ia == a.end() ? "" : ia->second, vb = ib == b.end() ? "" : ib->second;
    if (va == vb) continue;
    out.push_back(
        {k, va.empty() ? std::optional<std::string>() : va, vb.empty() ? std::optional<std::string>() : vb, {}});
  }
}

// A finding's identity: everything but its prose.
std::string identity(const json& f) {
  if (!f.is_object()) return f.dump();
  json k = f;
  k.erase("message");
  k.erase("hint");
  return k.dump();
}

FindingChange finding_change(const json& f) {
  return {text(f, "code"),    text(f, "severity"), text(f, "file"),
          text(f, "package"), text(f, "library"),  text(f, "message")};
}

void findings(const json& a, const json& b, Diff& d) {
  std::set<std::string> in_a, in_b;
  for (const json& f : member(a, "findings")) in_a.insert(identity(f));
  for (const json& f : member(b, "findings")) in_b.insert(identity(f));
  for (const json& f : member(b, "findings"))
    if (!in_a.count(identity(f))) {
      d.new_findings.push_back(finding_change(f));
      d.new_errors += text(f, "severity") == "error";
    }
  for (const json& f : member(a, "findings"))
    if (!in_b.count(identity(f))) d.gone_findings.push_back(finding_change(f));
}

// `path` as the side with prefix `other` spells it: relative when it lies inside `other` (an
// absolute path of this side there), unless this side already spells another file so.
std::string respelled(const std::string& path, const std::string& other, const std::set<std::string>& taken) {
  if (path.empty() || path[0] != '/' || other.size() < 2 || other[0] != '/') return path;
  std::string base = other.back() == '/' ? other : other + "/";
  if (path.size() <= base.size() || path.compare(0, base.size(), base) != 0) return path;
  std::string rel = path.substr(base.size());
  return taken.count(rel) ? path : rel;
}

// `s` with its paths spelled as the side with prefix `other` spells them.
json in_terms_of(const json& s, const std::string& other) {
  if (other == text(member(s, "environment"), "prefix")) return s;
  std::set<std::string> taken;
  for (const json& f : member(s, "files")) taken.insert(text(f, "path"));
  for (const json& r : member(s, "resolutions")) {
    taken.insert(text(r, "file"));
    taken.insert(text(r, "resolved"));
  }
  json out = s;
  auto respell = [&](json& object, const char* key) {
    if (object.is_object() && object.contains(key) && object[key].is_string())
      object[key] = respelled(object[key].get<std::string>(), other, taken);
  };
  auto each = [](json& array, auto fn) {
    if (array.is_array())
      for (json& item : array) fn(item);
  };
  if (!out.is_object()) return out;
  each(out["files"], [&](json& f) { respell(f, "path"); });
  each(out["resolutions"], [&](json& r) {
    respell(r, "file");
    respell(r, "resolved");
    respell(r, "dir");
  });
  each(out["findings"], [&](json& f) { respell(f, "file"); });
  if (out.contains("cuda") && out["cuda"].is_object() && out["cuda"].contains("runtimes"))
    each(out["cuda"]["runtimes"], [&](json& rt) { respell(rt, "path"); });
  return out;
}

}  // namespace

Side side_of(const json& s) {
  const json& e = member(s, "environment");
  Side side{"", text(e, "prefix"), text(e, "python"), text(e, "version")};
  if (!side.python.empty() && side.python[0] != '/' && !side.prefix.empty())
    side.python = side.python == "." ? side.prefix : side.prefix + "/" + side.python;
  return side;
}

bool Diff::same() const {
  return environment.empty() && packages.empty() && files.empty() && resolutions.empty() && loader.empty() &&
         cuda.empty() && new_findings.empty() && gone_findings.empty();
}

Diff diff(const json& snapshot_a, const json& snapshot_b) {
  Diff d;
  d.digest_a = text(snapshot_a, "digest");
  d.digest_b = text(snapshot_b, "digest");
  d.a = side_of(snapshot_a);
  d.b = side_of(snapshot_b);
  json a = in_terms_of(snapshot_a, d.b.prefix);
  json b = in_terms_of(snapshot_b, d.a.prefix);
  compare_facts(environment(a), environment(b), d.environment);
  compare(packages(a), packages(b), d.packages);
  compare(files(a), files(b), d.files);
  resolutions(a, b, d.resolutions);
  compare_facts(loader(a), loader(b), d.loader);
  compare_facts(cuda(a), cuda(b), d.cuda);
  findings(a, b, d);
  return d;
}

}  // namespace envdoctor::snapshot
