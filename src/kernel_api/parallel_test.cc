// jaxcc/parallel.h against pools the test controls: std::threads, a pool that refuses every
// task, and one that runs its tasks only after parallel_for returned (a pool whose threads are
// all busy), which must neither deadlock the caller nor touch freed memory (ASan in CI).
#include "jaxcc/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "jaxcc/check.h"

namespace jaxcc {
namespace {

class ThreadsPool final : public ThreadPool {
 public:
  explicit ThreadsPool(int64_t n) : n_(n) {}
  ~ThreadsPool() {
    for (std::thread& t : threads_) t.join();
  }
  int64_t num_threads() const noexcept override { return n_; }
  bool schedule(void (*task)(void*), void* data) noexcept override {
    // Tasks schedule tasks (the tree fan-out): from several threads at once.
    std::lock_guard<std::mutex> lock(mutex_);
    (std::this_thread::get_id() == owner_ ? by_owner_ : by_tasks_) += 1;
    threads_.emplace_back(task, data);
    return true;
  }
  int by_owner() const { return by_owner_; }
  int by_tasks() const { return by_tasks_; }

 private:
  int64_t n_;
  std::mutex mutex_;
  std::thread::id owner_ = std::this_thread::get_id();
  int by_owner_ = 0;
  int by_tasks_ = 0;
  std::vector<std::thread> threads_;
};

class RefusingPool final : public ThreadPool {
 public:
  int64_t num_threads() const noexcept override { return 4; }
  bool schedule(void (*)(void*), void*) noexcept override { return false; }
};

// Keeps every task until RunLate(): the caller must finish alone.
class LatePool final : public ThreadPool {
 public:
  int64_t num_threads() const noexcept override { return 4; }
  bool schedule(void (*task)(void*), void* data) noexcept override {
    tasks_.push_back({task, data});
    return true;
  }
  // Runs the kept tasks; a task they schedule is kept for the next call (pending()).
  void RunLate() {
    std::vector<std::pair<void (*)(void*), void*>> tasks;
    tasks.swap(tasks_);
    for (auto& [task, data] : tasks) task(data);
  }
  size_t pending() const { return tasks_.size(); }

 private:
  std::vector<std::pair<void (*)(void*), void*>> tasks_;
};

TEST(ParallelFor, CoversEveryIndexOnceForManyGrains) {
  ThreadsPool pool(3);
  for (int64_t grain : {1, 2, 7, 100, 1000, 5000}) {
    std::vector<std::atomic<int>> hits(1000);
    pool.parallel_for(0, 1000, grain, [&](int64_t i) { hits[i].fetch_add(1); });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1) << "grain " << grain;
  }
}

TEST(ParallelFor, ChunksRespectTheGrainAndTheRange) {
  ThreadsPool pool(2);
  std::mutex m;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  parallel_for(pool, 10, 47, 8, [&](int64_t lo, int64_t hi) {
    std::lock_guard<std::mutex> lock(m);
    chunks.emplace_back(lo, hi);
  });
  int64_t total = 0;
  for (auto [lo, hi] : chunks) {
    EXPECT_GE(lo, 10);
    EXPECT_LE(hi, 47);
    EXPECT_TRUE(hi - lo == 8 || hi == 47);
    total += hi - lo;
  }
  EXPECT_EQ(total, 37);
}

TEST(ParallelFor, UsesMoreThanOneThread) {
  ThreadsPool pool(2);
  std::atomic<int> arrived{0};
  std::atomic<bool> met{true};
  // Two chunks that wait (bounded) for each other: only two threads at once finish both.
  pool.parallel_for(0, 2, 1, [&](int64_t) {
    arrived.fetch_add(1);
    for (int spin = 0; arrived.load() < 2; ++spin) {
      if (spin > 2000000) {
        met = false;
        return;
      }
      std::this_thread::yield();
    }
  });
  EXPECT_TRUE(met.load());
}

TEST(ParallelFor, FirstExceptionIsRethrownOnceAndLaterChunksAreSkipped) {
  // The caller alone claims the chunks, in order (the pool's tasks start late): what runs after
  // the failure is exactly what the skip rule allows, whatever the host's scheduling. (With two
  // live threads the other one may run every remaining chunk while the failing thread is
  // preempted between its claim and its throw; that flaked on a loaded 2-core VM.)
  LatePool late;
  int ran = 0;
  try {
    late.parallel_for(0, 10000, 1, [&](int64_t i) {
      ++ran;
      JAXCC_CHECK(i != 3) << "index " << i;
    });
    FAIL() << "no exception";
  } catch (const CheckError& e) {
    EXPECT_NE(std::string(e.what()).find("index 3"), std::string::npos);
  }
  EXPECT_EQ(ran, 4);  // 0, 1, 2 and the failing 3; the 9996 later chunks skipped
  late.RunLate();

  // Two live threads: the failure still surfaces once, with its message.
  ThreadsPool pool(2);
  std::atomic<int> failures{0};
  try {
    pool.parallel_for(0, 10000, 1, [&](int64_t i) {
      if (i % 1000 == 3) failures.fetch_add(1);
      JAXCC_CHECK(i % 1000 != 3) << "index " << i;
    });
    FAIL() << "no exception";
  } catch (const CheckError& e) {
    EXPECT_NE(std::string(e.what()).find("index "), std::string::npos);
  }
  EXPECT_GE(failures.load(), 1);
}

TEST(ParallelFor, BadRangesAreInvalidArguments) {
  ThreadsPool pool(2);
  EXPECT_THROW(pool.parallel_for(5, 4, 1, [](int64_t) {}), std::invalid_argument);
  EXPECT_THROW(pool.parallel_for(0, 4, 0, [](int64_t) {}), std::invalid_argument);
  EXPECT_THROW(pool.parallel_for(0, 4, -2, [](int64_t) {}), std::invalid_argument);
  EXPECT_THROW(parallel_for(nullptr, 1, 0, 1, [](int64_t) {}), std::invalid_argument);
  int calls = 0;
  pool.parallel_for(7, 7, 1, [&](int64_t) { ++calls; });  // empty: nothing runs
  EXPECT_EQ(calls, 0);
}

TEST(ParallelFor, NestedLoopsRunSeriallyOnTheOuterThread) {
  ThreadsPool pool(2);
  std::atomic<int> foreign{0};
  pool.parallel_for(0, 8, 1, [&](int64_t) {
    auto outer = std::this_thread::get_id();
    pool.parallel_for(0, 64, 1, [&](int64_t) {
      if (std::this_thread::get_id() != outer) foreign.fetch_add(1);
    });
  });
  EXPECT_EQ(foreign.load(), 0);
}

TEST(ParallelFor, NoPoolOrARefusingPoolRunsInTheCaller) {
  auto caller = std::this_thread::get_id();
  int other = 0;
  parallel_for(nullptr, 0, 100, 1, [&](int64_t) { other += std::this_thread::get_id() != caller; });
  RefusingPool refusing;
  refusing.parallel_for(0, 100, 1, [&](int64_t) { other += std::this_thread::get_id() != caller; });
  // The pool-less spelling outside a call with a pool: serial too.
  jaxcc::parallel_for(0, 100, 1, [&](int64_t) { other += std::this_thread::get_id() != caller; });
  EXPECT_EQ(other, 0);
}

TEST(ParallelFor, NeverWaitsForTasksThatHaveNotStarted) {
  LatePool pool;
  std::vector<int> out(1000, 0);
  pool.parallel_for(0, 1000, 10, [&](int64_t i) { out[i] = 1; });  // returns: no deadlock
  for (int v : out) ASSERT_EQ(v, 1);
  EXPECT_EQ(pool.pending(), 2u);  // the caller's two; the third would come from a started task
  pool.RunLate();  // late tasks find no chunk; they must not call fn (out of scope now)
  // Nor may they schedule: the pool object belongs to the call, which has returned.
  EXPECT_EQ(pool.pending(), 0u);
}

TEST(ParallelFor, TasksFanOutAsATreeSoTheCallerWakesOnlyTwo) {
  ThreadsPool pool(8);
  std::atomic<int64_t> sum{0};
  // Chunks slow enough that every task is scheduled before the chunks run out.
  pool.parallel_for(0, 64, 1, [&](int64_t i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    sum += i;
  });
  EXPECT_EQ(sum.load(), 64 * 63 / 2);
  EXPECT_EQ(pool.by_owner(), 2);
  EXPECT_EQ(pool.by_owner() + pool.by_tasks(), 7);  // num_threads() - 1 in all
}

TEST(ParallelFor, CurrentPoolScopeLendsThePoolToThePoolLessSpelling) {
  ThreadsPool pool(2);
  std::atomic<int> arrived{0};
  std::atomic<bool> met{true};
  {
    detail::CurrentPoolScope scope(&pool);
    jaxcc::parallel_for(0, 2, 1, [&](int64_t) {
      arrived.fetch_add(1);
      for (int spin = 0; arrived.load() < 2; ++spin) {
        if (spin > 2000000) {
          met = false;
          return;
        }
        std::this_thread::yield();
      }
    });
  }
  EXPECT_TRUE(met.load());
  EXPECT_EQ(detail::CurrentPool(), nullptr);
}

// --- The int64 edges (issue 37, decision 150a) --------------------------------------------
// Every chunk a loop hands fn(lo, hi), folded into counters (a range of 2^64 - 1 indices is
// checked without touching its indices): the chunks must tile [begin, end) exactly.
struct ChunkTally {
  std::atomic<uint64_t> calls{0}, covered{0}, offset_sum{0}, offset_square_sum{0};
  std::atomic<bool> out_of_range{false};
};

// Offsets in uint64_t: the test itself must not overflow where the code under test must not.
uint64_t Offset(int64_t from, int64_t to) {
  return static_cast<uint64_t>(to) - static_cast<uint64_t>(from);
}

// What the chunks of a correct split add up to, computed here independently of parallel.h.
struct ExpectedSplit {
  uint64_t chunk, count, offset_sum = 0, offset_square_sum = 0;
};
ExpectedSplit Expect(int64_t begin, int64_t end, int64_t grain) {
  const uint64_t n = Offset(begin, end);
  const uint64_t cap = static_cast<uint64_t>(kMaxParallelChunks);
  uint64_t chunk = static_cast<uint64_t>(grain);
  if (n / chunk > cap) chunk = n / cap + (n % cap ? 1 : 0);
  ExpectedSplit e{chunk, n / chunk + (n % chunk ? 1 : 0)};
  for (uint64_t k = 0; k < e.count; ++k) {
    e.offset_sum += k * chunk;  // mod 2^64, as the tally
    e.offset_square_sum += (k * chunk) * (k * chunk);
  }
  return e;
}

void RunAndCheck(ThreadPool* pool, int64_t begin, int64_t end, int64_t grain) {
  SCOPED_TRACE("begin " + std::to_string(begin) + " end " + std::to_string(end) + " grain " +
               std::to_string(grain) + (pool ? " pool" : " no pool"));
  ChunkTally t;
  const ExpectedSplit e = Expect(begin, end, grain);
  parallel_for(pool, begin, end, grain, [&](int64_t lo, int64_t hi) {
    if (lo < begin || hi > end || hi <= lo) t.out_of_range = true;
    if (t.calls.fetch_add(1) > e.count) throw std::runtime_error("more chunks than the range has");
    const uint64_t offset = Offset(begin, lo);
    t.covered += Offset(lo, hi);
    t.offset_sum += offset;
    t.offset_square_sum += offset * offset;
  });
  EXPECT_FALSE(t.out_of_range.load());
  EXPECT_EQ(t.covered.load(), Offset(begin, end));  // every index once, none skipped
  if (pool == nullptr || e.count <= 1) {
    EXPECT_EQ(t.calls.load(), begin == end ? 0u : 1u);  // serial: one call, the whole range
    return;
  }
  EXPECT_EQ(t.calls.load(), e.count);
  EXPECT_LE(e.count, static_cast<uint64_t>(kMaxParallelChunks) + 1);
  EXPECT_EQ(t.offset_sum.load(), e.offset_sum);
  EXPECT_EQ(t.offset_square_sum.load(), e.offset_square_sum);
}

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxI = std::numeric_limits<int64_t>::max();

// Exhaustive over the edge values: every begin <= end among them, every edge grain, on no pool,
// on live threads and on a pool whose tasks start late. Before decision 150a grain INT64_MAX
// skipped the loop on a pool of 2+ threads and lengths near INT64_MAX hung the caller.
TEST(ParallelForEdges, ParallelForInt64EdgesCoverEveryIndexExactlyOnce) {
  const std::vector<int64_t> points = {kMin, kMin + 1, -1, 0, 5, kMaxI - 1, kMaxI};
  const std::vector<int64_t> grains = {1, kMaxParallelChunks + 1, kMaxI / 2, kMaxI - 1, kMaxI};
  ThreadsPool threads(3);
  LatePool late;
  for (int64_t begin : points) {
    for (int64_t end : points) {
      if (end < begin) continue;
      for (int64_t grain : grains) {
        RunAndCheck(nullptr, begin, end, grain);
        RunAndCheck(&threads, begin, end, grain);
        // The caller alone runs every chunk here: the ranges cut into a million are left to the
        // live pool above, so the test stays quick under the sanitizers.
        if (Expect(begin, end, grain).count < 4096) {
          RunAndCheck(&late, begin, end, grain);
          late.RunLate();
        }
      }
    }
  }
}

TEST(ParallelForEdges, GrainInt64MaxRunsTheWholeLoopOnAPoolOfTwo) {
  ThreadsPool pool(2);
  std::vector<int> hits(10, 0);
  pool.parallel_for(0, 10, std::numeric_limits<int64_t>::max(), [&](int64_t i) { ++hits[i]; });
  for (int h : hits) EXPECT_EQ(h, 1);
}

// Property-style: ranges and grains drawn near the edges (seeded, so a failure reproduces).
TEST(ParallelForEdges, DrawnRangesNearTheEdgesAreExact) {
  std::mt19937_64 rng(37150);
  const std::vector<int64_t> anchors = {kMin, -1, 0, kMaxI};
  auto near = [&](int64_t anchor) {
    const int64_t jitter = static_cast<int64_t>(rng() % 9) - 4;
    return static_cast<int64_t>(static_cast<uint64_t>(anchor) + static_cast<uint64_t>(jitter));
  };
  ThreadsPool pool(2);
  for (int round = 0; round < 40; ++round) {
    int64_t a = near(anchors[rng() % anchors.size()]);
    int64_t b = near(anchors[rng() % anchors.size()]);
    if (b < a) std::swap(a, b);
    int64_t grain = rng() % 4 ? near(kMaxI) : static_cast<int64_t>(1 + rng() % 1000);
    if (grain <= 0) grain = 1;
    RunAndCheck(&pool, a, b, grain);
  }
}

TEST(ParallelForEdges, OneChunkOuterLoopDoesNotSerialiseItsInnerLoop) {
  ThreadsPool pool(2);
  std::atomic<int> arrived{0};
  std::atomic<bool> met{true};
  // The outer loop is one chunk (grain >= its length); the inner one's two chunks wait for each
  // other, so they finish only if the inner loop really runs on two threads.
  pool.parallel_for(0, 1, 100, [&](int64_t) {
    pool.parallel_for(0, 2, 1, [&](int64_t) {
      arrived.fetch_add(1);
      for (int spin = 0; arrived.load() < 2; ++spin) {
        if (spin > 2000000) {
          met = false;
          return;
        }
        std::this_thread::yield();
      }
    });
  });
  EXPECT_TRUE(met.load());
}

}  // namespace
}  // namespace jaxcc
