// What every environment-level question (check, why, cuda, pip, ps, and the MCP tools) starts
// from: the environment built from the common options (--python, --prefix, --no-exec, --root,
// --ld-library-path, --image), the node it runs on (--gpu, --driver, --node; environment/node.h)
// with NVIDIA's tables, and the knowledge tables. The command line prints a failure and exits 2;
// the MCP server returns it as a tool error; both say the same sentence.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "cuda/tables.h"
#include "environment/environment.h"
#include "environment/knowledge.h"
#include "environment/node.h"

namespace envdoctor::environment {

struct LoaderOptions {
  std::string root;                            // --root
  std::string image;                           // --image REF: the root its layers make (image/image.h)
  std::optional<std::string> ld_library_path;  // --ld-library-path (else the environment's)
  std::string glibc_tunables;                  // GLIBC_TUNABLES of the environment (static TLS)
  std::string ld_preload;                      // LD_PRELOAD of the environment (loader/preload.h)
  // With --image: the node's driver when the image is to run as a GPU container, whose start by
  // the NVIDIA container toolkit rebuilds its ld.so.cache (image/gpu_container.h).
  std::optional<cuda::DriverVersion> gpu_container_driver;
};

struct EnvironmentRequest {
  std::string python;  // --python EXE
  std::string prefix;  // --prefix DIR
  bool no_exec = false;
  LoaderOptions loader;
  // The node to read (--gpu, --driver, --node; this machine's for what they leave out); nullopt
  // for a question that asks nothing of it (ps), whose session's node is empty.
  std::optional<NodeRequest> node = {};
  // The node already read, which a session opened again (fix_trial.h's reopen, the other
  // environments of --all-environments) takes as it is: read once.
  std::optional<Node> node_read = {};
  // A command's session, kept until the process exits (Session::keep_until_exit).
  bool keep_until_exit = false;
};

struct Session {
  std::unique_ptr<const Environment> env;  // as assembled: nothing changes it (a what-if is an overlay)
  Knowledge knowledge;
  cuda::CudaTables tables;
  Node node;  // the GPUs and driver the checks are for (empty where the request asked none)
  // The request as opened, with the node it read: the same environment opened again (fix trials)
  // reads nothing twice.
  EnvironmentRequest request;
  // A command's session lasts until the process exits, which hands the environment's thousands
  // of mappings and parsed files back to the kernel at once: unmapping and freeing them one by
  // one first costs several percent of a `check`. A server's sessions are freed.
  bool keep_until_exit = false;

  Session() = default;
  Session(Session&&) = default;
  Session& operator=(Session&&) = default;
  ~Session() {
    if (keep_until_exit) (void)env.release();
  }
};

// nullopt with `error` set to a sentence naming the option or file that is wrong: options that
// do not go together (--root without --prefix, a venv's directory given as --python), an
// environment that cannot be read, tables that cannot be loaded, a node that cannot be read
// (read_node). NVIDIA's tables are loaded once, before the node (a --gpu is held to them); under
// --image the image starts as a GPU container on the node's driver, when it has one. Under --image, the image's
// composed root is the root, its Python (or --python/--prefix, paths inside the image) the
// environment, read without running anything, and its Env's LD_LIBRARY_PATH the loader's unless
// --ld-library-path says otherwise.
std::optional<Session> open_session(EnvironmentRequest request, std::string* error);

// LD_LIBRARY_PATH and GLIBC_TUNABLES as a Python started from this process would have them,
// where the request does not say: this machine's are not a container's, so under --root or
// --image only what the request (or the image) says counts.
void inherit_process_loader(LoaderOptions& loader);

}  // namespace envdoctor::environment
