// How well each local domain's halves paired over the health window, and the floor below which
// its health cannot be vouched for.
//
// What counts (docs/contract.md, "Pairing floor"): every span counts its send half in the sender's
// domain and its receive half in the receiver's. An unpaired half counts against its own domain
// only when its peer is captured too: a send whose destination, or a receive whose source, is an
// address some captured half had as its own within the last window (captured_addresses.hpp;
// loopback excluded: AgentCore::count_unpaired). A half whose peer is not
// captured at all (a host without an agent, a service outside the lab) could never pair and says nothing about the
// capture; a half whose peer is captured but that did not pair (address translation, a capture
// that missed the other end, a mismatched domain) is exactly the traffic whose inversions the
// agent cannot see. A receive that is the middle of a larger send is not unpaired (correlator.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "skewscope/span.hpp"

namespace skewscope {

struct PairingFloor {
  double min_ratio = 0.9;          // below this share of paired halves ...
  std::uint64_t min_halves = 100;  // ... over at least this many counted halves in the window
};

struct DomainPairing {
  DomainId domain = 0;
  std::uint64_t paired_halves = 0;
  std::uint64_t unpaired_halves = 0;  // whose peer is captured
  bool below_floor = false;
  double ratio() const {
    const std::uint64_t all = paired_halves + unpaired_halves;
    return all ? static_cast<double>(paired_halves) / static_cast<double>(all) : 1.0;
  }
};

class PairingWindow {
 public:
  PairingWindow(std::int64_t window_ns, std::int64_t bucket_ns = 1'000'000'000, PairingFloor floor = {});

  // `at_ns`: CLOCK_MONOTONIC of the span's receive, or when the half aged out unpaired.
  void add_paired(DomainId domain, std::int64_t at_ns) { bucket(domain, at_ns).paired += 1; }
  void add_unpaired(DomainId domain, std::int64_t at_ns) { bucket(domain, at_ns).unpaired += 1; }
  // add_paired for both ends of every span (at its capture time), once per run of spans of one
  // pair of domains in one bucket: a batch's spans mostly are (a bucket lookup per half was a
  // twelfth of the agent's time per TCP message). Counts halves, not messages, as the correlator's
  // spans stand for one each.
  void add_paired(const std::vector<Span>& spans);
  // Domains with counted halves in the window, by DomainId.
  std::vector<DomainPairing> report(std::int64_t now_ns) const;
  const PairingFloor& floor() const { return floor_; }

 private:
  struct Bucket {
    std::int64_t index = std::numeric_limits<std::int64_t>::min();
    std::uint64_t paired = 0;
    std::uint64_t unpaired = 0;
  };
  Bucket& bucket(DomainId domain, std::int64_t at_ns);
  std::int64_t index_of(std::int64_t t) const;

  std::int64_t bucket_ns_;
  std::size_t buckets_;
  PairingFloor floor_;
  std::map<DomainId, std::vector<Bucket>> rings_;  // a ring's buckets never move once made
  // The last two buckets found, with the nanoseconds they cover: the two domains of a
  // request/response conversation alternate span by span, and a map lookup and three divisions
  // per half were a fourteenth of the agent's time on such traffic. A remembered bucket whose
  // slot a newer one has taken is that newer one, where bucket() puts a late half anyway.
  struct Recent {
    DomainId domain = 0;
    std::int64_t start_ns = 0;
    Bucket* bucket = nullptr;
  };
  std::array<Recent, 2> recent_{};
};

}  // namespace skewscope
