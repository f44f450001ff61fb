// libFuzzer target for the readers of an editable install's files (python/editable.h): any bytes
// as a .pth file, setuptools' finder module, the editables bootstrap and an import line; every
// path they give asked whether import reaches it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "python/editable.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace envdoctor::python;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t sink = 0;
  PthLines lines = parse_pth(text, "/v/lib/python3.11/site-packages");
  for (const std::string& line : lines.imports) sink += imported_module(line).size();
  FinderMapping finder;
  if (parse_setuptools_finder(text, &finder)) {
    for (const auto& [name, path] : finder.mapping) {
      ImportRoot module{ImportRoot::kModule, path, name, ""};
      ImportRoot package{ImportRoot::kPackage, path, name, ""};
      for (const std::string& dir : lines.dirs) sink += imports_from(module, dir) + imports_from(package, dir);
    }
    for (const auto& [name, dirs] : finder.namespaces) sink += name.size() + dirs.size();
  }
  for (const auto& [name, path] : parse_editables_bootstrap(text))
    sink += imports_from({ImportRoot::kPath, path, "", ""}, std::string(text)) + name.size();
  volatile size_t keep = sink;
  (void)keep;
  return 0;
}
