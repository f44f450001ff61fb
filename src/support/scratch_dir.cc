#include "support/scratch_dir.h"

#include <stdlib.h>

namespace envdoctor::support {

namespace fs = std::filesystem;

std::shared_ptr<ScratchDir> ScratchDir::create(const std::string& prefix, std::string* error) {
  std::string pattern = (fs::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) {
    *error = "cannot create a temporary directory in " + fs::temp_directory_path().string();
    return nullptr;
  }
  return std::shared_ptr<ScratchDir>(new ScratchDir(pattern));
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace envdoctor::support
