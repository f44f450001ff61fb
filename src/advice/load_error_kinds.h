// The fixes of load_error.h by kind of error, for advice's own files: each kind's in a file of its
// own, and what they share (the consumer's name and search directories, its requirements, the
// packages known to ship a library) in load_error.cc.
#pragma once

#include <optional>
#include <string>

#include "advice/fix.h"
#include "advice/load_failure.h"
#include "environment/environment.h"
#include "environment/knowledge.h"

namespace envdoctor::advice {

// missing_library.cc: a library not found (cannot open shared object file).
Fix fix_missing_library(const environment::Environment& env, const environment::Knowledge& knowledge,
                        const LoadFailure& failure);
// `name` as the knowledge table's packages ship it, in the words of `consumer`'s installer.
Fix hint_known_providers(const environment::Environment& env, const environment::Knowledge& knowledge,
                         const std::string& name, const python::Distribution* consumer);

// missing_version.cc: a version node its provider lacks.
std::string hint_missing_version(const environment::Environment& env, const environment::Knowledge& knowledge,
                                 const LoadFailure& failure);

// undefined_symbol.cc: a symbol no library of the consumer's scope defines.
Fix fix_undefined_symbol(const environment::Environment& env, const LoadFailure& failure);

// shadowed.cc: the provider a copy on LD_LIBRARY_PATH that lacks what the consumer needs, where
// the consumer's own search finds one that has it; empty otherwise.
Fix hint_ld_library_path_shadow(const environment::Environment& env, const LoadFailure& failure);

// load_error.cc: shared words.
std::string demangle(const std::string& symbol);
// "faketorch 2.8.0", or "no package".
std::string describe(const python::Distribution* d);
// "faketorch 2.8.0", or the file's name when no package owns it.
std::string consumer_name_of(const environment::Environment& env, const loader::LoadedObject& consumer);
// The directories `consumer`'s RUNPATH (or RPATH) names, "$ORIGIN/" left out: "../provlib/lib".
std::string search_dirs(const loader::LoadedObject& consumer);
// "consumer looks for it in ../provlib/lib"; "" without a RUNPATH or RPATH.
std::string where_looked(const environment::Environment& env, const loader::LoadedObject& consumer);
// The requirement of `consumer` on distribution `name`, when it has one that applies here.
std::optional<python::Requirement> requirement_on(const environment::Environment& env,
                                                  const python::Distribution& consumer, const std::string& name);

}  // namespace envdoctor::advice
