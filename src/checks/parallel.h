// One way to spread independent work over the cores, shared by the stages that read many files
// (the ELF index, the fatbinary index). Work items are handed out one at a time from an atomic
// counter, so a few huge files (libcublasLt, 500 MB) do not leave the other threads idle.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace envdoctor::checks {

// Runs fn(i) for every i in [0, n), on every core; returns when all are done. fn must not
// throw, and calls for different i must not write to the same data.
inline void parallel_for(size_t n, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  };
  size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), n);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

}  // namespace envdoctor::checks
