// transformer_engine/common/__init__.py in the shapes of its releases, written in the tests' own
// words: the statements that the rules transformer-engine-* of data/package_loads.json model (and
// their fingerprints hold) are those of the release, the comments and layout are not. Shared by the
// rules' unit tests (tests/check) and the import refereed in a chroot (tests/root).
#pragma once

#include <string>

namespace envdoctor::test {

struct TePerLibraryShape {
  bool dotless_extension = false;  // 2.4: _get_sys_extension() gives "so", the f-strings put the dot
  bool cudnn_ldconfig = true;      // 2.6 on: _load_cudnn asks ldconfig too
  bool nvrtc_grep_prefix = false;  // 2.4, 2.5: grep 'libnvrtc', the builtins and stubs skipped after
  bool curand = true;              // 2.8 on: _load_curand
  bool ldconfig_list = false;      // 2.10: check_output(["ldconfig", "-p"]), no grep
  bool sanity_checks = false;      // 2.9 on: sanity_checks_for_pypi_installation() first
};

// 2.4 to 2.10: a function per library.
std::string te_per_library_init(const TePerLibraryShape& shape);

// 2.11 and later: one search for every library, then the loads required from the wheels where
// neither NVRTC nor cuRAND came from the system.
std::string te_shared_init();

}  // namespace envdoctor::test
