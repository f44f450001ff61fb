#include "support/shared_fixture.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace envdoctor::test {

namespace {

// An exclusive flock(2) on `path` for one scope; released when the descriptor closes, so also
// when the process dies mid-build.
class FileLock {
 public:
  explicit FileLock(const fs::path& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw std::runtime_error("cannot open " + path.string());
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) throw std::runtime_error("cannot lock " + path.string());
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

// Writes `text` to `path` whole or throws: through a file beside it, renamed into place only
// after every byte reached it.
void publish(const fs::path& path, const std::string& text) {
  fs::path part = path;
  part += ".part";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + part.string());
  }
  fs::rename(part, path);
}

}  // namespace

SharedFixture shared_fixture(const std::string& name, const std::function<std::string(const TempDir& dir)>& build) {
  SharedFixture fixture;
  const char* root = std::getenv("ENVDOCTOR_TEST_SHARED");
  if (!root || !*root) {
    fixture.dir = std::make_unique<TempDir>();
    fixture.record = build(*fixture.dir);
    return fixture;
  }
  fs::create_directories(root);
  // NAME.record holds what the builder returned and NAME.dir the directory it built in; NAME.record
  // is written last, so that a process finds both or neither.
  fs::path record = fs::path(root) / (name + ".record"), dir_file = fs::path(root) / (name + ".dir");
  FileLock lock(fs::path(root) / (name + ".lock"));
  if (fs::exists(record)) {
    fixture.dir = TempDir::kept(slurp(dir_file));
    fixture.record = slurp(record);
    return fixture;
  }
  // Each try builds in a directory of its own: a builder that was killed may leave processes of
  // its own still writing in its directory. What it left goes with the run's directory.
  fs::path dir = fs::path(root) / (name + "." + std::to_string(::getpid()));
  fs::remove_all(dir);
  fixture.dir = TempDir::kept(dir);
  fixture.record = build(*fixture.dir);
  publish(dir_file, dir.string());
  publish(record, fixture.record);
  return fixture;
}

const Python3Facts& python3_facts() {
  static const Python3Facts facts = [] {
    SharedFixture asked = shared_fixture("python3-facts", [](const TempDir&) {
      nlohmann::json record = {{"runs", false}, {"pip", false}, {"include", ""}, {"ext_suffix", ""}};
      CommandResult paths =
          run("python3 -c 'import json, sysconfig; "
              "print(json.dumps([sysconfig.get_paths()[\"include\"], sysconfig.get_config_var(\"EXT_SUFFIX\")]))'");
      if (paths.status == 0) {
        nlohmann::json answer = nlohmann::json::parse(paths.out, nullptr, false);
        if (answer.is_array() && answer.size() == 2 && answer[0].is_string() && answer[1].is_string()) {
          record["runs"] = true;
          record["include"] = answer[0];
          record["ext_suffix"] = answer[1];
        }
      }
      record["pip"] = run("python3 -m pip --version").status == 0;
      return record.dump();
    });
    nlohmann::json record = nlohmann::json::parse(asked.record);
    return Python3Facts{record["runs"], record["pip"], record["include"], record["ext_suffix"]};
  }();
  return facts;
}

}  // namespace envdoctor::test
