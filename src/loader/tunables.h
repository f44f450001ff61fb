// GLIBC_TUNABLES as glibc 2.36's ld.so reads it (elf/dl-tunables.c, parse_tunables): items
// "name=value" separated by ':', an item without '=' skipped, a name without a value ending the
// string; values read by _dl_strtoul (elf/dl-misc.c). Each tunable's range and default belong to
// its reader: the static TLS block's (loader/static_tls.h) and the legacy hwcaps mask
// (loader/search_paths.h).
#pragma once

#include <functional>
#include <string_view>

#include "support/types.h"

namespace envdoctor::loader {

// Calls `item` with each name and raw value of `glibc_tunables`, in order; the last value of a
// name is the one ld.so keeps.
void for_each_tunable(std::string_view glibc_tunables,
                      const std::function<void(std::string_view name, std::string_view value)>& item);

// elf/dl-misc.c, _dl_strtoul: blanks, a sign, then decimal, 0x hex or 0 octal digits up to the
// first that is not one; 0 when no digit starts it; UINT64_MAX on overflow; negation wraps.
u64 dl_strtoul(std::string_view s);

}  // namespace envdoctor::loader
