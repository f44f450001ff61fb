#include "python/extension_module.h"

#include <cctype>

namespace envdoctor::python {

namespace {

std::string_view file_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool is_extension_module(std::string_view path, const elf::ElfFile& elf) {
  std::string_view name = file_name(path);
  if (name.size() < 4 || name.substr(name.size() - 3) != ".so") return false;
  std::string_view module = name.substr(0, name.find('.'));
  return !elf.find_symbols("PyInit_" + std::string(module)).empty();
}

bool is_python_c_api_symbol(std::string_view symbol) {
  return symbol.substr(0, 2) == "Py" || symbol.substr(0, 3) == "_Py";
}

std::string extension_python_version(std::string_view path) {
  std::string_view name = file_name(path);
  size_t at = name.find(".cpython-");
  if (at == std::string_view::npos) return "";
  std::string_view tag = name.substr(at + 9);  // "311-x86_64-linux-gnu.so"
  size_t digits = 0;
  while (digits < tag.size() && std::isdigit(static_cast<unsigned char>(tag[digits]))) ++digits;
  if (digits < 2) return "";
  return std::string(tag.substr(0, 1)) + "." + std::string(tag.substr(1, digits - 1));
}

}  // namespace envdoctor::python
