#include "support/json_text.h"

#include <charconv>

namespace envdoctor::support {

namespace {

// What nlohmann writes unchanged between the quotes.
bool plain(const std::string& s) {
  for (unsigned char c : s)
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  return true;
}

void append_string(std::string& out, const std::string& s) {
  if (plain(s)) {
    out += '"';
    out += s;
    out += '"';
  } else {
    out += nlohmann::json(s).dump();
  }
}

template <typename Int>
void append_integer(std::string& out, Int n) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, n);
  out.append(buf, end);
}

void newline(std::string& out, int indent, int level) {
  out += '\n';
  out.append(static_cast<size_t>(indent) * static_cast<size_t>(level), ' ');
}

}  // namespace

void append_json(std::string& out, const nlohmann::json& value, int indent, int level) {
  using Type = nlohmann::json::value_t;
  bool pretty = indent >= 0;
  switch (value.type()) {
    case Type::object: {
      if (value.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        if (!first) out += ',';
        first = false;
        if (pretty) newline(out, indent, level + 1);
        append_string(out, key);
        out += pretty ? ": " : ":";
        append_json(out, item, indent, level + 1);
      }
      if (pretty) newline(out, indent, level);
      out += '}';
      return;
    }
    case Type::array: {
      if (value.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      bool first = true;
      for (const nlohmann::json& item : value) {
        if (!first) out += ',';
        first = false;
        if (pretty) newline(out, indent, level + 1);
        append_json(out, item, indent, level + 1);
      }
      if (pretty) newline(out, indent, level);
      out += ']';
      return;
    }
    case Type::string: append_string(out, value.get_ref<const std::string&>()); return;
    case Type::boolean: out += value.get<bool>() ? "true" : "false"; return;
    case Type::null: out += "null"; return;
    case Type::number_integer: append_integer(out, value.get<nlohmann::json::number_integer_t>()); return;
    case Type::number_unsigned: append_integer(out, value.get<nlohmann::json::number_unsigned_t>()); return;
    default: out += value.dump(indent); return;  // floating point, binary, discarded
  }
}

std::string dump_json(const nlohmann::json& value, int indent) {
  std::string out;
  append_json(out, value, indent);
  return out;
}

}  // namespace envdoctor::support
