// One way to spread independent work over the cores, shared by the stages that read many files
// (the ELF index, the fatbinary index). Work items are handed out one at a time from an atomic
// counter, so a few huge files (libcublasLt, 500 MB) do not leave the other threads idle.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace envdoctor::support {

// Workers for n items: one per core.
inline size_t core_threads(size_t n) {
  return std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), std::max<size_t>(n, 1));
}

// Workers for n items of work that is mostly page faults on mapped files (`ldd` over many
// files): twice the cores. A fault can block on the disk (a page the kernel reclaimed from the
// cache) or the core be taken away for a while, and a second worker per core keeps it busy
// meanwhile. Measured with `envdoctor ldd` on 495 files on 2 cores, median of 40 runs: 2 workers
// 26.9 ms, 3 workers 25.3 ms, 4 workers 23.8 ms. `check` showed no such gain.
inline size_t fault_bound_threads(size_t n) { return std::min<size_t>(2 * core_threads(n), std::max<size_t>(n, 1)); }

// Workers for n items of work that mostly waits for the disk (small files read with a cold page
// cache): more requests in flight than cores, so that the device serves several at once.
inline size_t io_bound_threads(size_t n) { return std::min<size_t>(8, std::max<size_t>(n, 1)); }

// Runs fn(i) for every i in [0, n) on `threads` threads; returns when all are done. fn must not
// throw, and calls for different i must not write to the same data.
inline void parallel_for(size_t n, const std::function<void(size_t)>& fn, size_t threads = 0) {
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  };
  if (threads == 0) threads = core_threads(n);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

// Runs fn(item, worker, more) for every item of `work` and for every item a call put into `more`,
// on `threads` threads, and returns when no item is left and no call is running: a walk whose
// work grows as it goes (a directory tree, the libraries that libraries need). `worker` is the
// calling thread's number in [0, threads), for results kept per thread and merged afterwards;
// calls with different workers run concurrently. fn must not throw.
template <typename T, typename Fn>
void parallel_work_list(std::vector<T> work, size_t threads, Fn&& fn) {
  std::mutex mu;
  std::condition_variable changed;
  size_t busy = 0;
  auto worker = [&](size_t id) {
    std::vector<T> more;
    std::unique_lock lock(mu);
    for (;;) {
      changed.wait(lock, [&] { return !work.empty() || busy == 0; });
      if (work.empty()) return;  // nothing left, and no running call can add more
      T item = std::move(work.back());
      work.pop_back();
      ++busy;
      lock.unlock();
      fn(std::move(item), id, more);
      lock.lock();
      --busy;
      for (T& m : more) work.push_back(std::move(m));
      more.clear();
      changed.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < std::max<size_t>(threads, 1); ++t) pool.emplace_back(worker, t);
  worker(0);
  for (std::thread& t : pool) t.join();
}

}  // namespace envdoctor::support
