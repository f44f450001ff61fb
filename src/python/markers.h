// PEP 508 dependency specifiers: the Requires-Dist lines of METADATA ("torch (>=2.1) ;
// python_version >= '3.9' and extra == 'cuda'") and the environment markers that decide
// whether one applies to this interpreter.
//
// A marker is parsed once into a tree and evaluated against a MarkerEnvironment (the values
// the interpreter reported). Comparison follows packaging.markers: when the right-hand side
// makes a valid PEP 440 specifier clause ("<op><value>") and the left-hand side parses as a
// version, the clause decides (so python_version >= '3.10' compares 3.9 < 3.10 correctly);
// otherwise the operators compare strings, and "in"/"not in" test substrings. The `extra`
// variable is compared after PEP 503 normalization of both sides, and is "" unless the caller
// names the extras that were requested.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace envdoctor::python {

// implementation_name, implementation_version, os_name, platform_machine,
// platform_python_implementation, platform_release, platform_system, platform_version,
// python_full_version, python_version, sys_platform.
using MarkerEnvironment = std::map<std::string, std::string>;

class Marker {
 public:
  // nullopt with `error` set ("expected a marker variable or a quoted string at 'foo'").
  static std::optional<Marker> parse(std::string_view text, std::string* error);

  // True when the marker holds in `env` for any of `extras` (or, with none, for extra == "").
  // A variable missing from `env` reads as "".
  bool evaluate(const MarkerEnvironment& env, const std::vector<std::string>& extras = {}) const;

  struct Node;

 private:
  std::shared_ptr<const Node> root_;
};

struct Requirement {
  std::string name;                 // as written
  std::vector<std::string> extras;  // as written
  std::string specifier;            // ">=1.0,<2" without the parentheses; "" for any version
  std::string url;                  // after "@", for a direct reference
  std::string marker_text;          // after ";", trimmed; "" for none
  std::optional<Marker> marker;
  std::string text;  // the whole specifier as read

  // True when there is no marker or it holds.
  bool applies(const MarkerEnvironment& env, const std::vector<std::string>& extras = {}) const {
    return !marker || marker->evaluate(env, extras);
  }
};

// Parses one PEP 508 line. nullopt with `error` set on a syntax error.
std::optional<Requirement> parse_requirement(std::string_view text, std::string* error);

// The requirements of `all` that apply to `env` when `extras` are requested.
std::vector<Requirement> applicable_requirements(const std::vector<Requirement>& all, const MarkerEnvironment& env,
                                                 const std::vector<std::string>& extras = {});

}  // namespace envdoctor::python
