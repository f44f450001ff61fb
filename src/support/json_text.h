// nlohmann::json's dump(), byte for byte, at the speed the large documents need (a snapshot of
// 2,000 files is 3.5 MB, dumped twice: for its digest and for the output). nlohmann's serializer
// decodes every byte of every string as UTF-8; here a string of printable ASCII without '"' or
// '\' is copied whole, and anything else (other strings, floating-point numbers) is left to
// nlohmann's own dump, so that the text never differs. Binary values (CBOR's; envdoctor's
// documents have none) are written as nlohmann writes them at the top level.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace envdoctor::support {

// Appends `value` as value.dump(indent) would write it (indent < 0: compact), as if it were
// nested `level` levels deep (the indentation of its closing bracket).
void append_json(std::string& out, const nlohmann::json& value, int indent = -1, int level = 0);

// value.dump(indent).
std::string dump_json(const nlohmann::json& value, int indent = -1);

}  // namespace envdoctor::support
