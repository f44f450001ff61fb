#include "python/markers.h"

#include "python/metadata_file.h"
#include "python/version.h"

namespace envdoctor::python {

struct Marker::Node {
  enum Kind { kAnd, kOr, kCompare } kind = kCompare;
  std::vector<std::shared_ptr<const Node>> children;
  // kCompare: each side a variable name or a string literal.
  bool lhs_is_var = false, rhs_is_var = false;
  std::string lhs, op, rhs;
};

namespace {

using NodePtr = std::shared_ptr<const Marker::Node>;

// Marker variables, with the dotted spellings PEP 345 used and packaging still accepts.
std::optional<std::string> canonical_variable(std::string_view name) {
  static const std::map<std::string_view, std::string_view> kAliases = {
      {"os.name", "os_name"},
      {"sys.platform", "sys_platform"},
      {"platform.version", "platform_version"},
      {"platform.machine", "platform_machine"},
      {"platform.python_implementation", "platform_python_implementation"},
      {"python_implementation", "platform_python_implementation"},
  };
  static const char* const kNames[] = {"implementation_name",
                                       "implementation_version",
                                       "os_name",
                                       "platform_machine",
                                       "platform_python_implementation",
                                       "platform_release",
                                       "platform_system",
                                       "platform_version",
                                       "python_full_version",
                                       "python_version",
                                       "sys_platform",
                                       "extra"};
  for (const char* n : kNames)
    if (name == n) return std::string(name);
  if (auto it = kAliases.find(name); it != kAliases.end()) return std::string(it->second);
  return std::nullopt;
}

class MarkerParser {
 public:
  MarkerParser(std::string_view text, std::string* error) : s_(text), error_(error) {}

  NodePtr parse() {
    NodePtr n = parse_or();
    skip_ws();
    if (n && pos_ != s_.size()) return fail("unexpected text");
    return n;
  }

 private:
  NodePtr parse_or() { return parse_chain(Marker::Node::kOr, "or"); }
  NodePtr parse_and() { return parse_chain(Marker::Node::kAnd, "and"); }

  NodePtr parse_chain(Marker::Node::Kind kind, std::string_view keyword) {
    NodePtr first = kind == Marker::Node::kOr ? parse_and() : parse_atom();
    if (!first) return nullptr;
    auto node = std::make_shared<Marker::Node>();
    node->kind = kind;
    node->children.push_back(first);
    while (eat_keyword(keyword)) {
      NodePtr next = kind == Marker::Node::kOr ? parse_and() : parse_atom();
      if (!next) return nullptr;
      node->children.push_back(next);
    }
    if (node->children.size() == 1) return first;
    return node;
  }

  NodePtr parse_atom() {
    skip_ws();
    if (peek() == '(') {
      pos_++;
      NodePtr inner = parse_or();
      if (!inner) return nullptr;
      skip_ws();
      if (peek() != ')') return fail("expected ')'");
      pos_++;
      return inner;
    }
    auto node = std::make_shared<Marker::Node>();
    if (!parse_value(&node->lhs, &node->lhs_is_var)) return nullptr;
    if (!parse_op(&node->op)) return nullptr;
    if (!parse_value(&node->rhs, &node->rhs_is_var)) return nullptr;
    return node;
  }

  bool parse_value(std::string* out, bool* is_var) {
    skip_ws();
    char q = peek();
    if (q == '\'' || q == '"') {
      size_t end = s_.find(q, pos_ + 1);
      if (end == std::string_view::npos) return fail_bool("unterminated string");
      *out = std::string(s_.substr(pos_ + 1, end - pos_ - 1));
      *is_var = false;
      pos_ = end + 1;
      return true;
    }
    size_t start = pos_;
    while (pos_ < s_.size() && (isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '.'))
      pos_++;
    auto var = canonical_variable(s_.substr(start, pos_ - start));
    if (!var) {
      pos_ = start;
      return fail_bool("expected a marker variable or a quoted string");
    }
    *out = *var;
    *is_var = true;
    return true;
  }

  bool parse_op(std::string* op) {
    skip_ws();
    static const char* const kOps[] = {"===", "==", "!=", "<=", ">=", "~=", "<", ">"};
    for (const char* o : kOps) {
      if (s_.substr(pos_).starts_with(o)) {
        *op = o;
        pos_ += std::string_view(o).size();
        return true;
      }
    }
    if (eat_keyword("in")) {
      *op = "in";
      return true;
    }
    size_t save = pos_;
    if (eat_keyword("not") && eat_keyword("in")) {
      *op = "not in";
      return true;
    }
    pos_ = save;
    return fail_bool("expected a marker operator");
  }

  bool eat_keyword(std::string_view kw) {
    skip_ws();
    if (!s_.substr(pos_).starts_with(kw)) return false;
    size_t after = pos_ + kw.size();
    if (after < s_.size() && (isalnum(static_cast<unsigned char>(s_[after])) || s_[after] == '_')) return false;
    pos_ = after;
    return true;
  }

  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) pos_++;
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }

  NodePtr fail(const std::string& what) {
    fail_bool(what);
    return nullptr;
  }
  bool fail_bool(const std::string& what) {
    if (error_ && error_->empty()) *error_ = what + " at '" + std::string(s_.substr(std::min(pos_, s_.size()))) + "'";
    return false;
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string* error_;
};

bool compare_strings(const std::string& lhs, const std::string& op, const std::string& rhs) {
  if (op == "==") return lhs == rhs;
  if (op == "!=") return lhs != rhs;
  if (op == "<") return lhs < rhs;
  if (op == "<=") return lhs <= rhs;
  if (op == ">") return lhs > rhs;
  if (op == ">=") return lhs >= rhs;
  if (op == "===") return lhs == rhs;
  return false;  // "~=" between non-versions: packaging raises UndefinedComparison
}

bool evaluate_compare(const Marker::Node& n, const MarkerEnvironment& env, const std::string& extra) {
  auto value = [&](const std::string& text, bool is_var) -> std::string {
    if (!is_var) return text;
    if (text == "extra") return extra;
    auto it = env.find(text);
    return it == env.end() ? std::string() : it->second;
  };
  std::string lhs = value(n.lhs, n.lhs_is_var), rhs = value(n.rhs, n.rhs_is_var);
  // packaging >= 22 normalizes both sides of an `extra` comparison (PEP 685).
  if ((n.lhs_is_var && n.lhs == "extra") || (n.rhs_is_var && n.rhs == "extra")) {
    lhs = normalize_name(lhs);
    rhs = normalize_name(rhs);
  }
  if (n.op == "in") return rhs.find(lhs) != std::string::npos;
  if (n.op == "not in") return rhs.find(lhs) == std::string::npos;
  if (auto clauses = parse_specifier(n.op + rhs);
      clauses && clauses->size() == 1 && (n.op == "===" || Version::parse(lhs)))
    return satisfies(lhs, clauses->front());
  return compare_strings(lhs, n.op, rhs);
}

bool evaluate_node(const Marker::Node& n, const MarkerEnvironment& env, const std::string& extra) {
  switch (n.kind) {
    case Marker::Node::kAnd:
      for (const NodePtr& c : n.children)
        if (!evaluate_node(*c, env, extra)) return false;
      return true;
    case Marker::Node::kOr:
      for (const NodePtr& c : n.children)
        if (evaluate_node(*c, env, extra)) return true;
      return false;
    case Marker::Node::kCompare: return evaluate_compare(n, env, extra);
  }
  return false;
}

bool is_name_char(char c) { return isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; }

}  // namespace

std::optional<Marker> Marker::parse(std::string_view text, std::string* error) {
  std::string local_error;
  MarkerParser parser(text, &local_error);
  NodePtr root = parser.parse();
  if (!root) {
    if (error) *error = local_error;
    return std::nullopt;
  }
  Marker m;
  m.root_ = root;
  return m;
}

bool Marker::evaluate(const MarkerEnvironment& env, const std::vector<std::string>& extras) const {
  if (!root_) return true;
  if (extras.empty()) return evaluate_node(*root_, env, "");
  for (const std::string& e : extras)
    if (evaluate_node(*root_, env, e)) return true;
  return false;
}

std::optional<Requirement> parse_requirement(std::string_view text, std::string* error) {
  auto fail = [&](const std::string& what) -> std::optional<Requirement> {
    if (error) *error = what + " in '" + std::string(text) + "'";
    return std::nullopt;
  };
  Requirement r;
  r.text = std::string(trim(text));
  std::string_view s = r.text;
  size_t pos = 0;
  while (pos < s.size() && is_name_char(s[pos])) pos++;
  r.name = std::string(s.substr(0, pos));
  if (r.name.empty() || !isalnum(static_cast<unsigned char>(r.name.front())) ||
      !isalnum(static_cast<unsigned char>(r.name.back())))
    return fail("bad project name");
  auto skip_ws = [&] {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) pos++;
  };
  skip_ws();
  if (pos < s.size() && s[pos] == '[') {
    size_t close = s.find(']', pos);
    if (close == std::string_view::npos) return fail("unterminated extras");
    std::string_view list = s.substr(pos + 1, close - pos - 1);
    for (size_t p = 0; p <= list.size();) {
      size_t comma = list.find(',', p);
      std::string_view e = trim(list.substr(p, comma == list.npos ? list.npos : comma - p));
      if (!e.empty()) r.extras.emplace_back(e);
      else if (comma != list.npos || !r.extras.empty()) return fail("empty extra");
      if (comma == list.npos) break;
      p = comma + 1;
    }
    pos = close + 1;
    skip_ws();
  }
  // The marker starts at the first ';' (for a URL, PEP 508 wants whitespace before it).
  size_t semi = s.find(';', pos);
  std::string_view middle = trim(s.substr(pos, semi == s.npos ? s.npos : semi - pos));
  if (!middle.empty() && middle.front() == '@') {
    std::string_view url = trim(middle.substr(1));
    if (semi != s.npos && (semi == 0 || (s[semi - 1] != ' ' && s[semi - 1] != '\t')))
      return fail("a URL requirement needs whitespace before ';'");
    r.url = std::string(url);
    if (r.url.empty()) return fail("empty URL");
  } else {
    if (!middle.empty() && middle.front() == '(') {
      if (middle.back() != ')') return fail("unbalanced parentheses");
      middle = trim(middle.substr(1, middle.size() - 2));
    }
    if (!parse_specifier(middle)) return fail("bad version specifier '" + std::string(middle) + "'");
    r.specifier = std::string(middle);
  }
  if (semi != s.npos) {
    r.marker_text = std::string(trim(s.substr(semi + 1)));
    std::string marker_error;
    r.marker = Marker::parse(r.marker_text, &marker_error);
    if (!r.marker) return fail("bad marker: " + marker_error);
  }
  return r;
}

std::vector<Requirement> applicable_requirements(const std::vector<Requirement>& all, const MarkerEnvironment& env,
                                                 const std::vector<std::string>& extras) {
  std::vector<Requirement> out;
  for (const Requirement& r : all)
    if (r.applies(env, extras)) out.push_back(r);
  return out;
}

}  // namespace envdoctor::python
