// envdoctor's command line: one subcommand per question (see DESIGN.md, "Command line").
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace envdoctor::cli;
  CLI::App app{"envdoctor: will every native library in this Python environment load?"};
  app.set_version_flag("--version", std::string("envdoctor ") + ENVDOCTOR_VERSION);
  app.require_subcommand(1);

  LoaderOptions loader;
  std::string ld_library_path;
  auto add_loader_options = [&](CLI::App* cmd) {
    cmd->add_option("--root", loader.root, "read a container's root file system: its ld.so.cache and dirs");
    cmd->add_option("--ld-library-path", ld_library_path,
                    "LD_LIBRARY_PATH to model (default: this process's environment)");
  };

  std::vector<std::string> files;
  CLI::App* ldd = app.add_subcommand("ldd", "the loader model on single files, in ldd's format");
  add_loader_options(ldd);
  ldd->add_option("FILE", files, "ELF files")->required();

  CLI::App* tree = app.add_subcommand("tree", "the same as a tree: why each library was found where it was");
  add_loader_options(tree);
  tree->add_option("FILE", files, "ELF files")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  for (CLI::App* cmd : {ldd, tree}) {
    if (cmd->parsed() && cmd->count("--ld-library-path")) loader.ld_library_path = ld_library_path;
  }
  if (!loader.ld_library_path) {
    if (const char* env = std::getenv("LD_LIBRARY_PATH")) loader.ld_library_path = env;
  }
  if (ldd->parsed()) return run_ldd(loader, files);
  if (tree->parsed()) return run_tree(loader, files);
  return 2;
}
