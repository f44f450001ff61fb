#include "checks/runtime_loads.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

#include "advice/install.h"
#include "imports/python_process.h"
#include "loader/process.h"

namespace envdoctor::checks {

using environment::ElfRecord;
using environment::Environment;
using environment::Knowledge;
using environment::normalize_path;
using environment::RuntimeLoad;

namespace fs = std::filesystem;

std::vector<Finding> check_runtime_loads(const Context& ctx) {
  // What packages open by themselves is data/package_loads.json's rules (checks/package_loads.h):
  // Triton's libcuda_dirs() and TransformerEngine's loads are rules there, and no row of
  // data/runtime_loads.json has a search of its own left.
  (void)ctx;
  return {};
}

}  // namespace envdoctor::checks
