#include "imports/extension_load.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "support/root.h"

namespace envdoctor::imports {

using python::extension_python_version;
using python::is_extension_module;
using python::is_python_c_api_symbol;

namespace fs = std::filesystem;
using python::extension_python_version;
using python::is_extension_module;
using python::is_python_c_api_symbol;

namespace {

using loader::LoadError;

std::string_view file_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// "3.11" from the front of "3.11.so.1.0", "3.11d" or "3.11": digits, one dot, digits.
std::string leading_version(std::string_view text) {
  size_t n = 0, dots = 0;
  while (n < text.size() && (std::isdigit(static_cast<unsigned char>(text[n])) || text[n] == '.')) {
    if (text[n] == '.' && ++dots > 1) break;
    ++n;
  }
  std::string v(text.substr(0, n));
  if (!v.empty() && v.back() == '.') v.pop_back();
  return dots >= 1 && v.find('.') != std::string::npos && v.back() != '.' ? v : "";
}

// The Python version an interpreter's loaded main program is: its libpython's name
// (libpython3.11.so.1.0) for a shared build, else its own file name (python3.11). "" if neither
// says, as for a bare `python` that is not a link to a versioned name.
std::string interpreter_version(const loader::Process& p) {
  const loader::LoadedObject& main = p.objects().front();
  for (std::string_view needed : main.elf->needed)
    if (needed.substr(0, 9) == "libpython") return leading_version(needed.substr(9));
  std::string_view name = file_name(main.path);
  return name.substr(0, 6) == "python" ? leading_version(name.substr(6)) : "";
}

size_t count_c_api(const std::vector<LoadError>& errors) {
  return std::count_if(errors.begin(), errors.end(), [](const LoadError& e) {
    return e.kind == LoadError::Kind::kUndefinedSymbol && is_python_c_api_symbol(e.symbol);
  });
}

}  // namespace

std::optional<ExtensionLoad> load_as_extension(const loader::Process& listed, const std::string& path,
                                               const std::vector<std::string>& candidates, loader::ObjectStore& store) {
  if (listed.objects().empty() || !is_extension_module(path, *listed.objects().front().elf)) return std::nullopt;
  ExtensionLoad out;
  size_t unbound_c_api = count_c_api(listed.errors());
  std::string wanted = extension_python_version(path);
  support::FileRoot root(listed.config().root);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string& python = candidates[i];
    if (python.empty()) continue;
    // After the first, only interpreters whose name does not say another version are loaded.
    std::string_view name = file_name(python);
    if (i > 0 && !wanted.empty() && name.substr(0, 6) == "python" && !leading_version(name.substr(6)).empty() &&
        leading_version(name.substr(6)) != wanted)
      continue;
    // As check does (load_checks.cc, base_process): the interpreter by its real path, so that its
    // $ORIGIN and name are those of the installed file, not of a venv's link to it.
    std::error_code ec;
    std::string real = root.empty() ? fs::weakly_canonical(python, ec).string() : root.canonical(python);
    if (real.empty() || ec) real = python;
    loader::Process import(listed.config(), store);
    std::string why;
    if (!import.load_main(real)) {
      why = python + " cannot be loaded: " + import.errors().front().reason();
    } else if (std::string have = interpreter_version(import); !wanted.empty() && !have.empty() && have != wanted) {
      why = python + " is Python " + have + "; the module is built for " + wanted;
    } else {
      // import: dlopen(path, RTLD_NOW | RTLD_LOCAL) from the interpreter.
      loader::Process::DlopenResult r = import.dlopen(path, false, 0);
      for (LoadError& e : r.errors)
        if (e.kind == LoadError::Kind::kUndefinedSymbol) out.symbol_errors.push_back(std::move(e));
      out.interpreter = real;
      size_t still = count_c_api(out.symbol_errors);
      out.bound_by_interpreter = unbound_c_api > still ? unbound_c_api - still : 0;
      out.note.clear();
      return out;
    }
    if (out.note.empty()) out.note = why;  // the first candidate's, which the user asked for or expects
  }
  for (const LoadError& e : listed.errors())
    if (e.kind == LoadError::Kind::kUndefinedSymbol && !is_python_c_api_symbol(e.symbol))
      out.symbol_errors.push_back(e);
  out.left_to_interpreter = unbound_c_api;
  return out;
}

}  // namespace envdoctor::imports
