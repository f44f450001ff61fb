#include "support/subprocess.h"

#include "support/input_log.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

extern char** environ;

namespace envdoctor::support {

namespace {

// RAII for the pipe ends, the spawn actions and the child.
class Pipe {
 public:
  Pipe() {
    if (::pipe2(fds_, O_CLOEXEC) != 0) fds_[0] = fds_[1] = -1;
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  bool ok() const { return fds_[0] >= 0; }
  int read_end() const { return fds_[0]; }
  int write_end() const { return fds_[1]; }
  void close_read() {
    if (fds_[0] >= 0) ::close(fds_[0]);
    fds_[0] = -1;
  }
  void close_write() {
    if (fds_[1] >= 0) ::close(fds_[1]);
    fds_[1] = -1;
  }

 private:
  int fds_[2] = {-1, -1};
};

class Child {
 public:
  explicit Child(pid_t pid) : pid_(pid) {}
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      wait();
    }
  }
  int wait() {
    int raw = 0;
    while (::waitpid(pid_, &raw, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    if (WIFEXITED(raw)) return WEXITSTATUS(raw);
    if (WIFSIGNALED(raw)) return 128 + WTERMSIG(raw);
    return -1;
  }

 private:
  pid_t pid_;
};

class SpawnActions {
 public:
  SpawnActions() { posix_spawn_file_actions_init(&a_); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&a_); }
  posix_spawn_file_actions_t* get() { return &a_; }

 private:
  posix_spawn_file_actions_t a_;
};
// write(2) to a pipe whose reader may have gone: EPIPE instead of the process-wide SIGPIPE. The
// signal is blocked for this thread and a pending one taken back before unblocking (the
// technique of POSIX's rationale for pthread_sigmask; used by git's and curl's pipe writers).
ssize_t write_ignoring_sigpipe(int fd, std::string_view data) {
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  ssize_t n = ::write(fd, data.data(), data.size());
  int saved = errno;
  if (n < 0 && errno == EPIPE) {
    struct timespec zero = {0, 0};
    while (::sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  errno = saved;
  return n;
}

// posix_spawn(p) of `argv` with `actions`: a bare argv[0] is looked up on PATH as execvp would, a
// path is run as it is. The child's pid, or -1 with `error` set.
pid_t spawn(const std::vector<std::string>& argv, SpawnActions& actions, std::string* error) {
  // What a child reads is not in this process's input log: the run is not kept in the index
  // unless the caller noted it.
  if (!child_inputs_noted()) note_opaque_input("it ran " + argv[0]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  bool bare = argv[0].find('/') == std::string::npos;
  int rc = bare ? ::posix_spawnp(&pid, args[0], actions.get(), nullptr, args.data(), environ)
                : ::posix_spawn(&pid, args[0], actions.get(), nullptr, args.data(), environ);
  if (rc != 0) {
    if (error) *error = "cannot run " + argv[0] + ": " + std::strerror(rc);
    return -1;
  }
  return pid;
}

}  // namespace

std::optional<ProcessResult> run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                         u64 max_output, std::string* error, std::string_view input) {
  auto fail = [&](const std::string& what) -> std::optional<ProcessResult> {
    if (error) *error = what;
    return std::nullopt;
  };
  if (argv.empty()) return fail("nothing to run");
  Pipe in, out, err;
  if (!in.ok() || !out.ok() || !err.ok()) return fail(std::string("pipe: ") + std::strerror(errno));
  SpawnActions actions;
  if (input.empty()) posix_spawn_file_actions_addopen(actions.get(), 0, "/dev/null", O_RDONLY, 0);
  else posix_spawn_file_actions_adddup2(actions.get(), in.read_end(), 0);
  posix_spawn_file_actions_adddup2(actions.get(), out.write_end(), 1);
  posix_spawn_file_actions_adddup2(actions.get(), err.write_end(), 2);
  pid_t pid = spawn(argv, actions, error);
  if (pid < 0) return std::nullopt;
  Child child(pid);
  in.close_read();
  out.close_write();
  err.close_write();
  // The input is written as the child reads it, in the same poll as its output, so that neither
  // side waits on a full pipe. A child that stops reading early closes its end: EPIPE, not SIGPIPE
  // (MSG_NOSIGNAL does not apply to pipes, so SIGPIPE is ignored for the write).
  if (input.empty()) in.close_write();
  else ::fcntl(in.write_end(), F_SETFL, ::fcntl(in.write_end(), F_GETFL) | O_NONBLOCK);

  ProcessResult result;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  struct pollfd fds[3] = {{out.read_end(), POLLIN, 0}, {err.read_end(), POLLIN, 0}, {in.write_end(), POLLOUT, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      i64 ms = timeout.count();
      return fail(argv[0] + " did not finish within " +
                  (ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms"));
    }
    int n = ::poll(fds, 3, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(std::string("poll: ") + std::strerror(errno));
    if (fds[2].fd >= 0 && (fds[2].revents & (POLLOUT | POLLHUP | POLLERR))) {
      ssize_t put = (fds[2].revents & POLLOUT) ? write_ignoring_sigpipe(fds[2].fd, input) : -1;
      if (put > 0) input.remove_prefix(static_cast<size_t>(put));
      if (input.empty() || (put < 0 && errno != EINTR && errno != EAGAIN)) {
        in.close_write();
        fds[2].fd = -1;
      }
    }
    for (int i = 0; i < 2; i++) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t got = ::read(fds[i].fd, buf, sizeof(buf));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        fds[i].fd = -1;
        open_fds--;
        continue;
      }
      if (sinks[i]->size() + static_cast<u64>(got) > max_output)
        return fail(argv[0] + " wrote more than " + std::to_string(max_output) + " bytes");
      sinks[i]->append(buf, static_cast<size_t>(got));
    }
  }
  result.status = child.wait();
  return result;
}

std::optional<int> run_attached(const std::vector<std::string>& argv, bool stdout_to_stderr, std::string* error) {
  if (argv.empty()) {
    if (error) *error = "nothing to run";
    return std::nullopt;
  }
  SpawnActions actions;
  if (stdout_to_stderr) posix_spawn_file_actions_adddup2(actions.get(), 2, 1);
  pid_t pid = spawn(argv, actions, error);
  if (pid < 0) return std::nullopt;
  return Child(pid).wait();
}

std::optional<std::string> find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (access(name.c_str(), X_OK) == 0) return name;
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "";
  while (!dirs.empty()) {
    size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

}  // namespace envdoctor::support
