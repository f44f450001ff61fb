#include "checks/search_path_checks.h"

namespace envdoctor::checks {

using environment::ElfRecord;
using environment::Environment;

namespace {

// Whether a ':'-separated list has an empty element: a leading, trailing or doubled ':'. (An
// element that only expands to nothing, an unknown DST, is dropped by the loader instead.)
bool has_empty_element(std::string_view list) {
  return list.empty() || list.front() == ':' || list.back() == ':' || list.find("::") != std::string_view::npos;
}

}  // namespace

std::vector<Finding> check_search_paths(const Context& ctx) {
  const Environment& env = ctx.env;
  std::vector<Finding> out;
  for (const ElfRecord& r : env.elf_files) {
    if (!r.opened || !r.opened->elf) continue;
    const elf::ElfFile& e = *r.opened->elf;
    // An object with DT_RUNPATH has no DT_RPATH for the loader (elf/dl-load.c).
    bool runpath = e.runpath.has_value();
    std::optional<std::string_view> list = runpath ? e.runpath : e.rpath;
    if (!list || e.needed.empty() || !has_empty_element(*list)) continue;
    const char* what = runpath ? "RUNPATH" : "RPATH";
    Finding f;
    f.code = Code::kSearchesCurrentDirectory;
    f.severity = Severity::kWarning;
    f.file = r.path;
    if (!r.owners.empty()) f.package = r.owners.front()->name;
    f.message = std::string(what) + " `" + std::string(*list) +
                "' has an empty element: the loader searches the current working directory (and its "
                "glibc-hwcaps subdirectories) for the libraries this file needs";
    f.hint = std::string("an empty ") + what +
             " element is the directory the process was started in, searched before ld.so.cache and the "
             "system directories, so a library of the same name there is loaded instead of the real one; "
             "`envdoctor tree " +
             r.path + "` lists the paths tried; the file should be linked without it (`-Wl,-rpath,'$ORIGIN'`, no " +
             "stray ':')" + (f.package ? ": tell " + *f.package + "'s maintainers" : "");
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace envdoctor::checks
