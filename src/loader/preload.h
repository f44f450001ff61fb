// The objects ld.so loads before the main program's dependencies (glibc 2.36 elf/rtld.c, dl_main):
// the names of LD_PRELOAD, then those of /etc/ld.so.preload. Each is mapped as a dependency of the
// main program would be (do_preload: _dl_map_object with the main program as the loader, so its
// RPATH and RUNPATH, LD_LIBRARY_PATH, ld.so.cache and the system directories; a name with a '/'
// is opened as it is, after its $ORIGIN, $LIB and $PLATFORM are expanded), and stands in the
// main program's search list right after it, before its first dependency (elf/dl-deps.c: "Add the
// preloaded items after MAP but before any of its dependencies"): what it defines interposes on
// every later object. A name that cannot be mapped is not an error of the program: ld.so says
//   ERROR: ld.so: object 'NAME' from LD_PRELOAD cannot be preloaded (REASON): ignored.
// on stderr and goes on without it. The preloaded object's own dependencies are loaded as any
// other's, and one of them missing ends the program as any missing library does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "loader/search_paths.h"

namespace envdoctor::loader {

// One name to preload and where it was given.
struct Preload {
  enum class Source {
    kLdPreload,    // the variable LD_PRELOAD
    kLdSoPreload,  // the file /etc/ld.so.preload
  };
  std::string name;
  Source source = Source::kLdPreload;
};

// "LD_PRELOAD" or "/etc/ld.so.preload": ld.so's own words for where a name was given.
const char* preload_source_name(Preload::Source source);

// LD_PRELOAD's names (rtld.c, handle_preload_list): split at every ' ' and ':', empty names
// skipped, a name of 1024 bytes or more skipped (SECURE_PATH_LIMIT). For a secure program
// (setuid or setgid: AT_SECURE), only names without a '/' and shorter than 255 bytes
// (dso_name_valid_for_suid); the file is read for every program.
std::vector<std::string> split_ld_preload(std::string_view list, bool secure = false);

// /etc/ld.so.preload's names (rtld.c): names are separated by ' ', '\t', '\n' and ':', and '#'
// starts a comment to the end of its line, as far as rtld.c's loop finds it (each later comment
// is looked for only in the file's first bytes, as many as were left after the one before).
std::vector<std::string> split_ld_so_preload(std::string_view file);

// What a process of `config` preloads, in ld.so's order: LD_PRELOAD's names, then the file's.
std::vector<Preload> preloads(const LoaderConfig& config);

// ld.so's words for a name it could not preload, `reason` being its error without the file
// name ("cannot open shared object file", "wrong ELF class: ELFCLASS32", "invalid ELF header").
std::string preload_ignored_message(const Preload& preload, std::string_view reason);

}  // namespace envdoctor::loader
