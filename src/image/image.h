// A container image as the pipeline reads it (`--image REF`): its root file system composed from
// its layers in the cache (layer.h, compose.h), its configuration's environment, and the Python
// it would run, found without running anything.
//
// REF is, as skopeo names the transports:
//   DIR or DIR:TAG    an OCI image layout (`oci:`): index.json, the manifest whose
//                     org.opencontainers.image.ref.name is TAG (or the only one), its blobs
//   FILE or FILE:TAG  an OCI archive (`oci-archive:`, a tar of a layout), or a `docker save` /
//                     `podman save` archive (`docker-archive:`: manifest.json's Config and
//                     Layers; TAG picks among RepoTags)
//   FILE.sqsh         a squashfs image of a root file system (enroot's), its environment from
//                     /etc/environment
//   FILE.sif          an Apptainer/Singularity image (sif.h): its primary system partition's
//                     squashfs, its environment from /.singularity.d/env (shell_environment.h)
// Layers are read once each, in parallel, and cached by their diff_id (the digest of the
// uncompressed layer, which an OCI layout and a docker archive of one image share).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "image/archive.h"
#include "image/cache.h"

namespace envdoctor::image {

struct ImageFacts {
  std::string reference;      // as given
  std::string format;         // "oci-layout", "oci-archive", "docker-archive", "squashfs", "sif"
  std::string digest;         // the manifest's digest ("sha256:..."); "" when the format has none
  std::string config_digest;  // the image ID; "" for squashfs and SIF
  std::vector<std::pair<std::string, std::string>> env;  // the configuration's Env, in order
  std::vector<std::string> entrypoint, cmd;
  size_t layers = 0;
  std::string interpreter;  // the Python chosen, as the image spells its path
  // How it was chosen: with --prefix (no interpreter), --python, the Entrypoint's or Cmd's Python,
  // or python3 (else python) on the image's PATH.
  enum class InterpreterSource { kPrefix, kPython, kEntrypoint, kCmd, kPath };
  InterpreterSource interpreter_source = InterpreterSource::kPath;
  std::string prefix;                 // its environment's prefix inside the image
  std::vector<std::string> problems;  // entries left out, and why
  // The cache entries the root is made of, held until the last copy of these facts is gone, so
  // that no eviction removes them while the checks read the root (cache.h).
  std::shared_ptr<CacheLease> lease;

  // The value of `name` in the image's environment (the last one set), nullopt when unset.
  std::optional<std::string> env_value(const std::string& name) const;
};

// "--prefix", "--python", "Entrypoint", "Cmd", "PATH": how the interpreter was chosen, in the
// words of the option or of the image's configuration.
const char* interpreter_source_name(ImageFacts::InterpreterSource source);

struct ImageOptions {
  std::string cache;               // "" for cache_root()
  ReadCounter* counter = nullptr;  // every byte read from the image's files
  size_t threads = 2;              // layers decompressed at once
  std::string python;              // --python: an interpreter path inside the image
  std::string prefix;              // --prefix: an environment's prefix inside the image
};

struct OpenedImage {
  std::string root;  // the composed root file system, on this machine
  ImageFacts facts;
};

// nullopt with `error` set to a sentence that names the reference and what is wrong.
std::optional<OpenedImage> open_image(const std::string& reference, const ImageOptions& options, std::string* error);

// KEY=VALUE lines of /etc/environment (pam_env's simple form, as enroot writes it): blank lines
// and comments skipped, an `export ` prefix and one pair of surrounding quotes removed.
std::vector<std::pair<std::string, std::string>> parse_environment_file(const std::string& text);

}  // namespace envdoctor::image
