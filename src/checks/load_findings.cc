#include "checks/load_findings.h"

#include <filesystem>

#include "advice/load_error.h"

namespace envdoctor::checks {

using environment::normalize_path;

namespace fs = std::filesystem;
using environment::normalize_path;
using loader::LoadError;

namespace {

Code code_for(LoadError::Kind kind) {
  switch (kind) {
    case LoadError::Kind::kMissingLibrary: return Code::kMissingLibrary;
    case LoadError::Kind::kMissingVersion: return Code::kMissingVersion;
    case LoadError::Kind::kUndefinedSymbol: return Code::kUndefinedSymbol;
    case LoadError::Kind::kWrongElfClass: return Code::kWrongElfClass;
    case LoadError::Kind::kInvalidElf: return Code::kInvalidElf;
  }
  return Code::kInvalidElf;
}

}  // namespace

Finding finding_for_load_error(const environment::Environment& env, const environment::Knowledge& knowledge,
                               const loader::Process& p, const LoadError& e) {
  Finding f;
  f.code = code_for(e.kind);
  f.severity = Severity::kError;
  f.message = e.message;
  switch (e.kind) {
    case LoadError::Kind::kMissingLibrary:
    case LoadError::Kind::kWrongElfClass:
    case LoadError::Kind::kInvalidElf: f.library = e.library; break;
    case LoadError::Kind::kMissingVersion:
      f.library = fs::path(e.library).filename().string();
      f.version = e.version;
      break;
    case LoadError::Kind::kUndefinedSymbol:
      f.symbol = e.symbol;
      if (!e.version.empty()) f.version = e.version;
      break;
  }
  f.take(advice::fix_for_load_error(env, knowledge, p, e));
  f.file = normalize_path(e.path);
  const auto& owners = env.owners(f.file);
  if (!owners.empty()) f.package = owners.front()->name;
  if (owners.size() > 1)
    for (const python::Distribution* d : owners) f.packages.push_back(d->name);
  return f;
}

}  // namespace envdoctor::checks
