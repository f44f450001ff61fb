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

// std::cout or std::cerr written through as before, and copied.
class Capture : public std::streambuf {
 public:
  explicit Capture(std::ostream& stream) : stream_(stream), through_(stream.rdbuf(this)) {}
  ~Capture() override { stream_.rdbuf(through_); }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  const std::string& text() const { return copy_; }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    copy_.push_back(traits_type::to_char_type(c));
    return through_->sputc(traits_type::to_char_type(c));
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    copy_.append(s, static_cast<size_t>(n));
    return through_->sputn(s, n);
  }
  int sync() override { return through_->pubsync(); }

 private:
  std::ostream& stream_;
  std::streambuf* through_;
  std::string copy_;
};

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
    std::cout << hit->out << std::flush;
    std::cerr << hit->err << std::flush;
    return hit->status;
  }
  if (!note.empty()) std::cerr << "envdoctor: note: " << note << "\n";
  if (!stale.empty()) explain("stale: " + stale);
  support::IndexEntry entry;
  std::vector<support::InputScope::Noted> paths;
  std::string opaque;
  {
    Capture out(std::cout), err(std::cerr);
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
