// The integer types every stage uses, named as mold names them: signed 64-bit by default, the
// unsigned widths for fields read from files.
#pragma once

#include <cstdint>

namespace envdoctor {

using i64 = int64_t;
using u8 = uint8_t;
using u16 = uint16_t;
using u32 = uint32_t;
using u64 = uint64_t;

}  // namespace envdoctor
