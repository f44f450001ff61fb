// What `--image` reads from an image it does not control: tar entry paths (normalize_entry_path),
// a whole layer (libarchive's stream into the layer cache, then composed into a root), an OCI
// index (the manifest it names need not exist), /etc/environment, NVIDIA_REQUIRE_* expressions
// evaluated as the container toolkit evaluates them, a SIF image (its global header, descriptor
// table and the squashfs its primary partition points at), Apptainer's environment scripts, and a
// squashfs image alone (every entry read to its end, through libsquashfs and, for LZO, liblzo2).
// The first byte picks which; none
// may crash, hang, read out of bounds, or write outside the fuzzer's own directory.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "image/archive.h"
#include "image/compose.h"
#include "image/image.h"
#include "image/layer.h"
#include "image/requirements.h"
#include "image/shell_environment.h"
#include "image/sif.h"
#include "image/squashfs.h"

namespace {

namespace fs = std::filesystem;
using namespace envdoctor;

// A directory of the process's own, removed at exit.
struct Scratch {
  std::string dir;
  Scratch() {
    char tmpl[] = "/tmp/envdoctor-image-fuzz-XXXXXX";
    if (!::mkdtemp(tmpl)) std::abort();
    dir = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

const std::string& scratch() {
  static const Scratch s;
  return s.dir;
}

void layer(const std::string& bytes) {
  std::string cache = scratch() + "/cache";
  std::error_code ec;
  fs::remove_all(cache, ec);
  bool given = false;
  image::ChunkSource source = [&](const void** data, std::string*) -> i64 {
    if (given) return 0;
    given = true;
    *data = bytes.data();
    return static_cast<i64>(bytes.size());
  };
  std::string error;
  // Named by a digest it cannot have: read to the end, digested, refused, and nothing cached.
  std::unique_ptr<image::EntryReader> named = image::open_tar_stream(source, &error);
  if (!named) return;
  if (image::cache_layer(cache, "sha256-named", *named, {"", "sha256:" + std::string(64, '0')}, &error))
    __builtin_trap();
  if (fs::exists(cache + "/layers/sha256-named")) __builtin_trap();
  given = false;
  std::unique_ptr<image::EntryReader> reader = image::open_tar_stream(source, &error);
  if (!reader) return;
  std::optional<image::Layer> cached = image::cache_layer(cache, "sha256-fuzz", *reader, {}, &error);
  if (!cached) return;
  std::vector<std::string> problems;
  (void)image::compose_root(cache, "sha256-fuzz", {*cached}, &problems, &error);
  // Everything the layer made lies in the cache.
  for (const fs::directory_entry& e : fs::directory_iterator(scratch()))
    if (e.path().filename() != "cache" && e.path().filename() != "layout" && e.path().filename() != "image.sif" &&
        e.path().filename() != "image.sqsh")
      __builtin_trap();
}

void index(const std::string& bytes) {
  std::string layout = scratch() + "/layout";
  fs::create_directories(layout);
  std::ofstream(layout + "/index.json", std::ios::binary) << bytes;
  image::ImageOptions options;
  options.cache = scratch() + "/cache";
  options.prefix = "/";
  std::string error;
  (void)image::open_image(layout, options, &error);
}

void requirements(const std::string& bytes) {
  image::NodeFacts node;
  node.driver = "470.57.02";
  node.cuda_below = "12.0";
  node.devices = {{"8.0", std::string("tesla")}, {"9.0", std::nullopt}};
  image::RequirementVerdict v = image::evaluate_requirements(image::parse_environment_file(bytes), node);
  if (v.refused && v.message.empty()) __builtin_trap();  // a refusal always says why
  size_t half = bytes.size() / 2;
  (void)image::compare_versions(bytes.substr(0, half), ">=", bytes.substr(half));
}

// The bytes as a SIF file: whatever its header and descriptors claim, a partition found lies
// inside the file, and opening the image reads only inside it.
void sif(const std::string& bytes) {
  std::string path = scratch() + "/image.sif";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  std::string error;
  std::optional<image::SifRoot> root = image::sif_root_partition(path, nullptr, &error);
  if (root) {
    if (!root->partition.size || root->partition.offset > bytes.size() ||
        *root->partition.size > bytes.size() - root->partition.offset)
      __builtin_trap();
    image::ImageOptions options;
    options.cache = scratch() + "/cache";
    options.prefix = "/";
    (void)image::open_image(path, options, &error);
  } else if (error.empty()) {
    __builtin_trap();  // a refusal always says why
  }
}

// The bytes as a squashfs image: whatever its superblock and tables claim, every entry and all
// of its data is read, or the image is refused with a reason.
void squashfs(const std::string& bytes) {
  std::string path = scratch() + "/image.sqsh";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  std::string error;
  std::unique_ptr<image::EntryReader> reader = image::open_squashfs(path, {}, &error);
  if (!reader) {
    if (error.empty()) __builtin_trap();  // a refusal always says why
    return;
  }
  image::RawEntry e;
  char buffer[65536];
  while (reader->next(e, &error))
    while (reader->read(buffer, sizeof buffer, &error) > 0) {
    }
}

void shell_environment(const std::string& bytes) {
  image::Environment env;
  std::vector<std::string> skipped;
  image::apply_shell_environment("fuzz.sh", bytes, env, &skipped);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string normal;
  switch (data[0] % 7) {
    case 0:
      if (image::normalize_entry_path(bytes, &normal) &&
          (normal.starts_with("/") || normal == ".." || normal.starts_with("../") ||
           normal.find("/../") != normal.npos))
        __builtin_trap();  // a normal path never leaves the root
      break;
    case 1: layer(bytes); break;
    case 2: index(bytes); break;
    case 3: requirements(bytes); break;
    case 4: sif(bytes); break;
    case 5: shell_environment(bytes); break;
    case 6: squashfs(bytes); break;
  }
  return 0;
}
