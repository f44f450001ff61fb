// Small readers shared by the inventory and the wheel reader: a bounded, non-blocking read of a
// metadata file that is hostile until proven otherwise, the RFC 822 header format of METADATA,
// PKG-INFO and WHEEL (Core Metadata spec: "email.parser" headers with continuation lines, the
// body after the first empty line), and PEP 503 name normalization.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "elf/mapped_file.h"

namespace envdoctor::python {

namespace fs = std::filesystem;

// Reads at most `limit` bytes of the regular file `path`. A FIFO, device or directory is
// refused (opening a FIFO named RECORD must not hang the tool), and so are a symlink loop and a
// permission error, each with a message such as "RECORD: Permission denied". When the file is
// longer than `limit`, the first `limit` bytes are returned and `*truncated` is set.
std::optional<std::string> read_bounded_file(const fs::path& path, u64 limit, std::string* error,
                                             bool* truncated = nullptr);

// One header of an RFC 822 block. A continuation line (one that starts with a space or a tab)
// is unfolded into the value: its surrounding whitespace becomes one space (RFC 822 3.1.1).
struct Header {
  std::string name;
  std::string value;
};

// The headers before the first empty line. Lines without a colon are ignored, as
// email.parser's defects are. Header names keep their case; look them up with header_values.
std::vector<Header> parse_headers(std::string_view text);

// Every value of header `name` (ASCII case-insensitive), in order.
std::vector<std::string> header_values(const std::vector<Header>& headers, std::string_view name);
std::optional<std::string> header_value(const std::vector<Header>& headers, std::string_view name);

// PEP 503: lowercase, runs of '-', '_' and '.' become one '-'.
std::string normalize_name(std::string_view name);

// ASCII whitespace trimmed from both ends.
std::string_view trim(std::string_view s);

}  // namespace envdoctor::python
