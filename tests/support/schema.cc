#include "support/schema.h"

#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

extern char** environ;

namespace envdoctor::test {

namespace {

// validate_schema.py --serve, started on the first document and ended with the process. Its
// stdin and stdout are one end of a socket pair: a write to a validator that died fails with
// EPIPE (MSG_NOSIGNAL) instead of killing the test with SIGPIPE.
class Validator {
 public:
  Validator() {
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, ends[1], 0);
    posix_spawn_file_actions_adddup2(&actions, ends[1], 1);
    std::string script = std::string(ENVDOCTOR_SOURCE_DIR) + "/tests/support/validate_schema.py";
    char python[] = "/usr/bin/python3";
    char serve[] = "--serve";
    char* argv[] = {python, script.data(), serve, nullptr};
    if (posix_spawn(&pid_, python, &actions, nullptr, argv, environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(ends[1]);
    fd_ = ends[0];
  }
  ~Validator() {
    if (fd_ >= 0) ::close(fd_);  // end of input: the validator exits
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
  }
  Validator(const Validator&) = delete;
  Validator& operator=(const Validator&) = delete;

  // The validator's answer, or nullopt when it cannot be asked (then the caller says so).
  std::optional<std::string> ask(const std::string& schema_file, const std::string& document) {
    if (fd_ < 0 || pid_ <= 0) return std::nullopt;
    std::string request = schema_file + "\n" + std::to_string(document.size()) + "\n" + document;
    for (size_t sent = 0; sent < request.size();) {
      ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      sent += static_cast<size_t>(n);
    }
    std::string size_line;
    for (char c = 0; c != '\n';) {
      if (!read_exactly(&c, 1)) return std::nullopt;
      if (c != '\n') size_line += c;
    }
    std::string answer(std::stoul(size_line), '\0');
    if (!read_exactly(answer.data(), answer.size())) return std::nullopt;
    return answer;
  }

 private:
  bool read_exactly(char* into, size_t size) {
    for (size_t got = 0; got < size;) {
      ssize_t n = ::read(fd_, into + got, size - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      got += static_cast<size_t>(n);
    }
    return true;
  }

  pid_t pid_ = -1;
  int fd_ = -1;
};

}  // namespace

std::string schema_file_errors(const std::string& schema_file, const std::string& document) {
  static Validator validator;
  std::optional<std::string> answer = validator.ask(schema_file, document);
  if (!answer) return "validate_schema.py --serve did not answer";
  return *answer;
}

}  // namespace envdoctor::test
