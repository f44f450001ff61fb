// `envdoctor ldd` and `envdoctor tree`: the load model applied to single files.
//
// Each file is its own simulated process (`ld.so --list FILE` in ldd's trace mode, with -r as
// `ldd -r`: queries::load_single_file); files are loaded in parallel, sharing one ObjectStore so that every
// library is parsed once, and the results are rendered (report::render_ldd_file,
// render_tree_file) and printed in the order the files were given.
#include <unistd.h>

#include <cerrno>
#include <iostream>

#include "cli/commands.h"
#include "loader/process.h"
#include "queries/single_file.h"
#include "report/report.h"
#include "support/parallel.h"

namespace envdoctor::cli {

using environment::LoaderOptions;

using loader::Process;

namespace {

struct FileReport {
  report::FileText text;
  bool failed = false;
  bool unreadable = false;  // the file itself could not be opened: the tool could not do its job
};

loader::LoaderConfig make_config(const LoaderOptions& options) {
  loader::LoaderConfig config = loader::LoaderConfig::for_host(options.root);
  if (options.ld_library_path) config.ld_library_path = *options.ld_library_path;
  config.ld_preload = options.ld_preload;
  return config;
}

// Loads every file as queries::load_single_file does and renders each with `render`.
template <typename Render>
std::vector<FileReport> for_each_file(const queries::SingleFileRun& run, const std::vector<std::string>& files,
                                      Render render) {
  std::vector<FileReport> reports(files.size());
  support::parallel_for(
      files.size(),
      [&](size_t i) {
        queries::SingleFileLoad load = queries::load_single_file(run, files[i]);
        reports[i] = {render(load), load.failed(), load.unreadable};
      },
      support::fault_bound_threads(files.size()));
  return reports;
}

// Writes `text` whole to `fd`.
void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

// Prints each file's listing and then its errors, as ldd run on each file in turn would: the
// listings are gathered into large writes, and only an error message makes stdout flush first,
// so that the two streams still interleave file by file on a terminal.
int print_reports(const std::vector<FileReport>& reports) {
  int rc = 0;
  std::cout.flush();
  std::string pending;
  for (const FileReport& r : reports) {
    pending += r.text.out;
    if (!r.text.err.empty()) {
      write_all(STDOUT_FILENO, pending);
      pending.clear();
      write_all(STDERR_FILENO, r.text.err);
    }
    if (r.unreadable) rc = 2;
    else if (r.failed && rc == 0) rc = 1;
  }
  write_all(STDOUT_FILENO, pending);
  return rc;
}

// The store of one command, kept until the process exits: tearing down hundreds of mappings and
// parsed files one by one takes longer than the work that used them (lld skips its frees at exit
// for the same reason), and the kernel drops the address space in one go. It stays reachable, so
// LeakSanitizer does not count it as a leak.
loader::ObjectStore& store_for_this_run(const std::string& root) {
  static loader::ObjectStore* store = new loader::ObjectStore(root);
  return *store;
}

// What every file of the run shares: the store, the searches already made, the interpreters.
queries::SingleFileRun make_run(const LddOptions& options, const loader::LoaderConfig& config) {
  // Extension modules are loaded into an interpreter only to bind their symbols.
  bool own_programs = options.exact || !options.bind_symbols;
  return {config,
          store_for_this_run(options.loader.root),
          Process::new_search_memo(),
          queries::extension_interpreters(options.loader.root, options.python, own_programs),
          options.exact,
          options.bind_symbols};
}

}  // namespace

int run_ldd(const LddOptions& options, const std::vector<std::string>& files) {
  loader::LoaderConfig config = make_config(options.loader);
  queries::SingleFileRun run = make_run(options, config);
  bool header = files.size() > 1;
  return print_reports(for_each_file(
      run, files, [&](const queries::SingleFileLoad& load) { return report::render_ldd_file(load, header); }));
}

int run_tree(const LddOptions& options, const std::vector<std::string>& files) {
  loader::LoaderConfig config = make_config(options.loader);
  queries::SingleFileRun run = make_run(options, config);
  return print_reports(for_each_file(run, files, report::render_tree_file));
}

}  // namespace envdoctor::cli
