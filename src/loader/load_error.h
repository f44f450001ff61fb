// A load's failure, in the loader's words and by its kind: what a Process (process.h) records for
// each need it cannot meet, and what the checks and advice judge by its kind rather than its words.
#pragma once

#include <string>

namespace envdoctor::loader {

struct LoadError {
  enum class Kind { kMissingLibrary, kMissingVersion, kUndefinedSymbol, kWrongElfClass, kInvalidElf };
  Kind kind;
  int object = -1;  // the object whose need failed
  // The file the error is in: the object whose need failed (the path it was opened by), the
  // name given to dlopen when it failed itself, or, for kInvalidElf, the file the loader rejected.
  std::string path;
  std::string library;  // the library name (missing, invalid) or the provider's path (version)
  std::string symbol;
  std::string version;
  std::string message;  // the loader's words, as dlerror() would give them: "PATH: reason"
  // For kUndefinedSymbol: the library that is not found and that the reference waits for, as far
  // as the file says: the one its symbol version names (vn_file), else, for an unversioned
  // reference, the NEEDED entries of its object that were not found ("libA.so.1 or libB.so.2");
  // empty when nothing it needs is missing (the symbol is undefined for another reason).
  std::string waiting_for;
  // For kMissingVersion: not an error ld.so reports but the assertion it dies of (check_match,
  // a versioned reference met by a copy of its library without symbol versioning): exit 127.
  bool aborts = false;

  // The message without its leading "PATH: ".
  std::string reason() const;
};

}  // namespace envdoctor::loader
