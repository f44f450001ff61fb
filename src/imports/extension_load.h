// A CPython extension module seen by `ldd` and `tree`: in which scope its undefined symbols bind.
//
// `ld.so --list` (and `ldd -r`) loads a file as a main program, so an extension module's Py*
// references, which the interpreter defines, are unbound there: about sixty "undefined symbol"
// lines for a healthy stdlib `_json`. Python instead dlopens the module into a process whose
// main program is the interpreter (Debian's python3.11 executable exports the C API itself; a
// shared-libpython build has it in libpython3.X.so, loaded with the interpreter). This binds the
// module's references the way an import does, with the interpreter loaded first, as `check`
// does for every module of an environment (load_checks.h); without an interpreter, the C API's
// references are counted as left to it rather than reported one by one.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elf/elf_file.h"
#include "loader/process.h"
#include "python/extension_module.h"

namespace envdoctor::imports {

struct ExtensionLoad {
  // The interpreter the module was loaded into ("" when none was found or it did not fit).
  std::string interpreter;
  // Why no interpreter was used, when one was looked for ("/usr/bin/python3 is Python 3.12; the
  // module is built for 3.11"); empty when none exists or one was used.
  std::string note;
  // The undefined-symbol errors that remain: with an interpreter, those of the import; without
  // one, those of the file on its own minus the C API's.
  std::vector<loader::LoadError> symbol_errors;
  size_t bound_by_interpreter = 0;  // C API references the interpreter bound
  size_t left_to_interpreter = 0;   // C API references left unbound for lack of an interpreter
};

// `listed` has loaded the extension module `path` (an in-root path) as its main program, as ldd
// does. `candidates` are the interpreters to load it into, in order (--python alone, or what the
// default rules found and then `python3.X` on PATH for the module's 3.X, since a default such as
// a pyenv shim may be a script or another version); the first that loads and is of the module's
// version is used. nullopt when `path` is not an extension module.
std::optional<ExtensionLoad> load_as_extension(const loader::Process& listed, const std::string& path,
                                               const std::vector<std::string>& candidates, loader::ObjectStore& store);

}  // namespace envdoctor::imports
