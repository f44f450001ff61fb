#include "report/wheel_tag.h"

#include <nlohmann/json.hpp>

#include "support/text.h"

namespace envdoctor::report {

using python::AbiVerdict;
using python::Policy;
using python::TagAudit;

namespace {

using nlohmann::ordered_json;
using python::AbiVerdict;
using python::Policy;
using python::TagAudit;

std::vector<std::string> as_list(const std::set<std::string>& items) { return {items.begin(), items.end()}; }

// Python's repr of a set of strings, as auditwheel prints one (sorted here, so that it is stable).
std::string python_set(const std::set<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + ("'" + s + "'");
  return "{" + out + "}";
}

ordered_json by_library(const std::map<std::string, std::set<std::string>>& m) {
  ordered_json j = ordered_json::object();
  for (const auto& [lib, items] : m) j[lib] = as_list(items);
  return j;
}

// The policies better than the one the files earn, best last (auditwheel iterates them so).
std::vector<const Policy*> better_policies(const AbiVerdict& v, size_t than) {
  std::vector<const Policy*> out;
  for (size_t i = than + 1; i < v.policies.policies.size(); ++i) out.push_back(&v.policies.policies[i]);
  return out;
}

// "In order to achieve the tag platform tag 'P' the following WHAT will need to be eliminated: LIST",
// once for each run of policies that share LIST (auditwheel says it for each), the run named.
template <typename Get>
void eliminate_sentences(std::vector<std::string>& out, const AbiVerdict& v, const std::string& what, Get list_of) {
  std::vector<const Policy*> better = better_policies(v, v.overall);
  for (size_t i = 0; i < better.size();) {
    std::string list = list_of(v.barriers[static_cast<size_t>(better[i] - v.policies.policies.data())]);
    size_t j = i + 1;
    while (j < better.size() &&
           list_of(v.barriers[static_cast<size_t>(better[j] - v.policies.policies.data())]) == list)
      ++j;
    if (!list.empty()) {
      std::string run = j - i > 1 ? " (and the same for the " + std::to_string(j - i - 1) +
                                        " policies after it, up to '" + better[j - 1]->name + "')"
                                  : "";
      out.push_back("In order to achieve the tag platform tag '" + better[i]->name + "' the following " + what +
                    " will need to be eliminated: " + list + run);
    }
    i = j;
  }
}

// auditwheel show's sentences (main_show.py), in its order, all of them (as with -v).
std::vector<std::string> auditwheel_sentences(const TagAudit& a) {
  const AbiVerdict& v = *a.verdict;
  std::vector<std::string> out;
  out.push_back(a.name + " is consistent with the following platform tag: \"" + v.overall_policy().name + "\".");
  if (v.pyfpe)
    out.push_back(
        "This wheel uses the PyFPE_jbuf function, which is not compatible with the manylinux/musllinux tags. (see "
        "https://www.python.org/dev/peps/pep-0513/#fpectl-builds-vs-no-fpectl-builds)");
  if (v.ucs2)
    out.push_back(
        "This wheel is compiled against a narrow unicode (UCS2) version of Python, which is not compatible with the "
        "manylinux/musllinux tags.");
  if (v.unsupported_isa) out.push_back("This wheel depends on unsupported ISA extensions.");
  if (v.versioned_symbols.empty()) {
    out.push_back("The wheel references no external versioned symbols from system-provided shared libraries.");
  } else {
    std::vector<std::string> libs;
    for (const auto& [lib, versions] : v.versioned_symbols)
      libs.push_back(lib + " with versions " + python_set(versions));
    out.push_back("The wheel references external versioned symbols in these system-provided shared libraries: " +
                  support::join(libs));
  }
  if (v.sym + 1 < v.policies.policies.size()) {
    out.push_back("This constrains the platform tag to \"" + v.sym_policy().name +
                  "\". In order to achieve a more compatible tag, you would need to recompile a new wheel from source "
                  "on a system with earlier versions of these libraries, such as a recent manylinux image.");
    // envdoctor's addition: which versions the next better policy lacks.
    const Policy& next = v.policies.policies[v.sym + 1];
    std::vector<std::string> reasons = v.reasons_missed(next);
    if (!reasons.empty()) out.push_back("For \"" + next.name + "\", " + reasons.front() + ".");
  }
  const std::set<std::string>& lowest = v.barriers[std::min<size_t>(1, v.barriers.size() - 1)].libs_to_eliminate;
  if (lowest.empty()) {
    out.push_back("The wheel requires no external shared libraries! :)");
  } else {
    ordered_json libs = ordered_json::object();
    for (const std::string& lib : lowest) {
      auto found = v.external_libs.find(lib);
      libs[lib] =
          found == v.external_libs.end() || found->second.empty() ? ordered_json(nullptr) : ordered_json(found->second);
    }
    out.push_back("The following external shared libraries are required by the wheel: " + libs.dump());
  }
  eliminate_sentences(out, v, "shared library dependencies",
                      [](const python::PolicyBarrier& b) { return support::join(as_list(b.libs_to_eliminate)); });
  eliminate_sentences(out, v, "black-listed symbol dependencies", [](const python::PolicyBarrier& b) {
    std::vector<std::string> from;
    for (const auto& [lib, symbols] : b.blacklisted)
      from.push_back("From " + lib + ": " + support::join(as_list(symbols)));
    return support::join(from, "; ");
  });
  return out;
}

std::string earned_tag(const TagAudit& a) { return a.verdict ? a.verdict->overall_policy().name : ""; }

std::string headline(const TagAudit& a) {
  std::string claims = support::join(a.claimed);
  std::string verdict = a.holds() ? "holds" : "does not hold";
  if (a.pure)
    return a.path + ": a pure wheel (no ELF file" + (a.members.empty() ? "" : " of a known architecture") +
           "): fine on any platform" + (a.claimed.empty() ? "" : "; tagged " + claims + ", which " + verdict);
  std::string earned = a.verdict ? earned_tag(a) : "no platform tag";
  if (!a.is_wheel) return a.path + ": " + earned;
  return a.path + ": " + earned + " (tagged " + claims + ", which " + verdict + ")";
}

void audit_text(std::string& out, const TagAudit& a) {
  out += headline(a) + "\n";
  if (a.error) out += "  " + *a.error + (a.error->back() == '\n' ? "" : "\n");
  if (a.verdict)
    for (const std::string& s : auditwheel_sentences(a)) out += "  " + s + "\n";
  if (a.member_tags.size() > 1)
    for (const TagAudit::MemberTag& m : a.member_tags) out += "  " + m.file + ": " + m.tag + "\n";
  for (const std::string& p : a.problems) out += "  error: " + p + "\n";
  for (const std::string& n : a.notes) out += "  note: " + n + "\n";
}

ordered_json platform_fields(const AbiVerdict& v) {
  ordered_json j;
  j["overall_tag"] = v.overall_policy().name;
  j["sym_tag"] = v.sym_policy().name;
  j["pyfpe"] = v.pyfpe;
  j["ucs2"] = v.ucs2;
  j["unsupported_isa"] = v.unsupported_isa;
  j["versioned_symbols"] = by_library(v.versioned_symbols);
  ordered_json external = ordered_json::object();
  for (const auto& [lib, path] : v.external_libs)
    external[lib] = path.empty() ? ordered_json(nullptr) : ordered_json(path);
  j["external_libs"] = std::move(external);
  ordered_json upgrades = ordered_json::object();
  for (const Policy* p : better_policies(v, v.overall)) {
    const python::PolicyBarrier& b = v.barriers[static_cast<size_t>(p - v.policies.policies.data())];
    ordered_json entry = ordered_json::object();
    if (!b.libs_to_eliminate.empty()) entry["libs_to_eliminate"] = as_list(b.libs_to_eliminate);
    if (!b.blacklisted.empty()) entry["blacklisted_symbols"] = by_library(b.blacklisted);
    if (!entry.empty()) upgrades[p->name] = std::move(entry);
  }
  j["policy_upgrades"] = std::move(upgrades);
  return j;
}

// auditwheel show --json's document (main_show._output_json).
ordered_json auditwheel_document(const TagAudit& a) {
  ordered_json j;
  j["version"] = 1;
  j["wheel"] = a.name;
  if (a.pure) {
    j["pure"] = true;
  } else if (!a.verdict) {
    j["error"] = a.error.value_or("");
  } else {
    j["pure"] = false;
    j.update(platform_fields(*a.verdict));
  }
  return j;
}

ordered_json envdoctor_fields(const TagAudit& a) {
  ordered_json j;
  j["path"] = a.path;
  j["kind"] = a.is_wheel ? "wheel" : "file";
  j["claimed"] = a.claimed;
  j["holds"] = a.holds();
  std::string earned = earned_tag(a);
  j["earned"] = earned.empty() ? ordered_json(nullptr) : ordered_json(earned);
  j["arch"] = a.verdict ? ordered_json(a.arch()) : ordered_json(nullptr);
  j["libc"] =
      a.verdict ? ordered_json(std::string(python::libc_name(a.verdict->policies.libc))) : ordered_json(nullptr);
  ordered_json members = ordered_json::array();
  for (const TagAudit::Member& m : a.members) {
    ordered_json e;
    e["file"] = m.file;
    e["arch"] = m.arch.empty() ? ordered_json(nullptr) : ordered_json(m.arch);
    e["machine"] = m.machine;
    e["python_extension"] = m.python_extension != 0;
    e["tag"] = nullptr;
    for (const TagAudit::MemberTag& t : a.member_tags)
      if (t.file == m.file) e["tag"] = t.tag;
    members.push_back(std::move(e));
  }
  j["members"] = std::move(members);
  ordered_json too_new = ordered_json::object();
  if (a.verdict)
    for (const Policy* p : better_policies(*a.verdict, a.verdict->sym)) {
      const auto& b = a.verdict->barriers[static_cast<size_t>(p - a.verdict->policies.policies.data())];
      if (!b.too_new.empty()) too_new[p->name] = by_library(b.too_new);
    }
  j["too_new"] = std::move(too_new);
  ordered_json ignored = ordered_json::array();
  for (const TagAudit::Ignored& i : a.ignored) ignored.push_back({{"file", i.file}, {"reason", i.reason}});
  j["ignored"] = std::move(ignored);
  j["problems"] = a.problems;
  j["notes"] = a.notes;
  j["auditwheel"] = auditwheel_document(a);
  return j;
}

// auditwheel's document as Python's json.dumps writes it: every character outside ASCII escaped
// (ensure_ascii); bytes that are not UTF-8 become U+FFFD.
std::string ascii_dump(const ordered_json& j) { return j.dump(-1, ' ', true, ordered_json::error_handler_t::replace); }

}  // namespace

std::string render_wheel_tag_text(const std::vector<TagAudit>& audits) {
  std::string out;
  for (const TagAudit& a : audits) audit_text(out, a);
  out += "policy: auditwheel's, from " + std::string(python::AuditwheelPolicies::source()) + "\n";
  return out;
}

std::string render_wheel_tag_json(const std::vector<TagAudit>& audits) {
  std::string out;
  for (const TagAudit& a : audits) out += ascii_dump(auditwheel_document(a)) + "\n";
  return out;
}

std::string render_wheel_tag_envdoctor_json(const std::vector<TagAudit>& audits) {
  ordered_json j;
  j["schema"] = 3;
  j["policy_source"] = std::string(python::AuditwheelPolicies::source());
  ordered_json files = ordered_json::array();
  for (const TagAudit& a : audits) files.push_back(envdoctor_fields(a));
  j["files"] = std::move(files);
  return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace envdoctor::report
