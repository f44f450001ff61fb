#include "python/metadata_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace envdoctor::python {

namespace {

// Closes the descriptor on every path out of read_bounded_file.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

}  // namespace

std::optional<std::string> read_bounded_file(const fs::path& path, u64 limit, std::string* error, bool* truncated) {
  if (truncated) *truncated = false;
  auto fail = [&](int err) -> std::optional<std::string> {
    if (error) *error = path.filename().string() + ": " + std::strerror(err);
    return std::nullopt;
  };
  // O_NONBLOCK: open() of a FIFO without a writer would otherwise block forever.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) return fail(errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return fail(errno);
  if (S_ISDIR(st.st_mode)) return fail(EISDIR);
  if (!S_ISREG(st.st_mode)) {
    if (error) *error = path.filename().string() + ": not a regular file";
    return std::nullopt;
  }
  std::string out;
  u64 want = std::min<u64>(static_cast<u64>(st.st_size), limit);
  out.reserve(want);
  char buf[65536];
  while (out.size() < limit) {
    u64 chunk = std::min<u64>(sizeof(buf), limit - out.size());
    ssize_t n = ::read(fd.get(), buf, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno);
    }
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
  // At the limit: one more byte says whether the file goes on.
  char probe;
  ssize_t n;
  do n = ::read(fd.get(), &probe, 1);
  while (n < 0 && errno == EINTR);
  if (n > 0 && truncated) *truncated = true;
  return out;
}

std::string_view trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r' || s[b] == '\n')) b++;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r' || s[e - 1] == '\n')) e--;
  return s.substr(b, e - b);
}

std::vector<Header> parse_headers(std::string_view text) {
  std::vector<Header> headers;
  bool last_was_header = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? text.size() - pos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // the body (the long description) starts here
    if (line[0] == ' ' || line[0] == '\t') {
      if (last_was_header) {
        std::string_view more = trim(line);
        Header& h = headers.back();
        if (more.empty()) continue;
        if (!h.value.empty()) h.value += ' ';
        h.value.append(more);
      }
      continue;
    }
    size_t colon = line.find(':');
    last_was_header = colon != std::string_view::npos && colon > 0;
    if (!last_was_header) continue;
    headers.push_back({std::string(trim(line.substr(0, colon))), std::string(trim(line.substr(colon + 1)))});
  }
  return headers;
}

std::vector<std::string> header_values(const std::vector<Header>& headers, std::string_view name) {
  std::vector<std::string> out;
  for (const Header& h : headers)
    if (iequals(h.name, name)) out.push_back(h.value);
  return out;
}

std::optional<std::string> header_value(const std::vector<Header>& headers, std::string_view name) {
  for (const Header& h : headers)
    if (iequals(h.name, name)) return h.value;
  return std::nullopt;
}

std::string normalize_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  bool in_run = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (!in_run) out += '-';
      in_run = true;
    } else {
      out += ascii_lower(c);
      in_run = false;
    }
  }
  return out;
}

}  // namespace envdoctor::python
