// Compatibility tags (PEP 425, PEP 600): which wheels an interpreter can install.
//
// supported_tags() lists the tags in pip's order of preference, as packaging.tags.sys_tags()
// computes them for CPython on glibc Linux: the interpreter's own ABI (cp311, or cp311d for a
// debug build, cp37m with pymalloc before 3.8, cp313t free-threaded), then abi3 and none, over
// the platforms (manylinux_2_Y from the running glibc down to 2_5 on x86_64/i686 and 2_17
// elsewhere, with the manylinux2014/2010/1 aliases at 2.17/2.12/2.5, then linux_<arch>); then
// abi3 of the older CPython 3 versions; then the pure-Python tags py3X/py3 with each platform,
// cpXY-none-any and pyXY-none-any.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "python/interpreter.h"

namespace envdoctor::python {

struct Tag {
  std::string interpreter, abi, platform;
  std::string str() const { return interpreter + "-" + abi + "-" + platform; }
  bool operator==(const Tag&) const = default;
};

// The platform tags of packaging.tags.platform_tags() for Linux, best first.
std::vector<std::string> linux_platform_tags(const PythonEnvironment& env);

std::vector<Tag> supported_tags(const PythonEnvironment& env);

// "{distribution}-{version}(-{build tag})?-{python tag}-{abi tag}-{platform tag}.whl"; each tag
// may be a compressed set ("cp311.cp312").
struct WheelName {
  std::string name, version, build;
  std::vector<std::string> python_tags, abi_tags, platform_tags;

  static std::optional<WheelName> parse(std::string_view filename, std::string* error);
  // The project name pip takes from the filename ('_' back to '-', pip's models/wheel.py);
  // pip names the headers directory after it.
  std::string project() const;
  // The cartesian product of the three tag sets.
  std::vector<Tag> tags() const;
};

// True when any tag of the wheel's (expanded) tag sets is in `supported`.
bool wheel_supported(const WheelName& wheel, const std::vector<Tag>& supported);

}  // namespace envdoctor::python
