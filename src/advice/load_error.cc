#include "advice/load_error.h"

#include <cxxabi.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "advice/install.h"
#include "advice/load_error_kinds.h"
#include "python/metadata_file.h"
#include "python/version.h"

namespace envdoctor::advice {

namespace fs = std::filesystem;
using environment::Environment;
using environment::Knowledge;
using environment::normalize_path;
using loader::LoadError;

std::string demangle(const std::string& symbol) {
  // Only Itanium-mangled names: a C function called `f` is not the type float.
  if (symbol.rfind("_Z", 0) != 0) return symbol;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

std::string describe(const python::Distribution* d) { return d ? d->name + " " + d->version : "no package"; }

// "faketorch 2.8.0", or the file's name when no package owns it.
std::string consumer_name_of(const Environment& env, const loader::LoadedObject& consumer) {
  const python::Distribution* own = env.owner(consumer.path);
  return own ? describe(own) : fs::path(consumer.path).filename().string();
}

// The directories `consumer`'s RUNPATH (or RPATH) names, as written but with "$ORIGIN/" left
// out and made lexically normal: "../provlib/lib" for "$ORIGIN/../provlib/lib".
std::string search_dirs(const loader::LoadedObject& consumer) {
  if (!consumer.elf) return "";
  std::optional<std::string_view> list = consumer.elf->runpath ? consumer.elf->runpath : consumer.elf->rpath;
  if (!list) return "";
  std::string out;
  std::string_view rest = *list;
  while (true) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    for (std::string origin : {"$ORIGIN/", "${ORIGIN}/"})
      if (dir.rfind(origin, 0) == 0) dir = fs::path(dir.substr(origin.size())).lexically_normal().string();
    if (dir == "$ORIGIN" || dir == "${ORIGIN}") dir = ".";
    if (!dir.empty()) out += (out.empty() ? "" : ", ") + dir;
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
  }
  return out;
}

// "consumer looks for it in ../provlib/lib"; "" without a RUNPATH or RPATH.
std::string where_looked(const Environment& env, const loader::LoadedObject& consumer) {
  std::string dirs = search_dirs(consumer);
  if (dirs.empty()) return "";
  const python::Distribution* own = env.owner(consumer.path);
  return (own ? own->name : fs::path(consumer.path).filename().string()) + " looks for it in " + dirs;
}

// The requirement of `consumer` on distribution `name`, when it has one that applies here.
std::optional<python::Requirement> requirement_on(const Environment& env, const python::Distribution& consumer,
                                                  const std::string& name) {
  for (const python::Requirement& r : consumer.requirements_for(env.python.markers))
    if (python::normalize_name(r.name) == python::normalize_name(name)) return r;
  return std::nullopt;
}

Fix fix_for_load_error(const Environment& env, const Knowledge& knowledge, const LoadFailure& l) {
  const LoadError& e = l.error;
  switch (e.kind) {
    case LoadError::Kind::kMissingLibrary:
      if (l.consumer) return fix_missing_library(env, knowledge, l);
      return {};
    case LoadError::Kind::kWrongElfClass:
      return {"only a copy of " + e.library + " for the other ELF class was found: install the " +
                  (l.is_64 ? "64" : "32") + "-bit one",
              ""};
    case LoadError::Kind::kInvalidElf: return invalid_file(env, normalize_path(e.path));
    case LoadError::Kind::kMissingVersion:
      if (Fix f = hint_ld_library_path_shadow(env, l); !f.hint.empty()) return f;
      return {hint_missing_version(env, knowledge, l), ""};
    case LoadError::Kind::kUndefinedSymbol:
      if (Fix f = hint_ld_library_path_shadow(env, l); !f.hint.empty()) return f;
      if (!l.consumer) return {};
      return fix_undefined_symbol(env, l);
  }
  return {};
}

}  // namespace envdoctor::advice
