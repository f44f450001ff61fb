#include "mcp/server.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <list>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "cuda/tables.h"
#include "environment/index_key.h"
#include "mcp/protocol.h"
#include "mcp/tools.h"
#include "support/input_log.h"
#include "support/run_index.h"

namespace envdoctor::mcp {

namespace {

// Newest first: the answer to a client that asks for a version we do not speak.
constexpr const char* kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

// A line longer than this is not read into memory: it is answered as a parse error.
constexpr size_t kMaxLine = size_t{64} << 20;

void log(const std::string& line) { std::cerr << "envdoctor mcp: " << line << "\n" << std::flush; }

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the client has gone: nothing to tell it
    text.remove_prefix(static_cast<size_t>(n));
  }
}

// One message per line from a file descriptor; a line over kMaxLine is returned cut short,
// with `overlong` set, and the rest of it skipped.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  bool next(std::string& line, bool& overlong) {
    overlong = false;
    line.clear();
    for (;;) {
      size_t nl = buffer_.find('\n', scanned_);
      if (nl != std::string::npos) {
        if (skipping_) {
          overlong = true;
          skipping_ = false;
        } else {
          line = buffer_.substr(0, nl);
        }
        buffer_.erase(0, nl + 1);
        scanned_ = 0;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return true;
      }
      scanned_ = buffer_.size();
      if (buffer_.size() > kMaxLine) {
        buffer_.clear();
        scanned_ = 0;
        skipping_ = true;
      }
      char chunk[65536];
      ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {  // the end: a last line without its newline still counts
        if (buffer_.empty() || skipping_) return false;
        line = std::move(buffer_);
        buffer_.clear();
        return true;
      }
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buffer_;
  size_t scanned_ = 0;
  bool skipping_ = false;
};

class Server {
 public:
  Server(const ServerOptions& options, std::vector<Tool> tools, int out)
      : options_(options), tools_(std::move(tools)), out_(out) {
    if (!options.no_cache && support::input_log_installed())
      index_ = std::make_unique<support::RunIndex>(support::RunIndex::standard_dir(), support::RunIndex::standard_max(),
                                                   /*in_memory=*/true);
  }

  // The end of input: the calls still running finish and answer (a client that closed stdin
  // after its last request may still read stdout); nothing new starts. Joined without a stop
  // request (~jthread's), which would keep a guarded_pip that was asked for from running pip.
  ~Server() {
    for (Call& c : calls_)
      if (c.thread.joinable()) c.thread.join();
  }

  void handle(const std::string& line) {
    reap();
    if (line.find_first_not_of(" \t\r") == std::string::npos) return;
    Message m = parse_message(line);
    switch (m.kind) {
      case Message::Kind::kInvalid:
        log(m.error_message);
        send(error_line(m.id, m.error_code, m.error_message));
        return;
      case Message::Kind::kResponse: return;  // we send no requests
      case Message::Kind::kNotification: notification(m); return;
      case Message::Kind::kRequest: request(m); return;
    }
  }

  void send(const std::string& line) {
    std::lock_guard lock(out_mu_);
    write_all(out_, line);
  }

 private:
  struct Call {
    Json id;
    bool cancelled = false;  // guarded by mu_
    bool done = false;       // guarded by mu_
    std::jthread thread;
  };

  void notification(const Message& m) {
    if (m.method == "notifications/cancelled") {
      const Json& p = m.params;
      if (!p.is_object() || !p.contains("requestId")) return;
      std::lock_guard lock(mu_);
      for (Call& c : calls_)
        if (c.id == p["requestId"] && !c.done) {
          c.cancelled = true;
          c.thread.request_stop();
          log("call " + c.id.dump() + " cancelled" +
              (p.contains("reason") && p["reason"].is_string() ? ": " + p["reason"].get<std::string>() : ""));
        }
    }
    // notifications/initialized and any other: nothing to do (unknown ones are ignored, as
    // JSON-RPC notifications are never answered).
  }

  void request(const Message& m) {
    if (m.method == "initialize") return send(result_line(m.id, initialize(m.params)));
    if (m.method == "ping") return send(result_line(m.id, Json::object()));
    if (m.method == "tools/list") return send(result_line(m.id, tools_list()));
    if (m.method == "tools/call") return call(m);
    send(error_line(m.id, kMethodNotFound, "Method not found: " + m.method));
  }

  Json initialize(const Json& params) {
    std::string asked =
        params.is_object() && params.contains("protocolVersion") && params["protocolVersion"].is_string()
            ? params["protocolVersion"].get<std::string>()
            : "";
    version_ = kProtocolVersions[0];
    for (const char* v : kProtocolVersions)
      if (asked == v) version_ = v;
    log("initialized, protocol " + version_ + (asked != version_ ? " (the client asked for " + asked + ")" : ""));
    return {{"protocolVersion", version_},
            {"capabilities", {{"tools", {{"listChanged", false}}}}},
            {"serverInfo", {{"name", "envdoctor"}, {"title", "envdoctor"}, {"version", ENVDOCTOR_VERSION}}},
            {"instructions",
             "envdoctor predicts, without importing anything, whether every native library of a Python environment "
             "will load. Before `pip/uv uninstall` call predict_uninstall; before `pip/uv install` call "
             "predict_install, or make the change with guarded_pip, which runs pip only when it breaks nothing. "
             "After an ImportError about a shared library or symbol, call check_environment or why. Findings carry "
             "a fix_command to run as it is; explain says what a code means."}};
  }

  Json tools_list() const {
    Json list = Json::array();
    for (const Tool& t : tools_) list.push_back(t.to_json());
    return {{"tools", std::move(list)}};
  }

  // Input validation failures are tool errors from 2025-11-25 on, so that the model can read
  // them and correct itself (SEP-1303); before, they were protocol errors (-32602).
  bool validation_is_tool_error() const { return version_ >= "2025-11-25"; }

  void call(const Message& m) {
    const Json& p = m.params;
    if (!p.is_object() || !p.contains("name") || !p["name"].is_string())
      return send(error_line(m.id, kInvalidParams, "Invalid params: tools/call needs a \"name\""));
    const std::string name = p["name"].get<std::string>();
    const Tool* tool = nullptr;
    for (const Tool& t : tools_)
      if (t.name == name) tool = &t;
    if (!tool) return send(error_line(m.id, kInvalidParams, "Unknown tool: " + name));
    Json arguments = p.contains("arguments") && !p["arguments"].is_null() ? p["arguments"] : Json::object();
    if (std::string problem = argument_problem(tool->input_schema, arguments); !problem.empty()) {
      problem = name + ": " + problem;
      if (validation_is_tool_error()) return send(result_line(m.id, ToolResult{nullptr, problem, true}.to_json()));
      return send(error_line(m.id, kInvalidParams, "Invalid params: " + problem));
    }
    std::lock_guard lock(mu_);
    Call& c = calls_.emplace_back();
    c.id = m.id;
    c.thread = std::jthread([this, &c, tool, arguments = std::move(arguments)](std::stop_token stop) {
      Json result;
      try {
        result = answer(*tool, arguments, stop);
      } catch (const std::exception& e) {  // a bug of ours, not the caller's: said, and the server goes on
        result = ToolResult{nullptr, std::string("envdoctor: internal error: ") + e.what(), true}.to_json();
      }
      std::lock_guard done_lock(mu_);
      c.done = true;
      if (!c.cancelled) send(result_line(c.id, result));
    });
  }

  // The tool's result: from the index while its question's inputs are unchanged, else called
  // with its reads logged, and kept.
  Json answer(const Tool& tool, const Json& arguments, std::stop_token stop) {
    if (!index_ || !indexed(tool)) return tool.call(arguments, options_.environment, stop).to_json();
    i64 started = support::realtime_ns();
    environment::EnvironmentRequest defaults = options_.environment;
    environment::NodeRequest node = node_of(arguments);
    if (environment::reads_this_machine(node)) node.detected = cuda::detect_driver();
    defaults.node = node;
    std::string key = environment::index_key(question_words(tool, arguments), node);
    std::string note;
    if (std::optional<support::IndexEntry> hit = index_->find(key, &note)) return Json::parse(hit->out);
    if (!note.empty()) log(note);
    support::InputScope scope(index_->dir() + "/");
    ToolResult result = tool.call(arguments, defaults, stop);
    Json answer = result.to_json();
    if (result.is_error || stop.stop_requested() || !scope.opaque().empty()) return answer;
    std::string why;
    std::optional<std::vector<support::IndexInput>> inputs = support::identify_inputs(scope.paths(), started, &why);
    std::string text = answer.dump();
    u64 size = text.size();
    if (inputs)
      index_->keep({key, support::realtime_ns(), 0, std::move(text), "", std::move(*inputs), {{false, size}}});
    return answer;
  }

  // The question of a call: the tool, its arguments, and the server's own environment.
  std::vector<std::string> question_words(const Tool& tool, const Json& arguments) const {
    const environment::EnvironmentRequest& e = options_.environment;
    const environment::LoaderOptions& l = e.loader;
    return {"mcp " + tool.name,
            arguments.dump(),
            "python " + e.python,
            "prefix " + e.prefix,
            "root " + l.root,
            "image " + l.image,
            "ld_library_path " + (l.ld_library_path ? "=" + *l.ld_library_path : "-"),
            "glibc_tunables " + l.glibc_tunables,
            "ld_preload " + l.ld_preload};
  }

  // Joins the calls that have answered.
  void reap() {
    std::list<Call> finished;
    {
      std::lock_guard lock(mu_);
      for (auto it = calls_.begin(); it != calls_.end();) {
        auto next = std::next(it);
        if (it->done) finished.splice(finished.end(), calls_, it);
        it = next;
      }
    }
    // ~jthread joins, outside the lock the thread took last.
  }

  const ServerOptions& options_;
  // The persistent index, its entries also held in memory between calls; none with --no-cache,
  // or in a build that does not log its reads.
  std::unique_ptr<support::RunIndex> index_;
  std::vector<Tool> tools_;
  int out_;
  std::string version_ = kProtocolVersions[0];
  std::mutex mu_;      // calls_
  std::mutex out_mu_;  // one message at a time on `out`
  std::list<Call> calls_;
};

}  // namespace

int serve(const ServerOptions& options, int in, int out) {
  std::string error;
  std::optional<std::vector<Tool>> tools = load_tools(cuda::default_data_dir() + "/schemas", &error);
  if (!tools) {
    log(error);
    return 2;
  }
  {
    Server server(options, std::move(*tools), out);
    LineReader reader(in);
    std::string line;
    bool overlong = false;
    while (reader.next(line, overlong)) {
      if (overlong) {
        server.send(error_line(nullptr, kParseError, "Parse error: the line is longer than 64 MiB"));
        continue;
      }
      server.handle(line);
    }
  }  // ~Server: the calls still running are stopped and joined
  return 0;
}

int serve_stdio(const ServerOptions& options) {
  // A client that has gone makes write() fail with EPIPE rather than kill us mid-call.
  ::signal(SIGPIPE, SIG_IGN);
  int out = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  int in = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out < 0 || in < 0 || null < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0 || ::dup2(null, STDIN_FILENO) < 0) {
    log("cannot set up stdin and stdout");
    return 2;
  }
  ::close(null);
  return serve(options, in, out);
}

}  // namespace envdoctor::mcp
