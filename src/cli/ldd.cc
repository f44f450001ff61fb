// `envdoctor ldd` and `envdoctor tree`: the load model applied to single files.
//
// Each file is its own simulated process (`ld.so --list FILE` in ldd's trace mode, with -r as
// `ldd -r`: queries::load_single_file); files are loaded in parallel, sharing one ObjectStore so that every
// library is parsed once, and the results are rendered (report::render_ldd_file,
// render_tree_file) and printed in the order the files were given.
#include <iostream>

#include "cli/commands.h"
#include "queries/single_file.h"
#include "report/report.h"

namespace envdoctor::cli {

namespace {

struct FileReport {
  report::FileText text;
  bool failed = false;
  bool unreadable = false;  // the file itself could not be opened: the tool could not do its job
};

// The store of one command, kept until the process exits: tearing down hundreds of mappings and
// parsed files one by one takes longer than the work that used them (lld skips its frees at exit
// for the same reason), and the kernel drops the address space in one go. It stays reachable, so
// LeakSanitizer does not count it as a leak.
loader::ObjectStore& store_for_this_run(const std::string& root) {
  static loader::ObjectStore* store = new loader::ObjectStore(root);
  return *store;
}

// Loads every file (queries::load_single_files) and renders each with `render`.
template <typename Render>
std::vector<FileReport> for_each_file(const LddOptions& options, const std::vector<std::string>& files, Render render) {
  std::vector<FileReport> reports(files.size());
  queries::SingleFileQuestion question{options.loader, options.python, options.exact, options.bind_symbols};
  queries::load_single_files(question, store_for_this_run(options.loader.root), files,
                             [&](size_t i, queries::SingleFileLoad& load) {
                               reports[i] = {render(load), load.failed(), load.unreadable};
                             });
  return reports;
}

// Prints each file's listing and then its errors, as ldd run on each file in turn would: the
// listings are gathered into large writes, and only an error message makes stdout flush first,
// so that the two streams still interleave file by file on a terminal. Through std::cout and
// std::cerr, which the persistent index captures (cli/indexed.h).
int print_reports(const std::vector<FileReport>& reports) {
  int rc = 0;
  std::cout.flush();
  std::string pending;
  for (const FileReport& r : reports) {
    pending += r.text.out;
    if (!r.text.err.empty()) {
      std::cout << pending << std::flush;
      pending.clear();
      std::cerr << r.text.err << std::flush;
    }
    if (r.unreadable) rc = 2;
    else if (r.failed && rc == 0) rc = 1;
  }
  std::cout << pending << std::flush;
  return rc;
}

}  // namespace

int run_ldd(const LddOptions& options, const std::vector<std::string>& files) {
  bool header = files.size() > 1;
  return print_reports(for_each_file(
      options, files, [&](const queries::SingleFileLoad& load) { return report::render_ldd_file(load, header); }));
}

int run_tree(const LddOptions& options, const std::vector<std::string>& files) {
  return print_reports(for_each_file(options, files, report::render_tree_file));
}

}  // namespace envdoctor::cli
