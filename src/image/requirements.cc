#include "image/requirements.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>

namespace envdoctor::image {

namespace {

constexpr int kTrue = 1, kFalse = 0, kInvalid = -1, kUnknown = 2;

// The operators in dsl.c's order, which decides a match (see evaluate_condition).
constexpr const char* kOperators[] = {"=", "!=", "<", "<=", ">", ">="};

bool equal_no_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Go's strconv.ParseBool, true side (anything else, errors included, is false).
bool parse_bool_true(const std::string& s) {
  return s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True";
}

// golang.org/x/mod/semver's MajorMinor of "v" + version ("12.4.1" -> "12.4", "12" -> "12.0"),
// nullopt where semver.IsValid would refuse it.
std::optional<std::string> semver_major_minor(std::string v) {
  if (!v.empty() && v[0] == 'v') v.erase(0, 1);
  size_t end = v.find_first_of("-+");
  std::string core = v.substr(0, end);
  std::vector<std::string> parts;
  for (size_t pos = 0;;) {
    size_t dot = core.find('.', pos);
    parts.push_back(core.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos));
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  if (parts.size() > 3 || (end != std::string::npos && parts.size() != 3)) return std::nullopt;
  for (const std::string& p : parts)
    if (p.empty() || p.find_first_not_of("0123456789") != std::string::npos || (p.size() > 1 && p[0] == '0'))
      return std::nullopt;
  return parts[0] + "." + (parts.size() > 1 ? parts[1] : "0");
}

// One condition, "NAME OP VALUE", for one device (or none), as dsl.c's evaluate_rule parses it.
int evaluate_condition(const std::string& expr, const NodeFacts& node, const NodeFacts::Device* device) {
  size_t n = expr.find_first_of("<>=!");
  if (n == 0 || n == std::string::npos) return kInvalid;
  size_t op_len = 0;
  while (n + op_len < expr.size() && std::strchr("<>=!", expr[n + op_len])) ++op_len;
  // strncmp(ptr, op, n): the first operator whose first op_len characters match ("!" is "!=").
  const char* op = nullptr;
  for (const char* candidate : kOperators)
    if (std::strncmp(expr.c_str() + n, candidate, op_len) == 0) {
      op = candidate;
      break;
    }
  std::string name = expr.substr(0, n), value = expr.substr(n + op_len);
  if (!op || value.empty()) return kInvalid;
  auto version_rule = [&](const std::optional<std::string>& have) {
    return have ? compare_versions(*have, op, value) : kTrue;
  };
  if (equal_no_case(name, "cuda")) {
    if (!node.driver) return kTrue;
    if (node.cuda) return compare_versions(*node.cuda, op, value);
    if (!node.cuda_below) return kUnknown;  // a driver newer than this tool's tables
    // The driver's CUDA is older than cuda_below: decided only where the value lies at or past it.
    int at_or_past = compare_versions(value, ">=", *node.cuda_below);
    if (at_or_past < 0) return kInvalid;
    std::string o = op;
    if (at_or_past == 1 && (o == ">=" || o == ">" || o == "=")) return kFalse;
    if (at_or_past == 1 && (o == "<" || o == "<=" || o == "!=")) return kTrue;
    return compare_versions(value, "<", "0") < 0 ? kInvalid : kUnknown;
  }
  if (equal_no_case(name, "driver")) return version_rule(node.driver);
  if (equal_no_case(name, "arch")) return device ? compare_versions(device->arch, op, value) : kTrue;
  if (equal_no_case(name, "brand")) {
    if (!device || !device->brand) return kTrue;
    std::string o = op;
    if (o == "=") return equal_no_case(*device->brand, value) ? kTrue : kFalse;
    if (o == "!=") return equal_no_case(*device->brand, value) ? kFalse : kTrue;
    return kInvalid;
  }
  return kInvalid;
}

std::vector<std::string> split_keep_empty(const std::string& s, char sep) {
  std::vector<std::string> out;
  for (size_t pos = 0;;) {
    size_t at = s.find(sep, pos);
    out.push_back(s.substr(pos, at == std::string::npos ? std::string::npos : at - pos));
    if (at == std::string::npos) return out;
    pos = at + 1;
  }
}

struct Evaluation {
  int result = kTrue;  // kTrue, kFalse, kInvalid, kUnknown
  std::string failed;  // the condition that failed last
};

// dsl_evaluate: alternatives separated by spaces, each a list of conditions separated by commas.
Evaluation evaluate_predicate(const std::string& predicate, const NodeFacts& node, const NodeFacts::Device* device) {
  Evaluation ev;
  int ret = kTrue;
  bool unknown = false;
  for (const std::string& alternative : split_keep_empty(predicate, ' ')) {
    if (alternative.empty()) continue;
    bool all = true;  // every condition of the alternative held (dsl.c: and_expr == NULL)
    bool maybe = false;
    for (const std::string& condition : split_keep_empty(alternative, ',')) {
      if (condition.empty()) continue;
      int r = evaluate_condition(condition, node, device);
      if (r == kInvalid) return {kInvalid, condition};
      if (r == kUnknown) {
        maybe = true;
        continue;
      }
      ret = r;
      if (r == kFalse) {
        ev.failed = condition;
        all = false;
        break;
      }
    }
    if (all && !maybe) return {ret, ""};
    if (all && maybe) unknown = true;
  }
  if (unknown) return {kUnknown, ev.failed};
  ev.result = ret == kTrue ? kTrue : kFalse;
  return ev;
}

// The toolkit's message (dsl.c): the predicate's first space-separated term, whatever failed.
std::string unsatisfied_message(const std::string& predicate) {
  std::string first = predicate.substr(0, predicate.find(' '));
  std::string text = "nvidia-container-cli: requirement error: unsatisfied condition: " + first;
  if (first.compare(0, 6, "cuda>=") == 0)
    text += ", please update your driver to a newer version, or use an earlier cuda container";
  return text;
}

}  // namespace

int compare_versions(const std::string& a, const std::string& op_text, const std::string& b) {
  static constexpr const char* kDigits = "0123456789.";
  if (a.find_first_not_of(kDigits) != std::string::npos || b.find_first_not_of(kDigits) != std::string::npos) return -1;
  std::string_view op = op_text;
  const char* v1 = a.c_str();
  const char* v2 = b.c_str();
  auto number = [](const char*& p, unsigned long long* out) {
    if (!std::isdigit(static_cast<unsigned char>(*p))) return false;
    unsigned long long n = 0;
    for (; std::isdigit(static_cast<unsigned char>(*p)); ++p) {
      if (n > (~0ULL - 9) / 10) return false;  // strtoumax's UINTMAX_MAX
      n = n * 10 + static_cast<unsigned long long>(*p - '0');
    }
    *out = n;
    return true;
  };
  while (*v1 && *v2) {
    unsigned long long n1, n2;
    if (!number(v1, &n1) || !number(v2, &n2)) return -1;
    if (n1 != n2) {
      if (op == "=") return 0;
      if (op == "!=") return 1;
      if (op == "<" || op == "<=") return n1 < n2;
      return n1 > n2;
    }
    while (*v1 == '.') ++v1;
    while (*v2 == '.') ++v2;
  }
  while (*v1 == '.' || *v1 == '0') ++v1;
  while (*v2 == '.' || *v2 == '0') ++v2;
  if (op == "!=") return *v1 != '\0' || *v2 != '\0';
  if (op == "=" || op == "<=" || op == ">=") {
    if (!*v1 && !*v2) return 1;
    if (op == "=") return 0;
  }
  if (op == "<" || op == "<=") return !*v1 && *v2;
  if (op == ">" || op == ">=") return *v1 && !*v2;
  return -1;
}

std::vector<std::pair<std::string, std::string>> container_requirements(
    const std::vector<std::pair<std::string, std::string>>& env, bool* disabled) {
  std::map<std::string, std::string> vars;
  for (const auto& [k, v] : env) vars[k] = v;
  std::vector<std::pair<std::string, std::string>> out;
  auto disable = vars.find("NVIDIA_DISABLE_REQUIRE");
  *disabled = disable != vars.end() && parse_bool_true(disable->second);
  if (*disabled) return out;
  for (const auto& [k, v] : vars)
    if (k.starts_with("NVIDIA_REQUIRE_") && !k.starts_with("NVIDIA_REQUIRE_JETPACK")) out.emplace_back(k, v);
  auto cuda_version = vars.find("CUDA_VERSION");
  auto require_cuda = vars.find("NVIDIA_REQUIRE_CUDA");
  bool legacy = cuda_version != vars.end() && !cuda_version->second.empty() &&
                (require_cuda == vars.end() || require_cuda->second.empty());
  if (legacy)
    if (std::optional<std::string> mm = semver_major_minor(cuda_version->second))
      out.emplace_back("CUDA_VERSION", "cuda>=" + *mm);
  return out;
}

RequirementVerdict evaluate_requirements(const std::vector<std::pair<std::string, std::string>>& env,
                                         const NodeFacts& node) {
  RequirementVerdict verdict;
  std::vector<std::pair<std::string, std::string>> reqs = container_requirements(env, &verdict.disabled);
  // configure.c: per visible device, else once without a device.
  std::vector<const NodeFacts::Device*> devices;
  for (const NodeFacts::Device& d : node.devices) devices.push_back(&d);
  if (devices.empty()) devices.push_back(nullptr);
  for (const NodeFacts::Device* device : devices) {
    for (const auto& [variable, predicate] : reqs) {
      Evaluation ev = evaluate_predicate(predicate, node, device);
      if (ev.result == kTrue) continue;
      verdict.variable = variable;
      verdict.requirement = predicate;
      verdict.failed_condition = ev.failed;
      if (ev.result == kUnknown) {
        verdict.undecided = true;
        continue;
      }
      verdict.undecided = false;
      verdict.refused = true;
      verdict.message = ev.result == kInvalid ? "nvidia-container-cli: requirement error: invalid expression"
                                              : unsatisfied_message(predicate);
      return verdict;
    }
  }
  return verdict;
}

}  // namespace envdoctor::image
