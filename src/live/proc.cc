#include "live/proc.h"

#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace envdoctor::live {

namespace {

std::optional<u64> hex(std::string_view s) {
  if (s.empty() || s.size() > 16) return std::nullopt;
  u64 v = 0;
  for (char c : s) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<u64>(d);
  }
  return v;
}

// The whole of a /proc file; nullopt with errno set when it cannot be read.
std::optional<std::string> slurp(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // A file of /proc opens for anyone and fails on the first read when access is checked then
  // (proc_maps_open checks at open; environ checks at read): an empty read with an error is a failure.
  if (in.bad()) return std::nullopt;
  return text;
}

std::vector<std::string> split_nul(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\0', at);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

std::string read_link(const std::string& path) {
  char buf[4096];
  ssize_t n = readlink(path.c_str(), buf, sizeof buf);
  return n < 0 ? std::string() : std::string(buf, static_cast<size_t>(n));
}

constexpr std::string_view kDeleted = " (deleted)";

}  // namespace

std::optional<MappedFile> parse_maps_line(const std::string& line) {
  // Five fields separated by single spaces, then padding, then the path (which may hold spaces).
  std::istringstream in(line);
  std::string range, perms, offset, device, inode;
  if (!(in >> range >> perms >> offset >> device >> inode)) return std::nullopt;
  std::string path;
  std::getline(in, path);
  size_t first = path.find_first_not_of(' ');
  if (first == std::string::npos) return std::nullopt;
  path = path.substr(first);
  if (path.empty() || path[0] != '/') return std::nullopt;  // [heap], [vdso], anonymous
  size_t dash = range.find('-');
  size_t colon = device.find(':');
  auto start = hex(std::string_view(range).substr(0, dash));
  auto major = hex(std::string_view(device).substr(0, colon));
  auto minor = colon == std::string::npos ? std::nullopt : hex(std::string_view(device).substr(colon + 1));
  if (dash == std::string::npos || !start || !major || !minor || perms.size() < 4) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  unsigned long long ino = std::strtoull(inode.c_str(), &end, 10);
  if (errno || end == inode.c_str() || *end || ino == 0) return std::nullopt;
  MappedFile f;
  if (path.size() > kDeleted.size() && path.ends_with(kDeleted)) {
    f.deleted = true;
    path.resize(path.size() - kDeleted.size());
  }
  f.path = std::move(path);
  f.dev = makedev(static_cast<unsigned>(*major), static_cast<unsigned>(*minor));
  f.ino = static_cast<ino_t>(ino);
  f.executable = perms[2] == 'x';
  f.start = *start;
  return f;
}

std::optional<LiveProcess> read_process(int pid, std::string* error, const std::string& proc) {
  std::string dir = proc + "/" + std::to_string(pid);
  auto fail = [&](const std::string& what) -> std::optional<LiveProcess> {
    int e = errno;
    if (e == ENOENT || e == ESRCH) *error = "no process " + std::to_string(pid);
    else if (e == EACCES || e == EPERM)
      *error = "process " + std::to_string(pid) + ": permission denied reading " + what +
               " (another user's process: run envdoctor as that user, or as root)";
    else *error = "process " + std::to_string(pid) + ": cannot read " + what + ": " + std::strerror(e);
    return std::nullopt;
  };
  if (access(dir.c_str(), F_OK) != 0) return fail(dir);
  std::optional<std::string> maps = slurp(dir + "/maps");
  if (!maps) return fail(dir + "/maps");
  std::optional<std::string> environ = slurp(dir + "/environ");
  if (!environ) return fail(dir + "/environ");

  LiveProcess p;
  p.pid = pid;
  p.exe = read_link(dir + "/exe");
  if (p.exe.ends_with(kDeleted)) p.exe.resize(p.exe.size() - kDeleted.size());
  p.cwd = read_link(dir + "/cwd");
  if (auto cmdline = slurp(dir + "/cmdline")) p.argv = split_nul(*cmdline);
  p.environ = split_nul(*environ);

  // One entry per file (path and inode): its mappings merged, at its lowest address.
  std::map<std::pair<std::string, ino_t>, MappedFile> files;
  std::istringstream lines(*maps);
  for (std::string line; std::getline(lines, line);) {
    std::optional<MappedFile> f = parse_maps_line(line);
    if (!f) continue;
    auto [it, fresh] = files.try_emplace({f->path, f->ino}, *f);
    if (!fresh) {
      it->second.start = std::min(it->second.start, f->start);
      it->second.executable |= f->executable;
    }
  }
  for (auto& [key, f] : files) p.files.push_back(std::move(f));
  std::sort(p.files.begin(), p.files.end(), [](const MappedFile& a, const MappedFile& b) { return a.start < b.start; });
  return p;
}

namespace {

bool same_file(const std::string& candidate, const std::string& exe) {
  std::error_code ec;
  return !candidate.empty() && candidate[0] == '/' && std::filesystem::equivalent(candidate, exe, ec);
}

}  // namespace

std::string started_program(const LiveProcess& p) {
  namespace fs = std::filesystem;
  if (p.argv.empty() || p.argv[0].empty()) return "";
  const std::string& argv0 = p.argv[0];
  if (argv0[0] == '/') return same_file(argv0, p.exe) ? argv0 : "";
  if (argv0.find('/') != std::string::npos)
    return !p.cwd.empty() && same_file(p.cwd + "/" + argv0, p.exe)
               ? (fs::path(p.cwd) / argv0).lexically_normal().string()
               : "";
  for (const std::string& var : p.environ)
    if (var.rfind("PATH=", 0) == 0) {
      std::istringstream dirs(var.substr(5));
      for (std::string dir; std::getline(dirs, dir, ':');)
        if (same_file(dir + "/" + argv0, p.exe)) return dir + "/" + argv0;
    }
  return "";
}

std::string python_of(const LiveProcess& p) {
  namespace fs = std::filesystem;
  if (fs::path(p.exe).filename().string().rfind("python", 0) != 0) return "";
  auto same = [&](const std::string& candidate) { return same_file(candidate, p.exe); };
  if (std::string program = started_program(p); !program.empty()) return program;
  for (const std::string& var : p.environ)
    if (var.rfind("VIRTUAL_ENV=", 0) == 0 && same(var.substr(12) + "/bin/python"))
      return var.substr(12) + "/bin/python";
  for (const MappedFile& f : p.files) {
    size_t at = f.path.find("/site-packages/");
    if (at == std::string::npos) continue;
    fs::path prefix = fs::path(f.path.substr(0, at)).parent_path().parent_path();  // PREFIX/lib/pythonX.Y
    if (same((prefix / "bin/python").string())) return (prefix / "bin/python").string();
  }
  return p.exe;
}

}  // namespace envdoctor::live
