// Progress for people, on stderr only: shown when stderr is a terminal and the run has already
// taken a second, redrawn at most ten times a second, erased when done. Silent otherwise, so
// scripts, pipes and CI see nothing. Safe to update from several threads.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

namespace envdoctor::report {

class Progress {
 public:
  Progress();  // decides once whether stderr is a terminal
  ~Progress();

  // "checking loads", 120 of 2056.
  void update(const char* stage, size_t done, size_t total);
  void finish();

 private:
  bool enabled_ = false;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
  std::mutex mu_;
};

}  // namespace envdoctor::report
