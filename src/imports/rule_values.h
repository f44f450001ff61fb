// The values of a rule of data/package_loads.json (docs/package-loads.md, "Values"): named texts
// read from a file of a package, the process's variables or the distribution's version, each
// resolved once, and put into the names and directories a rule's steps look for.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "environment/environment.h"
#include "environment/package_rules.h"

namespace envdoctor::imports {

class RuleValues {
 public:
  // A variable of the process the package runs in (PackageLoads::variable).
  using VariableFn = std::function<std::optional<std::string>(const std::string& name)>;
  // `dist`: the rule's distribution (the opener's, for an opener rule); may be null.
  RuleValues(const environment::Environment& env, const environment::PackageRule& rule,
             const python::Distribution* dist, VariableFn variable);

  // The value of `key` ("cuda", "v.2": its second part): nullopt where it is not known.
  std::optional<std::string> value(const std::string& key);
  // A name or directory with {lib}, {LIB} and the rule's values put in; nullopt where one is not
  // known.
  std::optional<std::string> fill(const std::string& text, const std::string& lib);
  // Every value of the rule that is known, as its whole text ("cuda": "12").
  std::map<std::string, std::string> known();

  static std::string upper(std::string s);

 private:
  const std::vector<std::string>* values(const std::string& name);
  std::optional<std::vector<std::string>> resolve(const environment::ValueSource& s);

  const environment::Environment& env_;
  const environment::PackageRule& rule_;
  const python::Distribution* dist_;
  VariableFn variable_;
  // A value's whole text (0) and its parts (1...); nullopt where it is not known.
  std::map<std::string, std::optional<std::vector<std::string>>> values_;
};

// The file of `dist` whose RECORD path is `rel`; "" when its records list none.
std::string recorded_file(const python::Distribution& dist, const std::string& rel);

}  // namespace envdoctor::imports
