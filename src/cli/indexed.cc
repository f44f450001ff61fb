#include "cli/indexed.h"

#include <grp.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <streambuf>
#include <string_view>
#include <vector>

#include "cli/session.h"
#include "loader/search_paths.h"
#include "support/input_log.h"
#include "support/run_index.h"

extern char** environ;

namespace envdoctor::cli {

namespace {

// Variables a shell changes between two identical commands, which envdoctor never reads: the
// last command's name, the previous directory, the shell's depth, its idea of the directory (the
// working directory itself is in the key).
bool volatile_variable(std::string_view entry) {
  for (std::string_view name : {"_", "OLDPWD", "SHLVL", "PWD"})
    if (entry.starts_with(name) && entry.size() > name.size() && entry[name.size()] == '=') return true;
  return false;
}

void add(std::string& key, std::string_view field, std::string_view value) {
  key.append(field).append(1, '\t').append(value).append(1, '\n');
}

std::string identity_text(const support::Identity& i) {
  return std::to_string(i.error) + " " + std::to_string(i.mode) + " " + std::to_string(i.dev) + " " +
         std::to_string(i.ino) + " " + std::to_string(i.size) + " " + std::to_string(i.mtime_ns) + " " +
         std::to_string(i.ctime_ns);
}

void add_process(std::string& key) {
  add(key, "exe", identity_text(support::identity_of("/proc/self/exe", true)));
  char cwd[4096];
  add(key, "cwd", ::getcwd(cwd, sizeof cwd) ? cwd : "?");
  std::string ids = std::to_string(::getuid()) + " " + std::to_string(::geteuid()) + " " + std::to_string(::getgid()) +
                    " " + std::to_string(::getegid());
  std::vector<gid_t> groups(static_cast<size_t>(std::max(0, ::getgroups(0, nullptr))));
  groups.resize(static_cast<size_t>(std::max(0, ::getgroups(static_cast<int>(groups.size()), groups.data()))));
  std::sort(groups.begin(), groups.end());
  for (gid_t g : groups) ids += " " + std::to_string(g);
  add(key, "ids", ids);
  std::vector<std::string_view> vars;
  for (char** e = environ; e && *e; ++e)
    if (!volatile_variable(*e)) vars.push_back(*e);
  std::sort(vars.begin(), vars.end());
  for (std::string_view v : vars) add(key, "env", v);
  add(key, "tty",
      std::to_string(::isatty(STDIN_FILENO)) + std::to_string(::isatty(STDOUT_FILENO)) +
          std::to_string(::isatty(STDERR_FILENO)) + " " + std::to_string(output_width()) + " " +
          std::to_string(use_color()));
}

void add_machine(std::string& key, const environment::NodeRequest& node) {
  struct utsname u {};
  ::uname(&u);
  add(key, "uname", std::string(u.sysname) + " " + u.nodename + " " + u.release + " " + u.version + " " + u.machine);
  std::string cpu;
  for (const std::string& level : loader::supported_x86_64_levels()) cpu += level + " ";
  loader::LegacyHwcaps legacy = loader::legacy_hwcaps();
  cpu += "platform=" + legacy.platform;
  for (const std::string& h : legacy.hwcaps) cpu += " " + h;
  add(key, "cpu", cpu);
  if (!node.detected) return;
  const cuda::DriverInfo& d = *node.detected;
  add(key, "driver",
      (d.version ? d.version->text : "-") + " " + d.version_source + " " + (d.cuda ? d.cuda->str() : "-"));
  for (const cuda::Gpu& g : d.gpus) add(key, "gpu", g.name + " " + std::to_string(g.sm) + " " + d.gpus_source);
  for (const std::string& p : d.problems) add(key, "driver-problem", p);
}

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

std::string index_key(int argc, char** argv, const environment::NodeRequest& node) {
  std::string key = "envdoctor index key 1\n";
  for (int i = 1; i < argc; ++i) add(key, "arg", argv[i]);
  add_process(key);
  add_machine(key, node);
  return key;
}

int run_indexed(int argc, char** argv, const IndexedQuestion& question, const std::function<int()>& run) {
  if (question.bypass || !support::input_log_installed()) return run();
  i64 started = support::realtime_ns();
  if (environment::reads_this_machine(*question.node)) question.node->detected = cuda::detect_driver();
  std::string key = index_key(argc, argv, *question.node);
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
