#include "image/shell_environment.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "support/root.h"

namespace envdoctor::image {

namespace {

namespace fs = std::filesystem;

bool is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool ends_statement(char c) { return c == '\n' || c == ';'; }

// POSIX sh's reserved words that open and close compound commands (XCU 2.4).
bool opens_block(const std::string& w) {
  return w == "if" || w == "case" || w == "for" || w == "while" || w == "until" || w == "{";
}
bool closes_block(const std::string& w) { return w == "fi" || w == "esac" || w == "done" || w == "}"; }

// One script read statement by statement: a statement ends at an unquoted newline or `;`.
class Script {
 public:
  Script(const std::string& name, const std::string& text, Environment& env, std::vector<std::string>* skipped)
      : name_(name), s_(text), env_(env), skipped_(skipped) {}

  void run() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (is_blank(c) || ends_statement(c) || c == '&' || c == '|') {
        line_ += c == '\n';
        ++i_;
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        statement();
      }
    }
  }

 private:
  // The next word as written (quotes kept), for the reserved words: "" at the statement's end.
  std::string raw_word() {
    size_t j = i_;
    while (j < s_.size() && !is_blank(s_[j]) && !ends_statement(s_[j])) ++j;
    return s_.substr(i_, j - i_);
  }

  // To the end of the statement, past what is quoted.
  void skip_statement() {
    for (char quote = 0; i_ < s_.size(); ++i_) {
      char c = s_[i_];
      if (c == '\\' && quote != '\'') {
        line_ += i_ + 1 < s_.size() && s_[i_ + 1] == '\n';
        ++i_;
      } else if (quote) {
        if (c == quote) quote = 0;
        line_ += c == '\n';
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (ends_statement(c)) {
        return;
      }
    }
  }

  void statement() {
    std::string first = raw_word();
    if (opens_block(first)) {
      ++depth_;
      return skip_statement();
    }
    if (closes_block(first)) {
      depth_ = std::max(0, depth_ - 1);
      return skip_statement();
    }
    if (first == "then" || first == "do" || first == "else") {  // a command follows, inside the block
      i_ += first.size();
      return;
    }
    if (first.size() > 2 && first.ends_with("()")) {  // a function: its body is a block
      ++depth_;
      i_ += first.size();
      while (i_ < s_.size() && is_blank(s_[i_])) ++i_;
      if (i_ < s_.size() && s_[i_] == '{') ++i_;
      else --depth_;  // its `{` comes on a line of its own
      return skip_statement();
    }
    if (depth_ > 0) return skip_statement();
    if (first == "export" || first == "readonly") {
      i_ += first.size();
      return assignments(true);
    }
    if (first == "unset") {
      i_ += first.size();
      return unset();
    }
    assignments(false);
  }

  // NAME=VALUE..., applied when the statement is nothing else (`A=1 cmd` sets A for cmd alone).
  void assignments(bool exported) {
    Environment set;
    size_t start_line = line_;
    for (;;) {
      while (i_ < s_.size() && is_blank(s_[i_])) ++i_;
      if (i_ >= s_.size() || ends_statement(s_[i_]) || s_[i_] == '#') break;
      size_t j = i_;
      while (j < s_.size() && is_name_char(s_[j])) ++j;
      bool assignment = j > i_ && is_name_start(s_[i_]) && j < s_.size() && s_[j] == '=';
      if (!assignment) {
        // `export NAME` and `export -p` change no value; anything else is a command.
        bool plain_name = exported && (j == s_.size() || is_blank(s_[j]) || ends_statement(s_[j]));
        if (exported && (plain_name || s_[i_] == '-')) {
          i_ = j > i_ ? j : i_ + 1;
          while (i_ < s_.size() && !is_blank(s_[i_]) && !ends_statement(s_[i_])) ++i_;
          continue;
        }
        return skip_statement();
      }
      std::string name = s_.substr(i_, j - i_);
      i_ = j + 1;
      std::string value, why;
      if (!word(value, 0, &why)) {
        skip(start_line, name + " left out: " + why);
        return skip_statement();
      }
      set.emplace_back(name, value);
    }
    for (auto& [k, v] : set) assign(k, v);
  }

  void unset() {
    for (;;) {
      while (i_ < s_.size() && is_blank(s_[i_])) ++i_;
      if (i_ >= s_.size() || ends_statement(s_[i_]) || s_[i_] == '#') return;
      size_t j = i_;
      while (j < s_.size() && !is_blank(s_[j]) && !ends_statement(s_[j])) ++j;
      std::string name = s_.substr(i_, j - i_);
      i_ = j;
      std::erase_if(env_, [&](const auto& kv) { return kv.first == name; });
    }
  }

  // A word from i_: to a blank or the statement's end, or to `stop` (`}` of ${VAR:-word}).
  bool word(std::string& out, char stop, std::string* why) {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (stop ? c == stop : (is_blank(c) || ends_statement(c))) return true;
      if (c == '\'') {
        size_t end = s_.find('\'', i_ + 1);
        if (end == std::string::npos) return fail(why, "an unterminated quote");
        out += s_.substr(i_ + 1, end - i_ - 1);
        i_ = end + 1;
      } else if (c == '"') {
        ++i_;
        if (!double_quoted(out, why)) return false;
      } else if (c == '\\') {
        if (i_ + 1 >= s_.size()) return fail(why, "a backslash at the end");
        if (s_[i_ + 1] != '\n') out += s_[i_ + 1];
        i_ += 2;
      } else if (c == '$') {
        if (!expand(out, why)) return false;
      } else if (c == '`') {
        return fail(why, "a command substitution");
      } else if (!stop && (c == '|' || c == '&' || c == '<' || c == '>' || c == '(' || c == ')')) {
        return fail(why, "a command");
      } else {
        out += c;
        ++i_;
      }
    }
    return !stop || fail(why, "an unterminated ${");
  }

  bool double_quoted(std::string& out, std::string* why) {
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_];
      if (c == '\\' && i_ + 1 < s_.size() && std::string_view("$`\"\\\n").find(s_[i_ + 1]) != std::string::npos) {
        if (s_[i_ + 1] != '\n') out += s_[i_ + 1];
        i_ += 2;
      } else if (c == '$') {
        if (!expand(out, why)) return false;
      } else if (c == '`') {
        return fail(why, "a command substitution");
      } else {
        line_ += c == '\n';
        out += c;
        ++i_;
      }
    }
    if (i_ >= s_.size()) return fail(why, "an unterminated quote");
    ++i_;
    return true;
  }

  // At `$`: $NAME, ${NAME}, ${NAME:-word}, ${NAME-word}, ${NAME:+word}, ${NAME+word}.
  bool expand(std::string& out, std::string* why) {
    ++i_;
    if (i_ >= s_.size()) {
      out += '$';
      return true;
    }
    bool braced = s_[i_] == '{';
    if (!braced && !is_name_start(s_[i_])) {
      if (s_[i_] == '(') return fail(why, "a command substitution");
      if (std::string_view("0123456789@*#?$!-").find(s_[i_]) != std::string::npos)
        return fail(why, std::string("the shell parameter $") + s_[i_]);
      out += '$';
      return true;
    }
    i_ += braced;
    size_t j = i_;
    while (j < s_.size() && is_name_char(s_[j])) ++j;
    std::string name = s_.substr(i_, j - i_);
    if (name.empty() || !is_name_start(name[0])) return fail(why, "a parameter expansion not modelled");
    i_ = j;
    std::optional<std::string> value = lookup(name);
    if (!braced) {
      out += value.value_or("");
      return true;
    }
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      out += value.value_or("");
      return true;
    }
    bool colon = i_ < s_.size() && s_[i_] == ':';
    i_ += colon;
    char op = i_ < s_.size() ? s_[i_] : 0;
    if (op != '-' && op != '+') return fail(why, "a parameter expansion not modelled");
    ++i_;
    std::string alternative;
    if (!word(alternative, '}', why)) return false;
    ++i_;  // the `}`
    bool set = value && (!colon || !value->empty());
    if (op == '-') out += set ? *value : alternative;
    else if (set) out += alternative;
    return true;
  }

  std::optional<std::string> lookup(const std::string& name) const {
    for (const auto& [k, v] : env_)
      if (k == name) return v;
    return std::nullopt;
  }

  void assign(const std::string& name, const std::string& value) {
    for (auto& [k, v] : env_)
      if (k == name) {
        v = value;
        return;
      }
    env_.emplace_back(name, value);
  }

  static bool fail(std::string* why, const std::string& what) {
    *why = what + " (not modelled)";
    return false;
  }
  void skip(size_t line, const std::string& why) {
    if (skipped_) skipped_->push_back(name_ + ":" + std::to_string(line) + ": " + why);
  }

  const std::string& name_;
  const std::string& s_;
  Environment& env_;
  std::vector<std::string>* skipped_;
  size_t i_ = 0, line_ = 1;
  int depth_ = 0;
};

std::optional<std::string> read_text(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) > (1 << 20)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

void apply_shell_environment(const std::string& name, const std::string& text, Environment& env,
                             std::vector<std::string>* skipped) {
  Script(name, text, env, skipped).run();
}

Environment read_singularity_environment(const std::string& root, std::vector<std::string>* skipped) {
  support::FileRoot file_root(root);
  Environment env;
  std::string dir = file_root.host("/.singularity.d/env");
  std::error_code ec;
  if (fs::is_directory(dir, ec)) {
    // The shell's glob sorts by name, as the actions' `for script in /.singularity.d/env/*.sh` does.
    std::vector<std::string> scripts;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      std::string base = e.path().filename().string();
      if (base.ends_with(".sh") && !base.starts_with(".")) scripts.push_back(base);
    }
    std::sort(scripts.begin(), scripts.end());
    for (const std::string& base : scripts) {
      std::string in_root = "/.singularity.d/env/" + base;
      if (std::optional<std::string> text = read_text(file_root.host(in_root)))
        apply_shell_environment(in_root, *text, env, skipped);
    }
    return env;
  }
  if (std::optional<std::string> text = read_text(file_root.host("/environment")))
    apply_shell_environment("/environment", *text, env, skipped);
  return env;
}

}  // namespace envdoctor::image
