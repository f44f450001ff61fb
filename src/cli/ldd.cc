// `envdoctor ldd` and `envdoctor tree`: the load model applied to single files.
//
// Each file is its own simulated process (`ld.so --list FILE` in ldd's trace mode); files are
// loaded in parallel, sharing one ObjectStore so that every library is parsed once, and the
// results are printed in the order the files were given.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unordered_set>

#include "checks/extension_load.h"
#include "cli/commands.h"
#include "loader/process.h"
#include "python/interpreter.h"
#include "report/report.h"
#include "support/parallel.h"

namespace envdoctor::cli {

using loader::LoadError;
using loader::Process;

namespace {

struct FileReport {
  std::string out;
  std::string err;
  bool failed = false;
  bool unreadable = false;  // the file itself could not be opened: the tool could not do its job
};

loader::LoaderConfig make_config(const LoaderOptions& options) {
  loader::LoaderConfig config = loader::LoaderConfig::for_host(options.root);
  if (options.ld_library_path) config.ld_library_path = *options.ld_library_path;
  return config;
}

// The loader's own words for an error, as ld.so prints them when it starts FILE (missing and
// unloadable libraries), as ldd prints version errors, and as `ldd -r` prints unbound symbols.
std::string loader_words(const std::string& file, const LoadError& e) {
  switch (e.kind) {
    case LoadError::Kind::kMissingLibrary:
    case LoadError::Kind::kWrongElfClass:
    case LoadError::Kind::kInvalidElf: return file + ": error while loading shared libraries: " + e.message;
    case LoadError::Kind::kMissingVersion: return file + ": " + e.message;
    case LoadError::Kind::kUndefinedSymbol: {
      std::string what = "undefined symbol: " + e.symbol + (e.version.empty() ? "" : ", version " + e.version);
      return what + "\t(" + e.path + ")";
    }
  }
  return e.message;
}

template <typename Fn>
std::vector<FileReport> for_each_file(const std::vector<std::string>& files, Fn fn) {
  std::vector<FileReport> reports(files.size());
  support::parallel_for(
      files.size(), [&](size_t i) { reports[i] = fn(files[i]); }, support::fault_bound_threads(files.size()));
  return reports;
}

// Writes `text` whole to `fd`.
void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

// Prints each file's listing and then its errors, as ldd run on each file in turn would: the
// listings are gathered into large writes, and only an error message makes stdout flush first,
// so that the two streams still interleave file by file on a terminal.
int print_reports(const std::vector<FileReport>& reports) {
  int rc = 0;
  std::cout.flush();
  std::string pending;
  for (const FileReport& r : reports) {
    pending += r.out;
    if (!r.err.empty()) {
      write_all(STDOUT_FILENO, pending);
      pending.clear();
      write_all(STDERR_FILENO, r.err);
    }
    if (r.unreadable) rc = 2;
    else if (r.failed && rc == 0) rc = 1;
  }
  write_all(STDOUT_FILENO, pending);
  return rc;
}

// Why `path` is not something the loader model can be asked about: a directory, a device, or a
// file without the ELF magic (a script, text, data); empty for an ELF file. Asked only after the
// load failed, so a run over healthy files pays nothing for it.
std::string not_an_elf_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "";  // the loader's own words say it
  if (S_ISDIR(st.st_mode)) return "is a directory, not an ELF file";
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  char magic[4] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(magic, sizeof magic);
  if (in.gcount() == 4 && std::memcmp(magic,
                                      "\x7f"
                                      "ELF",
                                      4) == 0)
    return "";
  return "is not an ELF file (a script or data file has no libraries to load)";
}

// The file given could not be loaded at all: a file that cannot be opened, or that is no ELF
// file at all, is the tool's failure (exit 2, "envdoctor: FILE: why"); an ELF file the loader
// would reject is a load failure (exit 1), in the loader's words.
void report_unloadable(const Process& p, const std::string& file, const std::string& host_path, FileReport& r,
                       std::ostream& err) {
  const LoadError& e = p.errors().front();
  r.failed = true;
  if (std::string why = not_an_elf_file(host_path); !why.empty()) {
    err << "envdoctor: " << file << " " << why << "\n";
    r.unreadable = true;
    return;
  }
  err << file << ": " << e.reason() << "\n";
  r.unreadable = e.kind == LoadError::Kind::kMissingLibrary;
}

// The errors to print for a loaded file: the loader's as they are, except that an extension
// module's undefined symbols are those of an import into `python` (unless --exact), with a line
// that says what the interpreter bound or was left.
std::vector<LoadError> errors_to_print(const Process& p, const std::string& in_root, const LddOptions& options,
                                       const std::vector<std::string>& python, loader::ObjectStore& store,
                                       std::ostream& out) {
  if (options.exact) return p.errors();
  std::optional<checks::ExtensionLoad> ext = checks::load_as_extension(p, in_root, python, store);
  if (!ext) return p.errors();
  std::vector<LoadError> errors;
  for (const LoadError& e : p.errors())
    if (e.kind != LoadError::Kind::kUndefinedSymbol) errors.push_back(e);
  errors.insert(errors.end(), ext->symbol_errors.begin(), ext->symbol_errors.end());
  out << report::render_extension_summary(*ext);
  return errors;
}

std::string library_line(const Process& p, const Process::ListEntry& e) {
  if (e.object < 0) return e.missing + " => not found";
  const loader::LoadedObject& o = p.objects()[e.object];
  const std::string& libname = o.names.empty() ? o.path : o.names.front();
  if (libname == o.path) return o.path;
  return libname + " => " + o.path;
}

FileReport ldd_one(const loader::LoaderConfig& config, loader::ObjectStore& store,
                   const std::shared_ptr<Process::SearchMemo>& searches, const LddOptions& options,
                   const std::vector<std::string>& python, const std::string& file, bool header) {
  FileReport r;
  std::ostringstream out, err;
  if (header) out << file << ":\n";
  Process p(config, store, searches);
  support::FileRoot root(options.loader.root);
  std::string in_root = root.inside(file);
  bool loaded = p.load_main(in_root);
  if (!loaded) {
    report_unloadable(p, file, root.host(in_root), r, err);
  } else {
    const auto& main = p.objects()[0];
    if (main.elf->needed.empty()) out << "\tstatically linked\n";
    for (const Process::ListEntry& e : p.list_order()) out << "\t" << library_line(p, e) << "\n";
    std::vector<LoadError> errors = errors_to_print(p, in_root, options, python, store, out);
    for (const LoadError& e : errors) err << loader_words(file, e) << "\n";
    r.failed = !errors.empty();
  }
  r.out = out.str();
  r.err = err.str();
  return r;
}

// One node of `tree`: the library line, the rule that found it, and below it either its own
// dependencies (the first time it appears) or, for a failure, the paths considered.
void tree_node(const Process& p, const loader::Resolution& r, const std::string& indent, bool last,
               std::unordered_set<int>& expanded, std::ostream& out) {
  out << indent << (last ? "└── " : "├── ");
  std::string child_indent = indent + (last ? "    " : "│   ");
  if (r.object < 0) {
    out << r.name << " => not found\n";
    if (!r.attempts.empty()) {
      out << child_indent << "Paths considered in this order:\n";
      for (const loader::Attempt& a : r.attempts)
        out << child_indent << "  " << (a.path.empty() ? "" : a.path + ": ") << a.outcome << "\n";
    } else {
      out << child_indent << "No path was tried.\n";
    }
    return;
  }
  const loader::LoadedObject& o = p.objects()[r.object];
  out << r.name;
  if (r.name != o.path) out << " => " << o.path;
  // How it was found (for a library already loaded: how it was found the first time), and where.
  bool first = r.rule != loader::Rule::kLoaded;
  loader::Rule rule = first ? r.rule : o.rule;
  const std::string& source = first ? r.source : o.source;
  out << " [" << loader::rule_name(rule);
  if (!source.empty()) out << " " << source;
  if (rule == loader::Rule::kRpath && r.rpath_owner >= 0 && r.rpath_owner != r.object)
    out << " of " << p.objects()[r.rpath_owner].path;
  out << "]";
  bool expand = expanded.insert(r.object).second;
  if (!expand && !o.deps.empty()) out << " (dependencies listed above)";
  out << "\n";
  if (!expand) return;
  for (size_t i = 0; i < o.deps.size(); ++i)
    tree_node(p, o.deps[i], child_indent, i + 1 == o.deps.size(), expanded, out);
}

FileReport tree_one(const loader::LoaderConfig& config, loader::ObjectStore& store,
                    const std::shared_ptr<Process::SearchMemo>& searches, const LddOptions& options,
                    const std::vector<std::string>& python, const std::string& file) {
  FileReport r;
  std::ostringstream out, err;
  Process p(config, store, searches);
  support::FileRoot root(options.loader.root);
  std::string in_root = root.inside(file);
  if (!p.load_main(in_root)) {
    report_unloadable(p, file, root.host(in_root), r, err);
  } else {
    out << file << "\n";
    const auto& main = p.objects()[0];
    std::unordered_set<int> expanded = {0};
    for (size_t i = 0; i < main.deps.size(); ++i)
      tree_node(p, main.deps[i], "", i + 1 == main.deps.size(), expanded, out);
    std::vector<LoadError> errors = errors_to_print(p, in_root, options, python, store, out);
    for (const LoadError& e : errors) err << loader_words(file, e) << "\n";
    r.failed = !errors.empty();
  }
  r.out = out.str();
  r.err = err.str();
  return r;
}

// The store of one command, kept until the process exits: tearing down hundreds of mappings and
// parsed files one by one takes longer than the work that used them (lld skips its frees at exit
// for the same reason), and the kernel drops the address space in one go. It stays reachable, so
// LeakSanitizer does not count it as a leak.
loader::ObjectStore& store_for_this_run(const std::string& root) {
  static loader::ObjectStore* store = new loader::ObjectStore(root);
  return *store;
}

// The interpreters extension modules are loaded into: --python alone; else, as `check` finds
// one (python::default_python) and then `python3.X` on PATH for each 3.X, of this machine; none
// under --root without --python (this machine's interpreters are not the container's).
std::vector<std::string> interpreters_for(const LddOptions& options) {
  if (options.exact) return {};
  if (!options.python.empty()) return {support::FileRoot(options.loader.root).inside(options.python)};
  if (!options.loader.root.empty()) return {};
  std::vector<std::string> out;
  if (std::optional<std::string> found = python::default_python(nullptr)) out.push_back(*found);
  for (int minor = 6; minor <= 20; ++minor)
    for (std::string& versioned : python::find_on_path("python3." + std::to_string(minor)))
      out.push_back(std::move(versioned));
  return out;
}

}  // namespace

int run_ldd(const LddOptions& options, const std::vector<std::string>& files) {
  loader::LoaderConfig config = make_config(options.loader);
  loader::ObjectStore& store = store_for_this_run(options.loader.root);
  std::shared_ptr<Process::SearchMemo> searches = Process::new_search_memo();  // every file's
  std::vector<std::string> python = interpreters_for(options);
  bool header = files.size() > 1;
  return print_reports(for_each_file(
      files, [&](const std::string& f) { return ldd_one(config, store, searches, options, python, f, header); }));
}

int run_tree(const LddOptions& options, const std::vector<std::string>& files) {
  loader::LoaderConfig config = make_config(options.loader);
  loader::ObjectStore& store = store_for_this_run(options.loader.root);
  std::shared_ptr<Process::SearchMemo> searches = Process::new_search_memo();  // every file's
  std::vector<std::string> python = interpreters_for(options);
  return print_reports(for_each_file(
      files, [&](const std::string& f) { return tree_one(config, store, searches, options, python, f); }));
}

}  // namespace envdoctor::cli
