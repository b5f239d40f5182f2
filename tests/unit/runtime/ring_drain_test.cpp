// The ring loops' pace: busy while records come, a long wait only once the kernel side has been
// asked to end it at its next record, and never for a source that cannot be woken.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <vector>

#include "runtime/capture_loop.hpp"
#include "runtime/ring_drain.hpp"

using namespace skewscope;
using std::chrono::milliseconds;

namespace {

// Gives `script[i]` records at its i-th poll and records every poll's timeout and every arming;
// asks the loop to stop when the script ends.
class ScriptedRing final : public RingSource<int> {
 public:
  ScriptedRing(std::deque<int> script, std::atomic<bool>& stopping, bool can_wake)
      : script_(std::move(script)), stopping_(stopping), can_wake_(can_wake) {}
  Status poll(std::vector<int>& out, milliseconds timeout) override {
    timeouts.push_back(timeout.count());
    const int n = script_.front();
    script_.pop_front();
    for (int i = 0; i < n; ++i) out.push_back(i);
    if (script_.empty()) stopping_ = true;
    return Status::ok();
  }
  bool arm_idle_wakeup() override {
    armed_at.push_back(static_cast<int>(timeouts.size()));  // after this many polls
    return can_wake_;
  }
  std::vector<long> timeouts;
  std::vector<int> armed_at;

 private:
  std::deque<int> script_;
  std::atomic<bool>& stopping_;
  bool can_wake_;
};

std::deque<int> empties(int n) { return std::deque<int>(static_cast<std::size_t>(n), 0); }

}  // namespace

TEST_CASE("busy: 20 ms between passes, none after a full batch") {
  std::atomic<bool> stopping{false};
  ScriptedRing ring({5, 100, 3, 0}, stopping, true);
  int passes = 0;
  CHECK(drain_ring<int>(ring, 100, milliseconds(1000), stopping, [&](auto&, const Status&) { ++passes; }));
  CHECK(passes == 4);
  CHECK(ring.timeouts == std::vector<long>{20, 20, 0, 20});
  CHECK(ring.armed_at.empty());
}

TEST_CASE("idle: armed after ten empty passes, one pass without a wait, then long waits") {
  std::atomic<bool> stopping{false};
  std::deque<int> script = empties(14);
  ScriptedRing ring(script, stopping, true);
  CHECK(drain_ring<int>(ring, 100, milliseconds(1000), stopping, [](auto&, const Status&) {}));
  // Polls 1-10 at the busy pace; armed after the 10th; the 11th checks; 12-14 wait long.
  std::vector<long> expected(10, 20);
  expected.insert(expected.end(), {0, 1000, 1000, 1000});
  CHECK(ring.timeouts == expected);
  CHECK(ring.armed_at == std::vector<int>{10});  // once: the flag stays set until a record clears it
}

TEST_CASE("a record ends idleness: busy again, and ten more empty passes before the next arming") {
  std::atomic<bool> stopping{false};
  std::deque<int> script = empties(12);  // armed, checked, one long wait
  script.push_back(1);                   // the wake-up's record
  for (int i = 0; i < 11; ++i) script.push_back(0);
  ScriptedRing ring(script, stopping, true);
  CHECK(drain_ring<int>(ring, 100, milliseconds(1000), stopping, [](auto&, const Status&) {}));
  std::vector<long> expected(10, 20);
  expected.insert(expected.end(), {0, 1000, 1000});  // the 13th poll waited long and got the record
  expected.insert(expected.end(), 10, 20);           // busy: ten empty passes
  expected.push_back(0);                             // armed again after them: the check
  CHECK(ring.timeouts == expected);
  CHECK(ring.armed_at == std::vector<int>{10, 23});
}

TEST_CASE("a record found by the check after arming keeps the loop busy") {
  std::atomic<bool> stopping{false};
  std::deque<int> script = empties(10);
  script.push_back(2);  // submitted silently just before the flag was set
  script.push_back(0);
  ScriptedRing ring(script, stopping, true);
  CHECK(drain_ring<int>(ring, 100, milliseconds(1000), stopping, [](auto&, const Status&) {}));
  std::vector<long> expected(10, 20);
  expected.insert(expected.end(), {0, 20});
  CHECK(ring.timeouts == expected);
}

TEST_CASE("a source that cannot be woken stays at the busy pace, asked once") {
  std::atomic<bool> stopping{false};
  ScriptedRing ring(empties(30), stopping, false);
  CHECK(drain_ring<int>(ring, 100, milliseconds(1000), stopping, [](auto&, const Status&) {}));
  CHECK(ring.timeouts == std::vector<long>(30, 20));
  CHECK(ring.armed_at == std::vector<int>{10});
}

TEST_CASE("the capture loop's idle wait: its tick's pace") {
  constexpr std::int64_t kMs = 1'000'000;
  CHECK(capture_idle_wait(false, false, 250 * kMs) == milliseconds(250));  // the estimator's default
  CHECK(capture_idle_wait(false, false, 100 * kMs) == milliseconds(100));
  CHECK(capture_idle_wait(false, false, 10'000 * kMs) == milliseconds(1000));  // at most a second
  CHECK(capture_idle_wait(false, false, 50 * kMs) == milliseconds(100));       // at least the busy tick
  CHECK(capture_idle_wait(true, false, 250 * kMs) == milliseconds(100));       // remote halves pair on it
  CHECK(capture_idle_wait(false, true, 250 * kMs) == milliseconds(100));       // conntrack events queue
}
