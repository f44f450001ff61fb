// `ldd` and `tree`: the load model applied to one file given on the command line.
//
// Each file is its own simulated process (`ld.so --list FILE` in ldd's trace mode). As glibc's
// ldd, the load resolves libraries and checks symbol versions (what fails at load time with lazy
// binding); only with -r (`ldd -r`: LD_WARN and LD_BIND_NOW) does it bind every symbol. The
// verdict says whether the file loaded at all, and if not whose failure that is (a file that
// cannot be opened, or that is no ELF file, is the tool's; an ELF file the loader rejects is a
// load failure); for a file that loaded, which of the loader's errors to print. With -r, an
// extension module's undefined symbols are those of an import into an interpreter
// (extension_load.h), and the symbols that only wait for a library that is not found are
// counted, one line per missing library, rather than listed; --exact prints what ld.so prints,
// every file a program of its own and every unbound symbol named. src/report/ldd.cc renders it
// as ldd's listing or as tree's.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "environment/session.h"
#include "imports/extension_load.h"
#include "loader/process.h"

namespace envdoctor::queries {

// What is the same for every file of one `ldd` or `tree` run.
struct SingleFileRun {
  const loader::LoaderConfig& config;                     // its root is how the paths the user gave are read
  loader::ObjectStore& store;                             // every library parsed once, for all the files
  std::shared_ptr<loader::Process::SearchMemo> searches;  // the searches made, shared by every file
  std::vector<std::string> python;  // extension_interpreters: what extension modules are loaded into
  bool exact = false;               // --exact: what ld.so prints, every file a main program of its own
  bool bind_symbols = false;        // -r: bind every symbol, as `ldd -r`
};

// Undefined symbols of one object that wait for a library that is not found: counted, not listed.
struct WaitingSymbols {
  std::string library;  // LoadError::waiting_for
  std::string path;     // the object whose references they are
  size_t symbols = 0;
};

// A library not found where its consumer's own search looks beside it (RUNPATH or RPATH $ORIGIN),
// whose name is of the consumer's own build (libggml-base.so for libggml-cuda.so): a file of the
// build left out, which belongs in that directory.
struct MissingSibling {
  int consumer = -1;    // index into the process's objects
  std::string library;  // the NEEDED entry
  std::string family;   // the names' common stem ("libggml")
  std::string dir;      // where $ORIGIN looks: the consumer's directory
  std::string list;     // "RUNPATH" or "RPATH"
};

struct SingleFileLoad {
  loader::Process process;  // the file loaded as the main program, as `ld.so --list FILE` does
  std::string file;         // the path as the user gave it, which the messages name
  bool loaded = false;      // whether the main program itself could be loaded
  // When it could not: why the file is not something the loader model can be asked about
  // ("is a directory, not an ELF file"), empty for an ELF file the loader rejects (in the loader's
  // words, process.errors().front()); and whether that is the tool's failure (exit 2) rather than
  // a load failure (exit 1).
  std::string not_an_elf_file = {};
  bool unreadable = false;
  // When it could: the errors to print, and for an extension module where its C API went.
  std::vector<loader::LoadError> errors = {};
  std::vector<WaitingSymbols> waiting = {};  // in the order of their first symbol
  std::optional<imports::ExtensionLoad> extension = {};
  std::vector<MissingSibling> siblings = {};

  // A load failure, or errors to print: ldd's exit 1 (2 when unreadable).
  bool failed() const { return !loaded || !errors.empty() || !waiting.empty(); }
};

// Loads `file` (a path on this machine, or inside the run's root) as the main program.
SingleFileLoad load_single_file(const SingleFileRun& run, const std::string& file);

// The interpreters extension modules are loaded into: `python` (--python) alone; else, as `check`
// finds one (python::default_python) and then `python3.X` on PATH for each 3.X, of this machine;
// none under a `root` without --python (this machine's interpreters are not the container's), and
// none with `exact`.
std::vector<std::string> extension_interpreters(const std::string& root, const std::string& python, bool exact);

// What `ldd`, `tree` and the MCP server's inspect_library ask of the files given.
struct SingleFileQuestion {
  environment::LoaderOptions loader;  // --root, --ld-library-path, LD_PRELOAD
  std::string python;                 // --python: the interpreter extension modules are loaded into
  bool exact = false;                 // --exact
  bool bind_symbols = false;          // -r
};

// Every file of `files` loaded as load_single_file loads it, in parallel, one run sharing `store`
// (every library parsed once) and the searches made; each load is handed to `each` with the
// file's index as soon as it is made, on the thread that made it.
void load_single_files(const SingleFileQuestion& question, loader::ObjectStore& store,
                       const std::vector<std::string>& files,
                       const std::function<void(size_t index, SingleFileLoad& load)>& each);

}  // namespace envdoctor::queries
