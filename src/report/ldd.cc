#include "report/report.h"

namespace envdoctor::report {

std::string render_extension_summary(const checks::ExtensionLoad& ext) {
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

}  // namespace envdoctor::report
