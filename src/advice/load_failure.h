// A load error with what advice reads of the process it happened in, copied out of it: a check
// keeps it with its finding, and the fix is made from it after the checks, when the process is
// gone (advice/load_error.h).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "loader/process.h"

namespace envdoctor::advice {

struct LoadFailure {
  loader::LoadError error;
  // The object whose need failed (error.object's), and, one per entry of its `deps`, the object
  // that entry resolved to (nullopt where it was not found). Copies: the process is gone when the
  // fix is made.
  std::optional<loader::LoadedObject> consumer;
  std::vector<std::optional<loader::LoadedObject>> deps;
  // The process's loader configuration, kept only where LD_LIBRARY_PATH is set (a copy it puts
  // first may be what fails: shadowed.cc loads the consumer again without it).
  std::shared_ptr<const loader::LoaderConfig> config;
  bool is_64 = true;  // the process's main object is a 64-bit ELF file (or there is none)
};

// `error` of `process`, with what of `process` its fix reads.
LoadFailure load_failure(const loader::Process& process, const loader::LoadError& error);

}  // namespace envdoctor::advice
