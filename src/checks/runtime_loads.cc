#include "checks/runtime_loads.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

#include "advice/install.h"
#include "checks/triton_driver.h"
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
  std::vector<Finding> out;
  // A package's own search (Triton's libcuda_dirs), read from the package itself; TransformerEngine's
  // loads are rules of data/package_loads.json.
  for (const RuntimeLoad& row : ctx.knowledge.runtime_loads()) {
    std::vector<Finding> own;
    if (row.search == "triton") own = check_triton_driver(ctx, row);
    for (Finding& f : own) out.push_back(std::move(f));
  }
  return out;
}

}  // namespace envdoctor::checks
