// `ldd` and `tree`: one file's listing on stdout and its errors on stderr, in ldd's words.
#include <nlohmann/json.hpp>

#include <sstream>
#include <unordered_set>

#include "report/report.h"

namespace envdoctor::report {

using loader::LoadError;
using loader::Process;

namespace {

// The loader's own words for an error, as ld.so prints them when it starts FILE (missing and
// unloadable libraries), as ldd prints version errors, and as `ldd -r` prints unbound symbols.
std::string loader_words(const std::string& file, const LoadError& e) {
  switch (e.kind) {
    case LoadError::Kind::kMissingLibrary:
    case LoadError::Kind::kWrongElfClass:
    case LoadError::Kind::kInvalidElf: return file + ": error while loading shared libraries: " + e.message;
    case LoadError::Kind::kMissingVersion: return e.aborts ? e.message : file + ": " + e.message;
    case LoadError::Kind::kUndefinedSymbol: {
      std::string what = "undefined symbol: " + e.symbol + (e.version.empty() ? "" : ", version " + e.version);
      return what + "\t(" + e.path + ")";
    }
  }
  return e.message;
}

// The file given could not be loaded at all: a file that cannot be opened, or that is no ELF
// file at all, is the tool's failure ("envdoctor: FILE why"); an ELF file the loader would reject
// is a load failure, in the loader's words.
std::string unloadable_words(const queries::SingleFileLoad& load) {
  if (!load.not_an_elf_file.empty()) return "envdoctor: " + load.file + " " + load.not_an_elf_file + "\n";
  return load.file + ": " + load.process.errors().front().reason() + "\n";
}

// Undefined symbols that wait for a missing library, as one line in the shape of `ldd -r`'s:
// "122 undefined symbols wait for libcudart.so.12, which is not found\t(PATH)".
std::string waiting_words(const queries::WaitingSymbols& w) {
  std::string line = std::to_string(w.symbols);
  line += w.symbols == 1 ? " undefined symbol waits for " : " undefined symbols wait for ";
  line += w.library;
  line += w.library.find(" or ") == std::string::npos ? ", which is not found" : ", which are not found";
  line += "\t(";
  line += w.path;
  line += ")";
  return line;
}

// After a loaded file's listing: where an extension module's C API went, then the errors.
void errors_words(const queries::SingleFileLoad& load, std::ostream& out, std::ostream& err) {
  if (load.extension) out << render_extension_summary(*load.extension);
  // ld.so says these as it preloads, before it maps anything the file needs (loader/preload.h).
  for (const loader::PreloadFailure& f : load.process.preload_failures()) err << f.message() << "\n";
  for (const LoadError& e : load.errors) err << loader_words(load.file, e) << "\n";
  for (const queries::WaitingSymbols& w : load.waiting) err << waiting_words(w) << "\n";
}

// Where an empty element of a search list (`$ORIGIN:`) looks: ld.so keeps it as "", so its
// candidates are opened from the current working directory, glibc-hwcaps subdirectories first.
std::string current_directory(loader::Rule list) {
  return std::string("the current directory (empty ") + loader::rule_name(list) + " element)";
}

std::string library_line(const Process& p, const Process::ListEntry& e) {
  if (e.object < 0) return e.missing + " => not found";
  const loader::LoadedObject& o = p.objects()[e.object];
  const std::string& libname = o.names.empty() ? o.path : o.names.front();
  if (libname == o.path) return o.path;
  return libname + " => " + o.path;
}

// One node of `tree`: the library line, the rule that found it, and below it either its own
// dependencies (the first time it appears) or, for a failure, the paths considered.
// Below a library not found that belongs beside its consumer (queries::MissingSibling): where.
void sibling_hint(const queries::SingleFileLoad& load, int consumer, const std::string& name, const std::string& indent,
                  std::ostream& out) {
  for (const queries::MissingSibling& s : load.siblings)
    if (s.consumer == consumer && s.library == name) {
      const std::string& path = load.process.objects()[consumer].path;
      std::string file = path.substr(path.rfind('/') + 1);
      out << indent << "hint: " << name << " is of " << file << "'s own build (" << s.family << "*), and " << file
          << "'s " << s.list << " $ORIGIN looks for it beside it: put " << name << " in " << s.dir << "\n";
    }
}

void tree_node(const queries::SingleFileLoad& load, int consumer, const loader::Resolution& r,
               const std::string& indent, bool last, std::unordered_set<int>& expanded, std::ostream& out) {
  const Process& p = load.process;
  out << indent << (last ? "└── " : "├── ");
  std::string child_indent = indent + (last ? "    " : "│   ");
  if (r.object < 0) {
    out << r.name << " => not found\n";
    sibling_hint(load, consumer, r.name, child_indent, out);
    if (!r.attempts.empty()) {
      out << child_indent << "Paths considered in this order:\n";
      loader::Rule group = loader::Rule::kNotFound;  // the empty element whose paths are being listed
      for (const loader::Attempt& a : r.attempts) {
        if (a.empty_element != group && a.empty_element != loader::Rule::kNotFound)
          out << child_indent << "  " << current_directory(a.empty_element) << ", as ld.so tries it:\n";
        group = a.empty_element;
        std::string_view deeper = group == loader::Rule::kNotFound ? "" : "  ";
        out << child_indent << "  " << deeper << (a.path.empty() ? "" : a.path + ": ") << a.outcome << "\n";
      }
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
  else if (rule == loader::Rule::kRpath || rule == loader::Rule::kRunpath || rule == loader::Rule::kLdLibraryPath)
    out << " " << current_directory(rule);
  if (rule == loader::Rule::kRpath && r.rpath_owner >= 0 && r.rpath_owner != r.object)
    out << " of " << p.objects()[r.rpath_owner].path;
  out << "]";
  bool expand = expanded.insert(r.object).second;
  if (!expand && !o.deps.empty()) out << " (dependencies listed above)";
  out << "\n";
  if (!expand) return;
  for (size_t i = 0; i < o.deps.size(); ++i)
    tree_node(load, r.object, o.deps[i], child_indent, i + 1 == o.deps.size(), expanded, out);
}

}  // namespace

FileText render_ldd_file(const queries::SingleFileLoad& load, bool header) {
  std::ostringstream out, err;
  if (header) out << load.file << ":\n";
  if (!load.loaded) {
    err << unloadable_words(load);
  } else {
    const Process& p = load.process;
    const auto& main = p.objects()[0];
    // glibc's ldd runs ld.so with LD_WARN: its version check says these before the listing.
    for (const Process::UnversionedNeed& n : p.unversioned_needs())
      out << load.file << ": " << p.objects()[n.provider].path << ": no version information available (required by "
          << p.objects()[n.object].path << ")\n";
    if (main.elf->needed.empty()) out << "\tstatically linked\n";
    for (const Process::ListEntry& e : p.list_order()) out << "\t" << library_line(p, e) << "\n";
    errors_words(load, out, err);
  }
  return {out.str(), err.str()};
}

FileText render_tree_file(const queries::SingleFileLoad& load) {
  std::ostringstream out, err;
  if (!load.loaded) {
    err << unloadable_words(load);
  } else {
    out << load.file << "\n";
    const Process& p = load.process;
    const auto& main = p.objects()[0];
    std::unordered_set<int> expanded = {0};
    for (size_t i = 0; i < main.deps.size(); ++i)
      tree_node(load, 0, main.deps[i], "", i + 1 == main.deps.size(), expanded, out);
    errors_words(load, out, err);
  }
  return {out.str(), err.str()};
}

std::string render_extension_summary(const imports::ExtensionLoad& ext) {
  auto symbols = [](size_t n) { return std::to_string(n) + (n == 1 ? " symbol" : " symbols"); };
  if (!ext.interpreter.empty()) {
    if (ext.bound_by_interpreter == 0) return "";
    return "\t" + symbols(ext.bound_by_interpreter) + " of the Python C API bound by " + ext.interpreter +
           ", as at import\n";
  }
  if (ext.left_to_interpreter == 0) return "";
  std::string why = !ext.note.empty() ? ext.note : "no Python interpreter found; --python EXE binds them";
  return "\t" + symbols(ext.left_to_interpreter) + " left to the interpreter (" + why + ")\n";
}

namespace {

using nlohmann::ordered_json;

std::string without_newline(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

ordered_json file_json(const queries::SingleFileLoad& load) {
  ordered_json j;
  j["file"] = load.file;
  j["loaded"] = load.loaded;
  j["failed"] = load.failed();
  j["unreadable"] = load.unreadable;
  j["problem"] = load.loaded ? ordered_json(nullptr) : ordered_json(without_newline(unloadable_words(load)));
  ordered_json libraries = ordered_json::array();
  ordered_json errors = ordered_json::array();
  if (load.loaded) {
    const Process& p = load.process;
    for (const Process::ListEntry& e : p.list_order()) {
      if (e.object < 0) {
        libraries.push_back({{"name", e.missing}, {"path", nullptr}, {"rule", nullptr}, {"source", nullptr}});
        continue;
      }
      const loader::LoadedObject& o = p.objects()[e.object];
      libraries.push_back({{"name", o.names.empty() ? o.path : o.names.front()},
                           {"path", o.path},
                           {"rule", loader::rule_name(o.rule)},
                           {"source", o.source.empty() ? ordered_json(nullptr) : ordered_json(o.source)}});
    }
    for (const LoadError& e : load.errors) errors.push_back(loader_words(load.file, e));
  }
  j["libraries"] = std::move(libraries);
  j["errors"] = std::move(errors);
  std::string extension = load.extension ? without_newline(render_extension_summary(*load.extension)) : "";
  if (!extension.empty() && extension[0] == '\t') extension.erase(0, 1);
  j["extension"] = extension.empty() ? ordered_json(nullptr) : ordered_json(extension);
  j["ldd"] = render_ldd_file(load, false).out;
  j["tree"] = render_tree_file(load).out;
  return j;
}

}  // namespace

std::string render_files_json(const std::vector<queries::SingleFileLoad>& loads) {
  ordered_json out;
  out["schema"] = 1;
  ordered_json files = ordered_json::array();
  for (const queries::SingleFileLoad& load : loads) files.push_back(file_json(load));
  out["files"] = std::move(files);
  return out.dump(1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace envdoctor::report
