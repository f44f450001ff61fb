#include "imports/rule_values.h"

#include <cctype>
#include <regex>

#include "python/version.h"

namespace envdoctor::imports {

using environment::ValueSource;

std::string recorded_file(const python::Distribution& dist, const std::string& rel) {
  for (const python::RecordEntry& e : dist.record)
    if (e.path == rel) return e.resolved.string();
  return "";
}

namespace {

// The first match of `regex` in `text`: its group 1 (its whole match where it has none), then its
// groups; nullopt where it does not match.
std::optional<std::vector<std::string>> matched(const std::string& text, const std::string& regex) {
  std::smatch m;
  try {
    if (!std::regex_search(text, m, std::regex(regex))) return std::nullopt;
  } catch (const std::regex_error&) {
    return std::nullopt;
  }
  std::vector<std::string> out{m.size() > 1 ? m[1].str() : m[0].str()};
  for (size_t i = 1; i < m.size(); ++i) out.push_back(m[i].str());
  return out;
}

}  // namespace

RuleValues::RuleValues(const environment::Environment& env, const environment::PackageRule& rule,
                       const python::Distribution* dist, VariableFn variable)
    : env_(env), rule_(rule), dist_(dist), variable_(std::move(variable)) {}

std::map<std::string, std::string> RuleValues::known() {
  std::map<std::string, std::string> out;
  for (const auto& [name, sources] : rule_.values)
    if (const std::vector<std::string>* parts = values(name); parts && !parts->empty()) out[name] = parts->front();
  return out;
}

// The value of `key` ("cuda", "v.2"): nullopt where it is not known.
std::optional<std::string> RuleValues::value(const std::string& key) {
  std::string name = key.substr(0, key.find('.'));
  size_t part = 0;
  if (key.size() > name.size()) {
    std::string digits = key.substr(name.size() + 1);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    part = std::stoul(digits);
  }
  const std::vector<std::string>* parts = values(name);
  if (!parts || part >= parts->size() || (*parts)[part].empty()) return std::nullopt;
  return (*parts)[part];
}

// A value's whole text (0) and its parts (1...), resolved once.
const std::vector<std::string>* RuleValues::values(const std::string& name) {
  auto cached = values_.find(name);
  if (cached != values_.end()) return cached->second ? &*cached->second : nullptr;
  std::optional<std::vector<std::string>>& out = values_[name];
  for (const auto& [key, sources] : rule_.values) {
    if (key != name) continue;
    for (const ValueSource& s : sources)
      if ((out = resolve(s))) break;
  }
  return out ? &*out : nullptr;
}

std::optional<std::vector<std::string>> RuleValues::resolve(const ValueSource& s) {
  auto split = [](const std::string& text) {
    std::vector<std::string> out{text};
    size_t at = 0;
    while (at <= text.size()) {
      size_t dot = text.find('.', at);
      out.push_back(text.substr(at, dot == std::string::npos ? std::string::npos : dot - at));
      if (dot == std::string::npos) break;
      at = dot + 1;
    }
    return out;
  };
  switch (s.kind) {
    case ValueSource::Kind::kVariable: {
      std::optional<std::string> v = variable_(s.name);
      if (!v || v->empty()) return std::nullopt;
      return s.match.empty() ? split(*v) : matched(*v, s.match);
    }
    case ValueSource::Kind::kVersion: {
      if (!dist_) return std::nullopt;
      std::optional<python::Version> v = python::Version::parse(dist_->version);
      if (!v) return std::nullopt;
      std::vector<std::string> out{dist_->version};
      for (u64 n : v->release) out.push_back(std::to_string(n));
      return out;
    }
    case ValueSource::Kind::kFile: {
      const python::Distribution* d = s.package.empty() ? dist_ : env_.inventory.find(s.package);
      if (!d) return std::nullopt;
      std::string path = recorded_file(*d, s.name);
      if (path.empty()) return std::nullopt;
      return matched(env_.files.read_text(path, 1 << 20), s.match);
    }
  }
  return std::nullopt;
}

// A name or directory with {lib}, {LIB} and the rule's values put in; nullopt where one is not
// known.
std::optional<std::string> RuleValues::fill(const std::string& text, const std::string& lib) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') {
      out += text[i];
      continue;
    }
    size_t close = text.find('}', i);
    if (close == std::string::npos) return std::nullopt;
    std::string key = text.substr(i + 1, close - i - 1);
    std::optional<std::string> v = key == "lib"   ? std::optional<std::string>(lib)
                                   : key == "LIB" ? std::optional<std::string>(upper(lib))
                                                  : value(key);
    if (!v) return std::nullopt;
    out += *v;
    i = close;
  }
  return out;
}

std::string RuleValues::upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace envdoctor::imports
