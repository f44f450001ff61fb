// How Python names and recognises an extension module, from its file alone: the file name
// importlib matches with its PyInit_ symbol, the C API's symbols that only an interpreter
// defines, and the Python version a module's name is built for.
#pragma once

#include <string>
#include <string_view>

#include "elf/elf_file.h"

namespace envdoctor::python {

// Python imports a file as an extension module by name: "<module>.<suffix>.so" defining
// PyInit_<module> (importlib's ExtensionFileLoader, PEP 489).
bool is_extension_module(std::string_view path, const elf::ElfFile& elf);

// The C API's names (Py*, _Py*): what the interpreter, never another library, provides.
bool is_python_c_api_symbol(std::string_view symbol);

// The "3.11" an extension module's file name is built for (".cpython-311-x86_64-linux-gnu.so",
// ".cpython-313t-...": the EXT_SUFFIX of PEP 3149); "" when the name does not say (".abi3.so",
// a bare ".so").
std::string extension_python_version(std::string_view path);

}  // namespace envdoctor::python
