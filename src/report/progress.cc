#include "report/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace envdoctor::report {

using Clock = std::chrono::steady_clock;

// A terminal that cannot move the cursor (TERM=dumb) gets no progress line.
static bool can_redraw() {
  const char* term = std::getenv("TERM");
  return ::isatty(STDERR_FILENO) == 1 && !(term && std::strcmp(term, "dumb") == 0);
}

Progress::Progress() : enabled_(can_redraw()), start_(Clock::now()), last_(start_) {}

Progress::~Progress() { finish(); }

void Progress::update(const char* stage, size_t done, size_t total) {
  if (!enabled_) return;
  Clock::time_point now = Clock::now();
  std::lock_guard lock(mu_);
  if (now - start_ < std::chrono::seconds(1) || (drawn_ && now - last_ < std::chrono::milliseconds(100))) return;
  last_ = now;
  drawn_ = true;
  std::fprintf(stderr, "\r\x1b[Kenvdoctor: %s %zu/%zu", stage, done, total);
  std::fflush(stderr);
}

void Progress::finish() {
  std::lock_guard lock(mu_);
  if (!drawn_) return;
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace envdoctor::report
