#include "python/tags.h"

#include <sstream>

#include "fixtures/python_fixture.h"
#include "python/wheel.h"

namespace envdoctor::python {
namespace {

std::vector<std::string> strings(const std::vector<Tag>& tags) {
  std::vector<std::string> out;
  for (const Tag& t : tags) out.push_back(t.str());
  return out;
}

// The referee: pip's vendored packaging.tags.sys_tags() in the same interpreter.
std::vector<std::string> pip_sys_tags(const std::string& python) {
  test::CommandResult r = test::run(
      test::quote(python) + " -c 'from pip._vendor.packaging import tags; print(*tags.sys_tags(), sep=\"\\n\")'");
  std::vector<std::string> out;
  if (r.status != 0) return out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string packaging_version(const std::string& python) {
  test::CommandResult r =
      test::run(test::quote(python) + " -c 'import pip._vendor.packaging as p; print(p.__version__)'");
  return r.out.substr(0, r.out.find('\n'));
}

void expect_same_as_pip(const std::string& python) {
  std::vector<std::string> expected = pip_sys_tags(python);
  if (expected.empty()) GTEST_SKIP() << python << " has no pip";
  std::string error;
  auto env = discover_interpreter({python}, &error);
  ASSERT_TRUE(env) << error;
  std::vector<std::string> ours = strings(supported_tags(*env));
  // packaging before 22.0 did not yield "cpXY-none-any" (added in pypa/packaging#466); what
  // envdoctor follows is the newer list.
  std::string version = packaging_version(python);
  if (!version.empty() && version < "22") {
    std::string cp_none_any =
        "cp" + std::to_string(env->version_info.major) + std::to_string(env->version_info.minor) + "-none-any";
    std::erase(ours, cp_none_any);
  }
  EXPECT_EQ(ours.size(), expected.size());
  EXPECT_EQ(ours, expected);
}

TEST(Tags, SameAsPipForPython311) {
  if (!test::have_tool("python3")) GTEST_SKIP() << "python3 not found";
  expect_same_as_pip("python3");
}

TEST(Tags, SameAsPipForPython313) {
  std::string python = test::pyenv_python("3.13.0");
  if (python.empty()) GTEST_SKIP() << "no Python 3.13";
  expect_same_as_pip(python);
}

TEST(Tags, ManylinuxForGlibc217OnAarch64) {
  PythonEnvironment env;
  env.version_info = {3, 12, 0};
  env.implementation = "cpython";
  env.sysconfig_platform = "linux-aarch64";
  env.glibc_version = "2.18";
  EXPECT_EQ(linux_platform_tags(env), (std::vector<std::string>{"manylinux_2_18_aarch64", "manylinux_2_17_aarch64",
                                                                "manylinux2014_aarch64", "linux_aarch64"}));
  std::vector<std::string> tags = strings(supported_tags(env));
  EXPECT_EQ(tags.front(), "cp312-cp312-manylinux_2_18_aarch64");
  EXPECT_EQ(tags.back(), "py30-none-any");
}

TEST(Tags, DebugAndOldAbis) {
  PythonEnvironment env;
  env.implementation = "cpython";
  env.sysconfig_platform = "linux-x86_64";
  env.version_info = {3, 7, 16};
  env.with_pymalloc = true;
  EXPECT_EQ(supported_tags(env).front().str(), "cp37-cp37m-linux_x86_64");
  env.version_info = {3, 12, 1};
  env.py_debug = true;
  std::vector<std::string> tags = strings(supported_tags(env));
  EXPECT_EQ(tags[0], "cp312-cp312d-linux_x86_64");
  EXPECT_EQ(tags[1], "cp312-cp312-linux_x86_64");
  EXPECT_EQ(tags[2], "cp312-abi3-linux_x86_64");
}

TEST(Tags, WheelSupported) {
  PythonEnvironment env;
  env.implementation = "cpython";
  env.sysconfig_platform = "linux-x86_64";
  env.version_info = {3, 11, 7};
  env.glibc_version = "2.36";
  std::vector<Tag> supported = supported_tags(env);
  auto ok = [&](const char* filename) {
    std::string error;
    auto name = WheelName::parse(filename, &error);
    EXPECT_TRUE(name) << error;
    return name && wheel_supported(*name, supported);
  };
  EXPECT_TRUE(ok("torch-2.1.0-cp311-cp311-manylinux1_x86_64.whl"));
  EXPECT_TRUE(ok("flash_attn-2.5.0-cp310.cp311.cp312-cp310.cp311.cp312-manylinux_2_28_x86_64.whl"));
  EXPECT_TRUE(ok("cryptography-42.0.0-cp39-abi3-manylinux_2_28_x86_64.whl"));
  EXPECT_TRUE(ok("six-1.16.0-py2.py3-none-any.whl"));
  EXPECT_FALSE(ok("torch-2.1.0-cp312-cp312-manylinux1_x86_64.whl"));
  EXPECT_FALSE(ok("numpy-1.26.0-cp311-cp311-manylinux_2_38_x86_64.whl"));  // needs a newer glibc
  EXPECT_FALSE(ok("numpy-1.26.0-cp311-cp311-musllinux_1_1_x86_64.whl"));
  EXPECT_FALSE(ok("numpy-1.26.0-cp311-cp311-manylinux_2_17_aarch64.whl"));
  EXPECT_FALSE(ok("foo-1.0-py2-none-any.whl"));
}

}  // namespace
}  // namespace envdoctor::python
