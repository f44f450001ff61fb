#include "python/version.h"

#include <algorithm>
#include <limits>
#include <regex>

namespace envdoctor::python {

namespace {

// PEP 440 Appendix B's VERSION_PATTERN, with the spellings the spec normalizes: "alpha",
// "beta", "pre"/"preview" and "rc" for the pre-release letters; "rev"/"r" and "-N" for post.
const std::regex& version_pattern() {
  static const std::regex re(R"(^\s*v?(?:(\d+)!)?(\d+(?:\.\d+)*))"
                             R"((?:[-_.]?(alpha|beta|preview|pre|rc|a|b|c)[-_.]?(\d+)?)?)"
                             R"((?:-(\d+)|[-_.]?(post|rev|r)[-_.]?(\d+)?)?)"
                             R"((?:[-_.]?(dev)[-_.]?(\d+)?)?)"
                             R"((?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$)",
                             std::regex::icase | std::regex::optimize);
  return re;
}

u64 to_number(const std::string& digits) {
  u64 v = 0;
  for (char c : digits) {
    if (v > (std::numeric_limits<u64>::max() - 9) / 10) return std::numeric_limits<u64>::max();
    v = v * 10 + static_cast<u64>(c - '0');
  }
  return v;
}

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

template <typename T>
int cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int compare_release(const std::vector<u64>& a, const std::vector<u64>& b) {
  // Trailing zeros do not count: 1.0 == 1.0.0.
  for (size_t i = 0; i < std::max(a.size(), b.size()); i++) {
    u64 x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

// packaging's _cmpkey for the pre-release: a dev release of a final version sorts before its
// pre-releases (1.0.dev0 < 1.0a0), and a final version after them.
int pre_rank(const Version& v) {
  if (v.pre_kind) return 1;
  if (!v.post && v.dev) return 0;
  return 2;
}

int compare_local(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  // No local part sorts first; numeric segments sort after alphanumeric ones.
  for (size_t i = 0; i < std::min(a.size(), b.size()); i++) {
    bool na = all_digits(a[i]), nb = all_digits(b[i]);
    if (na != nb) return na ? 1 : -1;
    int c = na ? cmp(to_number(a[i]), to_number(b[i])) : cmp(a[i], b[i]);
    if (c) return c;
  }
  return cmp(a.size(), b.size());
}

}  // namespace

std::optional<Version> Version::parse(std::string_view text) {
  std::string s(text);
  std::smatch m;
  if (s.size() > 256 || !std::regex_match(s, m, version_pattern())) return std::nullopt;
  Version v;
  if (m[1].matched) v.epoch = to_number(m[1]);
  std::string release = m[2];
  for (size_t pos = 0;;) {
    size_t dot = release.find('.', pos);
    v.release.push_back(to_number(release.substr(pos, dot - pos)));
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  if (m[3].matched) {
    std::string l = lower(m[3]);
    v.pre_kind = (l == "a" || l == "alpha") ? 'a' : (l == "b" || l == "beta") ? 'b' : 'c';
    v.pre = m[4].matched ? to_number(m[4]) : 0;
  }
  if (m[5].matched) v.post = to_number(m[5]);
  else if (m[6].matched) v.post = m[7].matched ? to_number(m[7]) : 0;
  if (m[8].matched) v.dev = m[9].matched ? to_number(m[9]) : 0;
  if (m[10].matched) {
    std::string local = lower(m[10]);
    size_t pos = 0;
    for (;;) {
      size_t sep = local.find_first_of("._-", pos);
      v.local.push_back(local.substr(pos, sep - pos));
      if (sep == std::string::npos) break;
      pos = sep + 1;
    }
  }
  return v;
}

Version Version::public_version() const {
  Version v = *this;
  v.local.clear();
  return v;
}

std::string Version::str() const {
  std::string s;
  if (epoch) s += std::to_string(epoch) + "!";
  for (size_t i = 0; i < release.size(); i++) s += (i ? "." : "") + std::to_string(release[i]);
  if (pre_kind) s += (pre_kind == 'c' ? std::string("rc") : std::string(1, pre_kind)) + std::to_string(pre);
  if (post) s += ".post" + std::to_string(*post);
  if (dev) s += ".dev" + std::to_string(*dev);
  for (size_t i = 0; i < local.size(); i++) s += (i ? "." : "+") + local[i];
  return s;
}

int compare(const Version& a, const Version& b) {
  if (int c = cmp(a.epoch, b.epoch)) return c;
  if (int c = compare_release(a.release, b.release)) return c;
  if (int c = cmp(pre_rank(a), pre_rank(b))) return c;
  if (a.pre_kind && b.pre_kind) {
    if (int c = cmp(a.pre_kind, b.pre_kind)) return c;
    if (int c = cmp(a.pre, b.pre)) return c;
  }
  if (int c = cmp(a.post.has_value(), b.post.has_value())) return c;
  if (a.post && b.post)
    if (int c = cmp(*a.post, *b.post)) return c;
  if (int c = cmp(!a.dev.has_value(), !b.dev.has_value())) return c;  // no dev sorts last
  if (a.dev && b.dev)
    if (int c = cmp(*a.dev, *b.dev)) return c;
  return compare_local(a.local, b.local);
}

std::optional<std::vector<SpecifierClause>> parse_specifier(std::string_view text) {
  static const char* const kOps[] = {"===", "~=", "==", "!=", "<=", ">=", "<", ">"};
  std::vector<SpecifierClause> clauses;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view part = text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos);
    size_t b = part.find_first_not_of(" \t");
    if (b == std::string_view::npos) {
      if (comma == std::string_view::npos && clauses.empty() && text.find_first_not_of(" \t") == text.npos)
        return clauses;  // an empty specifier: any version
      return std::nullopt;
    }
    part = part.substr(b);
    SpecifierClause clause;
    for (const char* op : kOps) {
      if (part.starts_with(op)) {
        clause.op = op;
        break;
      }
    }
    if (clause.op.empty()) return std::nullopt;
    std::string_view v = part.substr(clause.op.size());
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    clause.version = std::string(v);
    if (clause.version.empty()) return std::nullopt;
    if (clause.op != "===") {
      bool wildcard = v.ends_with(".*");
      if (wildcard && clause.op != "==" && clause.op != "!=") return std::nullopt;
      auto parsed = Version::parse(wildcard ? v.substr(0, v.size() - 2) : v);
      if (!parsed) return std::nullopt;
      if (!parsed->local.empty() && clause.op != "==" && clause.op != "!=") return std::nullopt;
      if (clause.op == "~=" && parsed->release.size() < 2) return std::nullopt;
    }
    clauses.push_back(std::move(clause));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return clauses;
}

namespace {

bool prefix_match(const Version& candidate, const Version& prefix) {
  if (candidate.epoch != prefix.epoch) return false;
  for (size_t i = 0; i < prefix.release.size(); i++) {
    u64 c = i < candidate.release.size() ? candidate.release[i] : 0;
    if (c != prefix.release[i]) return false;
  }
  return true;
}

bool same_base(const Version& a, const Version& b) {
  return a.epoch == b.epoch && compare_release(a.release, b.release) == 0;
}

}  // namespace

bool satisfies(std::string_view candidate_text, const SpecifierClause& clause) {
  if (clause.op == "===") return lower(std::string(candidate_text)) == lower(clause.version);
  auto candidate = Version::parse(candidate_text);
  if (!candidate) return false;
  std::string_view spec_text = clause.version;
  bool wildcard = spec_text.ends_with(".*");
  auto spec = Version::parse(wildcard ? spec_text.substr(0, spec_text.size() - 2) : spec_text);
  if (!spec) return false;
  if (clause.op == "==" || clause.op == "!=") {
    bool equal;
    if (wildcard) equal = prefix_match(*candidate, *spec);
    else if (spec->local.empty()) equal = compare(candidate->public_version(), *spec) == 0;
    else equal = compare(*candidate, *spec) == 0;
    return clause.op == "==" ? equal : !equal;
  }
  Version pub = candidate->public_version();
  int c = compare(pub, *spec);
  if (clause.op == "<=") return c <= 0;
  if (clause.op == ">=") return c >= 0;
  if (clause.op == "<") {
    // PEP 440: "<V" excludes pre-releases of V itself unless V is one.
    return c < 0 && !(!spec->is_prerelease() && candidate->is_prerelease() && same_base(*candidate, *spec));
  }
  if (clause.op == ">") {
    // ">V" excludes post-releases and local versions of V unless V is a post-release.
    if (c <= 0) return false;
    if (!spec->is_postrelease() && candidate->is_postrelease() && same_base(*candidate, *spec)) return false;
    if (!candidate->local.empty() && same_base(*candidate, *spec)) return false;
    return true;
  }
  if (clause.op == "~=") {
    Version prefix = *spec;
    prefix.release.pop_back();
    return c >= 0 && prefix_match(*candidate, prefix);
  }
  return false;
}

}  // namespace envdoctor::python
