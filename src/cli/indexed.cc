#include "cli/indexed.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <streambuf>
#include <string_view>
#include <vector>

#include "cli/session.h"
#include "environment/index_key.h"
#include "support/input_log.h"
#include "support/run_index.h"

namespace envdoctor::cli {

namespace {

// std::cout or std::cerr written through as before, and copied; `order` records which of the
// two each run of bytes went to, so that an answer from the index interleaves them as the run did.
class Capture : public std::streambuf {
 public:
  Capture(std::ostream& stream, bool err, std::vector<support::OutputRun>& order)
      : stream_(stream), through_(stream.rdbuf(this)), err_(err), order_(order) {}
  ~Capture() override { stream_.rdbuf(through_); }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  const std::string& text() const { return copy_; }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    copy_.push_back(traits_type::to_char_type(c));
    note(1);
    return through_->sputc(traits_type::to_char_type(c));
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    copy_.append(s, static_cast<size_t>(n));
    note(static_cast<u64>(n));
    return through_->sputn(s, n);
  }
  int sync() override { return through_->pubsync(); }

 private:
  void note(u64 n) {
    if (!order_.empty() && order_.back().err == err_) order_.back().size += n;
    else order_.push_back({err_, n});
  }

  std::ostream& stream_;
  std::streambuf* through_;
  bool err_;
  std::vector<support::OutputRun>& order_;
  std::string copy_;
};

// The entry's output, stdout and stderr in the order the run wrote them.
void replay(const support::IndexEntry& e) {
  size_t out = 0, err = 0;
  for (const support::OutputRun& r : e.order) {
    if (r.err) std::cerr << std::string_view(e.err).substr(err, r.size) << std::flush;
    else std::cout << std::string_view(e.out).substr(out, r.size) << std::flush;
    (r.err ? err : out) += r.size;
  }
}

// ENVDOCTOR_INDEX_DEBUG=1: why a run was not answered from the index or not kept, on stderr.
void explain(const std::string& why) {
  if (const char* debug = std::getenv("ENVDOCTOR_INDEX_DEBUG"); debug && *debug && *debug != '0')
    std::cerr << "envdoctor: index: " << why << "\n";
}

}  // namespace

int run_indexed(int argc, char** argv, const IndexedQuestion& question, const std::function<int()>& run) {
  if (question.bypass || !support::input_log_installed()) return run();
  i64 started = support::realtime_ns();
  environment::NodeRequest none;
  environment::NodeRequest& node = question.node ? *question.node : none;
  if (question.node && environment::reads_this_machine(node)) node.detected = cuda::detect_driver();
  std::vector<std::string> words(argv + 1, argv + argc);
  // The terminal decides the text's width and colour.
  words.push_back("tty " + std::to_string(::isatty(STDIN_FILENO)) + std::to_string(::isatty(STDOUT_FILENO)) +
                  std::to_string(::isatty(STDERR_FILENO)) + " " + std::to_string(output_width()) + " " +
                  std::to_string(use_color()));
  std::string key = environment::index_key(words, node);
  support::RunIndex index = support::RunIndex::standard();
  std::string note, stale;
  if (std::optional<support::IndexEntry> hit = index.find(key, &note, &stale)) {
    replay(*hit);
    return hit->status;
  }
  if (!note.empty()) std::cerr << "envdoctor: note: " << note << "\n";
  if (!stale.empty()) explain("stale: " + stale);
  support::IndexEntry entry;
  std::vector<support::InputScope::Noted> paths;
  std::string opaque;
  {
    Capture out(std::cout, false, entry.order), err(std::cerr, true, entry.order);
    support::InputScope scope(index.dir() + "/");
    entry.status = run();
    std::cout.flush();
    paths = scope.paths();
    opaque = scope.opaque();
    entry.out = out.text();
    entry.err = err.text();
  }
  // A run that could not do its job (2) is not an answer to keep.
  if (entry.status > 1) return entry.status;
  if (!opaque.empty()) return explain("not kept: " + opaque), entry.status;
  std::string why;
  std::optional<std::vector<support::IndexInput>> inputs = support::identify_inputs(paths, started, &why);
  if (!inputs) return explain("not kept: " + why), entry.status;
  entry.key = std::move(key);
  entry.recorded_ns = support::realtime_ns();
  entry.inputs = std::move(*inputs);
  index.keep(entry);
  return entry.status;
}

}  // namespace envdoctor::cli
