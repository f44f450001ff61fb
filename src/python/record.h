// RECORD files (PyPA "Recording installed projects"): one CSV row per installed file, written
// by Python's csv module in its default "excel" dialect: path, hash as "<algorithm>=<urlsafe
// base64 digest without padding>", size in bytes. Paths are relative to the site directory the
// .dist-info lives in ("../../../bin/tool" for a script), or absolute when pip could not make
// them relative.
//
// A RECORD is read as hostile input: every malformed row becomes a problem string and the rest
// of the file is still read. Rows are bounded (kMaxRecordRow) and so is the file
// (kMaxRecordFile); a quoted field may span lines, as the csv module allows.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elf/mapped_file.h"

namespace envdoctor::python {

namespace fs = std::filesystem;

constexpr u64 kMaxRecordRow = 64 * 1024;
constexpr u64 kMaxRecordFile = 64 * 1024 * 1024;

struct RecordEntry {
  std::string path;            // as written in RECORD
  fs::path resolved;           // absolute: site dir / path, lexically normalized
  std::string hash_algorithm;  // "sha256"; empty when the row has no hash (RECORD itself)
  std::vector<u8> digest;      // decoded; empty when absent or undecodable
  std::optional<u64> size;
  u64 line = 0;  // 1-based line of the row's start, for messages
};

// One CSV row with the line it starts on.
struct CsvRow {
  std::vector<std::string> fields;
  u64 line = 0;
};

// Splits `text` into rows as Python's csv.reader does with the default dialect: fields
// separated by ',', '"' quoting with '""' for a quote, records ending at "\n", "\r\n" or "\r"
// outside quotes; blank lines yield no row. A row longer than `max_row` bytes, a row holding a
// NUL byte (csv: "line contains NUL") or an unterminated quote at the end of the text is
// dropped with a problem "RECORD line N: ..." appended to `problems`.
std::vector<CsvRow> parse_csv(std::string_view text, std::vector<std::string>* problems, u64 max_row = kMaxRecordRow);

// Where the paths of a RECORD are allowed to point. Paths are resolved against `site_dir`; a
// resolved path outside `root` (the environment's prefix) is a problem but is still kept.
struct RecordContext {
  fs::path site_dir;
  fs::path root;
};

// Parses RECORD text. Rows with the wrong field count, a bad hash or a bad size are kept as far
// as they make sense (a path alone is still an owned file) with a problem for each defect.
std::vector<RecordEntry> parse_record(std::string_view text, const RecordContext& context,
                                      std::vector<std::string>* problems);

// Reads and parses the RECORD file at `path` with the bounds above. An unreadable file is one
// problem and no entries.
std::vector<RecordEntry> read_record(const fs::path& path, const RecordContext& context,
                                     std::vector<std::string>* problems);

// "<algorithm>=<digest>" from a RECORD hash field; nullopt for a field without '=' or with a
// digest that is not urlsafe base64 (padding is tolerated, as base64.urlsafe_b64decode does).
struct RecordHash {
  std::string algorithm;
  std::vector<u8> digest;
};
std::optional<RecordHash> parse_record_hash(std::string_view field);

// Urlsafe base64 ('-' and '_' for '+' and '/'), padding optional. nullopt on any other byte or
// an impossible length.
std::optional<std::vector<u8>> decode_urlsafe_base64(std::string_view text);
std::string encode_urlsafe_base64(std::span<const u8> bytes);

// `path` made absolute against `base` and normalized without touching the file system:
// "." and ".." removed (".." at the root stays at the root), no trailing slash.
fs::path lexically_resolve(const fs::path& base, const fs::path& path);

// True when `path` (lexically normal, absolute) is `root` or lies below it.
bool path_within(const fs::path& path, const fs::path& root);

// `path`'s file name as std::filesystem's filename() has it: what follows the last '/' ("" after
// a trailing one), read in place rather than from a split into components.
std::string_view path_file_name(std::string_view path);

// Whether fs::path(path).filename() == fs::path(name): `name` is one component (no '/') and is
// `path`'s file name.
bool named(std::string_view path, std::string_view name);

}  // namespace envdoctor::python
