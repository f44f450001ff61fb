#include "python/record.h"

#include <array>
#include <cstdint>

#include "python/metadata_file.h"

namespace envdoctor::python {

namespace {

std::string where(u64 line) { return "RECORD line " + std::to_string(line) + ": "; }

// The csv module's reader states (Modules/_csv.c), less the ones the default dialect never
// enters (escapechar, skipinitialspace).
enum class CsvState { kStartRecord, kStartField, kInField, kInQuotedField, kQuoteInQuoted };

class CsvParser {
 public:
  CsvParser(u64 max_row, std::vector<std::string>* problems) : max_row_(max_row), problems_(problems) {}

  std::vector<CsvRow> run(std::string_view text) {
    for (size_t i = 0; i < text.size(); i++) {
      if (state_ == CsvState::kStartRecord && plain_row(text, i)) continue;
      char c = text[i];
      bool crlf = c == '\r' && i + 1 < text.size() && text[i + 1] == '\n';
      // Outside quotes "\r\n" ends a record once: let its '\n' do it.
      if (crlf && state_ != CsvState::kInQuotedField) continue;
      if (row_bytes_++ >= max_row_) too_long_ = true;
      if (c == '\0') has_nul_ = true;
      step(c);
      if (c == '\n' || (c == '\r' && !crlf)) line_++;
    }
    // The end of the text ends the last record, as the csv module ends every line it is fed.
    if (state_ == CsvState::kInQuotedField) {
      problem("unterminated quoted field");
      end_field();
      end_record();
    } else if (state_ != CsvState::kStartRecord) {
      step('\n');
    }
    return std::move(rows_);
  }

 private:
  void step(char c) {
    bool eol = c == '\n' || c == '\r';
    switch (state_) {
      case CsvState::kStartRecord:
        if (eol) {  // a blank line yields no row
          row_bytes_ = 0;
          return;
        }
        row_line_ = line_;
        state_ = CsvState::kStartField;
        [[fallthrough]];
      case CsvState::kStartField:
        if (eol) {
          end_field();
          end_record();
        } else if (c == '"') {
          state_ = CsvState::kInQuotedField;
        } else if (c == ',') {
          end_field();
        } else {
          add(c);
          state_ = CsvState::kInField;
        }
        return;
      case CsvState::kInField:
        if (eol) {
          end_field();
          end_record();
        } else if (c == ',') {
          end_field();
          state_ = CsvState::kStartField;
        } else {
          add(c);  // a quote inside an unquoted field is an ordinary character
        }
        return;
      case CsvState::kInQuotedField:
        if (c == '"') state_ = CsvState::kQuoteInQuoted;
        else add(c);
        return;
      case CsvState::kQuoteInQuoted:
        if (c == '"') {  // doublequote: "" is one quote
          add(c);
          state_ = CsvState::kInQuotedField;
        } else if (c == ',') {
          end_field();
          state_ = CsvState::kStartField;
        } else if (eol) {
          end_field();
          end_record();
        } else {
          // Not strict: the csv module keeps the character and goes on unquoted.
          add(c);
          state_ = CsvState::kInField;
        }
        return;
    }
  }

  // Nearly every RECORD row has no quote: at the start of a record, such a row (up to its line
  // end, within the row limit, no quote or NUL) is split at its commas at once, which is what
  // step() would make of it a character at a time. On true, `i` is the last character consumed
  // (the line end, or the text's last character), as the caller's loop expects.
  bool plain_row(std::string_view text, size_t& i) {
    // Searched a byte at a time with memchr, not with find_first_of, which asks memchr of its set
    // for every character of the text.
    size_t end = text.find('\n', i);
    if (end == std::string_view::npos) end = text.size();
    std::string_view row = text.substr(i, end - i);
    if (size_t cr = row.find('\r'); cr != std::string_view::npos) {
      end = i + cr;
      row = row.substr(0, cr);
    }
    if (row.empty() || row.size() >= max_row_ || row.find('"') != std::string_view::npos ||
        row.find('\0') != std::string_view::npos)
      return false;
    std::vector<std::string> fields;
    for (size_t start = 0;;) {
      size_t comma = row.find(',', start);
      fields.emplace_back(row.substr(start, comma == std::string_view::npos ? row.npos : comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    rows_.push_back({std::move(fields), line_});
    if (end == text.size()) {  // the text's end ends the record, and no line
      i = end - 1;
      return true;
    }
    i = text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n' ? end + 1 : end;
    line_++;
    return true;
  }

  void add(char c) {
    if (!too_long_) field_ += c;
  }
  void end_field() {
    // An over-long row is dropped whole: keep nothing of it (a row of 60 million commas must not
    // become 60 million empty fields).
    if (!too_long_) fields_.push_back(std::move(field_));
    field_.clear();
  }
  void end_record() {
    if (too_long_) {
      problem("row longer than " + std::to_string(max_row_) + " bytes, ignored");
    } else if (has_nul_) {
      problem("row contains a NUL byte, ignored");
    } else {
      rows_.push_back({std::move(fields_), row_line_});
    }
    fields_.clear();
    field_.clear();
    too_long_ = has_nul_ = false;
    row_bytes_ = 0;
    state_ = CsvState::kStartRecord;
  }
  void problem(const std::string& what) {
    if (problems_) problems_->push_back(where(row_line_) + what);
  }

  u64 max_row_;
  std::vector<std::string>* problems_;
  CsvState state_ = CsvState::kStartRecord;
  std::vector<CsvRow> rows_;
  std::vector<std::string> fields_;
  std::string field_;
  u64 line_ = 1, row_line_ = 1, row_bytes_ = 0;
  bool too_long_ = false, has_nul_ = false;
};

// Each byte's value in the urlsafe alphabet, -1 for a byte outside it: a RECORD has a digest on
// nearly every row.
constexpr std::array<std::int8_t, 256> kBase64Values = [] {
  std::array<std::int8_t, 256> values{};
  values.fill(-1);
  for (int c = 'A'; c <= 'Z'; ++c) values[c] = static_cast<std::int8_t>(c - 'A');
  for (int c = 'a'; c <= 'z'; ++c) values[c] = static_cast<std::int8_t>(c - 'a' + 26);
  for (int c = '0'; c <= '9'; ++c) values[c] = static_cast<std::int8_t>(c - '0' + 52);
  values['-'] = 62;
  values['_'] = 63;
  return values;
}();

int base64_value(char c) { return kBase64Values[static_cast<u8>(c)]; }

std::optional<u64> parse_size(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  u64 v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<u64>(c - '0');
  }
  return v;
}

}  // namespace

std::vector<CsvRow> parse_csv(std::string_view text, std::vector<std::string>* problems, u64 max_row) {
  return CsvParser(max_row, problems).run(text);
}

std::optional<std::vector<u8>> decode_urlsafe_base64(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) return std::nullopt;
  std::vector<u8> out;
  out.reserve(text.size() * 3 / 4);
  u32 acc = 0;
  int bits = 0;
  for (char c : text) {
    int v = base64_value(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<u32>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<u8>(acc >> bits));
      acc &= (1u << bits) - 1;
    }
  }
  return out;
}

std::string encode_urlsafe_base64(std::span<const u8> bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  u32 acc = 0;
  int bits = 0;
  for (u8 b : bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out += kAlphabet[(acc << (6 - bits)) & 63];
  return out;
}

std::optional<RecordHash> parse_record_hash(std::string_view field) {
  size_t eq = field.find('=');
  if (eq == std::string_view::npos || eq == 0) return std::nullopt;
  auto digest = decode_urlsafe_base64(field.substr(eq + 1));
  if (!digest || digest->empty()) return std::nullopt;
  return RecordHash{std::string(field.substr(0, eq)), std::move(*digest)};
}

namespace {

// lexically_resolve on the strings, not on fs::path's components: this runs for every RECORD
// line and every path a load meets, and splitting a path into a list of paths costs an
// allocation per component.
std::string resolved_string(const std::string& base, const std::string& p) {
  std::string joined = !p.empty() && p[0] == '/' ? p : base + "/" + p;
  std::string out;
  out.reserve(joined.size() + 1);
  for (size_t i = 0; i < joined.size();) {
    size_t end = joined.find('/', i);
    if (end == std::string::npos) end = joined.size();
    std::string_view part(joined.data() + i, end - i);
    i = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      out.resize(out.empty() ? 0 : out.rfind('/'));  // at the root, ".." stays there
      continue;
    }
    out.append("/").append(part);
  }
  return out.empty() ? std::string("/") : out;
}

// path_within for two paths resolved_string gave (absolute, no "." or "..", no empty part).
bool resolved_within(std::string_view path, std::string_view root) {
  return root == "/" || (path.starts_with(root) && (path.size() == root.size() || path[root.size()] == '/'));
}

}  // namespace

fs::path lexically_resolve(const fs::path& base, const fs::path& path) {
  return resolved_string(base.native(), path.native());
}

bool path_within(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // a trailing slash in root
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

std::string_view path_file_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool named(std::string_view path, std::string_view name) {
  return name.find('/') == std::string_view::npos && path_file_name(path) == name;
}

std::vector<RecordEntry> parse_record(std::string_view text, const RecordContext& context,
                                      std::vector<std::string>* problems) {
  std::vector<RecordEntry> entries;
  auto problem = [&](u64 line, const std::string& what) {
    if (problems) problems->push_back(where(line) + what);
  };
  std::string root = resolved_string("/", context.root.native());
  for (CsvRow& row : parse_csv(text, problems)) {
    if (row.fields.empty() || row.fields[0].empty()) {
      problem(row.line, "empty path");
      continue;
    }
    if (row.fields.size() != 3)
      problem(row.line, "expected 3 fields (path, hash, size), found " + std::to_string(row.fields.size()));
    RecordEntry e;
    e.line = row.line;
    e.path = std::move(row.fields[0]);
    std::string resolved = resolved_string(context.site_dir.native(), e.path);
    if (e.path.front() == '/') problem(row.line, "absolute path '" + e.path + "'");
    else if (!context.root.empty() && !resolved_within(resolved, root))
      problem(row.line, "path '" + e.path + "' escapes the environment prefix " + root);
    e.resolved = fs::path(std::move(resolved));
    if (row.fields.size() > 1 && !row.fields[1].empty()) {
      if (auto h = parse_record_hash(row.fields[1])) {
        e.hash_algorithm = std::move(h->algorithm);
        e.digest = std::move(h->digest);
      } else {
        problem(row.line, "bad hash '" + row.fields[1] + "'");
      }
    }
    if (row.fields.size() > 2 && !row.fields[2].empty()) {
      e.size = parse_size(row.fields[2]);
      if (!e.size) problem(row.line, "bad size '" + row.fields[2] + "'");
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

std::vector<RecordEntry> read_record(const fs::path& path, const RecordContext& context,
                                     std::vector<std::string>* problems) {
  std::string error;
  bool truncated = false;
  auto text = read_bounded_file(path, kMaxRecordFile, &error, &truncated);
  if (!text) {
    if (problems) problems->push_back(error);
    return {};
  }
  if (truncated && problems)
    problems->push_back("RECORD: larger than " + std::to_string(kMaxRecordFile) + " bytes, read in part");
  return parse_record(*text, context, problems);
}

}  // namespace envdoctor::python
