#include "queries/single_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "environment/environment.h"
#include "python/interpreter.h"
#include "support/parallel.h"
#include "support/root.h"

namespace envdoctor::queries {

using environment::has_elf_magic;
using imports::load_as_extension;

using loader::LoadError;
using loader::Process;

namespace {

// Why `path` is not something the loader model can be asked about: a directory, a device, or a
// file without the ELF magic (a script, text, data); empty for an ELF file. Asked only after the
// load failed, so a run over healthy files pays nothing for it.
std::string not_an_elf_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "";  // the loader's own words say it
  if (S_ISDIR(st.st_mode)) return "is a directory, not an ELF file";
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  // A file this user may not read (mode 000): the loader's own words say it ("Permission denied").
  if (::access(path.c_str(), R_OK) != 0) return "";
  if (has_elf_magic(path)) return "";
  return "is not an ELF file (a script or data file has no libraries to load)";
}

// The file given could not be loaded at all: a file that cannot be opened, or that is no ELF
// file at all, is the tool's failure (exit 2, "envdoctor: FILE: why"); an ELF file the loader
// would reject is a load failure (exit 1), in the loader's words.
void judge_unloadable(const std::string& host_path, SingleFileLoad& r) {
  r.not_an_elf_file = not_an_elf_file(host_path);
  if (!r.not_an_elf_file.empty()) {
    r.unreadable = true;
    return;
  }
  r.unreadable = r.process.errors().front().kind == LoadError::Kind::kMissingLibrary;
}

// Moves the undefined symbols that wait for a missing library out of `errors` into counts, one
// per library and object, in the order of each group's first symbol.
void count_waiting(SingleFileLoad& r) {
  std::vector<LoadError> kept;
  for (LoadError& e : r.errors) {
    if (e.kind != LoadError::Kind::kUndefinedSymbol || e.waiting_for.empty()) {
      kept.push_back(std::move(e));
      continue;
    }
    auto same = [&](const WaitingSymbols& w) { return w.library == e.waiting_for && w.path == e.path; };
    auto group = std::find_if(r.waiting.begin(), r.waiting.end(), same);
    if (group == r.waiting.end()) group = r.waiting.insert(r.waiting.end(), {e.waiting_for, e.path});
    ++group->symbols;
  }
  r.errors = std::move(kept);
}

// The errors to print for a loaded file: the loader's as they are, except that with -r an
// extension module's undefined symbols are those of an import into `python` (unless --exact),
// with a line that says what the interpreter bound or was left (the ExtensionLoad kept for it),
// and that symbols waiting for a missing library are counted (unless --exact).
void judge_errors(const SingleFileRun& run, const std::string& in_root, SingleFileLoad& r) {
  const Process& p = r.process;
  r.errors = p.errors();
  if (run.exact || !run.bind_symbols) return;
  r.extension = load_as_extension(p, in_root, run.python, run.store);
  if (r.extension) {
    std::erase_if(r.errors, [](const LoadError& e) { return e.kind == LoadError::Kind::kUndefinedSymbol; });
    r.errors.insert(r.errors.end(), r.extension->symbol_errors.begin(), r.extension->symbol_errors.end());
  }
  count_waiting(r);
}

// A library's family: its name up to the first '-', '_' or '.' after "lib" ("libggml" of
// libggml-cuda.so); "" when that stem is too short to tell a build apart.
std::string family_of(std::string_view name) {
  if (!name.starts_with("lib")) return "";
  size_t end = name.find_first_of("-_.", 3);
  std::string_view stem = name.substr(0, end);
  return stem.size() >= 6 ? std::string(stem) : "";
}

// Whether a DT_RUNPATH (or DT_RPATH) list has an element that is $ORIGIN itself.
bool searches_origin(std::string_view list) {
  while (true) {
    size_t colon = list.find(':');
    std::string_view element = list.substr(0, colon);
    while (element.size() > 1 && element.back() == '/') element.remove_suffix(1);
    if (element == "$ORIGIN" || element == "${ORIGIN}") return true;
    if (colon == std::string_view::npos) return false;
    list.remove_prefix(colon + 1);
  }
}

// The libraries not found that belong beside their consumer (MissingSibling).
void find_missing_siblings(SingleFileLoad& r) {
  const auto& objects = r.process.objects();
  for (size_t i = 0; i < objects.size(); ++i) {
    const loader::LoadedObject& o = objects[i];
    if (!o.elf) continue;
    std::optional<std::string_view> list = o.elf->runpath ? o.elf->runpath : o.elf->rpath;
    if (!list || !searches_origin(*list)) continue;
    std::string family = family_of(std::string_view(o.path).substr(o.path.rfind('/') + 1));
    if (family.empty()) continue;
    for (const loader::Resolution& dep : o.deps)
      if (dep.object < 0 && family_of(dep.name) == family)
        r.siblings.push_back({static_cast<int>(i), dep.name, family, r.process.origin(static_cast<int>(i)),
                              o.elf->runpath ? "RUNPATH" : "RPATH"});
  }
}

}  // namespace

SingleFileLoad load_single_file(const SingleFileRun& run, const std::string& file) {
  SingleFileLoad r{Process(run.config, run.store, run.searches), file};
  support::FileRoot root(run.config.root);
  std::string in_root = root.inside(file);
  r.loaded = r.process.load_main(in_root, run.bind_symbols);
  if (!r.loaded) judge_unloadable(root.host(in_root), r);
  else judge_errors(run, in_root, r);
  if (r.loaded) find_missing_siblings(r);
  return r;
}

std::vector<std::string> extension_interpreters(const std::string& root, const std::string& python, bool exact) {
  if (exact) return {};
  if (!python.empty()) return {support::FileRoot(root).inside(python)};
  if (!root.empty()) return {};
  std::vector<std::string> out;
  if (std::optional<std::string> found = python::default_python(nullptr)) out.push_back(*found);
  for (int minor = 6; minor <= 20; ++minor)
    for (std::string& versioned : python::find_on_path("python3." + std::to_string(minor)))
      out.push_back(std::move(versioned));
  return out;
}

void load_single_files(const SingleFileQuestion& question, loader::ObjectStore& store,
                       const std::vector<std::string>& files,
                       const std::function<void(size_t index, SingleFileLoad& load)>& each) {
  loader::LoaderConfig config = loader::LoaderConfig::for_host(question.loader.root);
  if (question.loader.ld_library_path) config.ld_library_path = *question.loader.ld_library_path;
  config.ld_preload = question.loader.ld_preload;
  // Extension modules are loaded into an interpreter only to bind their symbols.
  bool own_programs = question.exact || !question.bind_symbols;
  SingleFileRun run{config,
                    store,
                    Process::new_search_memo(),
                    extension_interpreters(question.loader.root, question.python, own_programs),
                    question.exact,
                    question.bind_symbols};
  support::parallel_for(
      files.size(),
      [&](size_t i) {
        SingleFileLoad load = load_single_file(run, files[i]);
        each(i, load);
      },
      support::fault_bound_threads(files.size()));
}

}  // namespace envdoctor::queries
