#include "health/pairing_window.hpp"

#include <algorithm>

namespace skewscope {

PairingWindow::PairingWindow(std::int64_t window_ns, std::int64_t bucket_ns, PairingFloor floor)
    : bucket_ns_(bucket_ns > 0 ? bucket_ns : 1),
      buckets_(static_cast<std::size_t>(std::max<std::int64_t>(1, (window_ns + bucket_ns_ - 1) / bucket_ns_))),
      floor_(floor) {}

std::int64_t PairingWindow::index_of(std::int64_t t) const {
  const std::int64_t q = t / bucket_ns_;  // floor division, without negating t (see pair_window.cpp)
  return (t % bucket_ns_ != 0 && t < 0) ? q - 1 : q;
}

PairingWindow::Bucket& PairingWindow::bucket(DomainId domain, std::int64_t at_ns) {
  for (const Recent& r : recent_)
    if (r.bucket && r.domain == domain && at_ns >= r.start_ns && at_ns - r.start_ns < bucket_ns_) return *r.bucket;
  auto& ring = rings_[domain];
  if (ring.empty()) ring.resize(buckets_);
  const std::int64_t index = index_of(at_ns);
  const auto size = static_cast<std::int64_t>(ring.size());
  Bucket& b = ring[static_cast<std::size_t>(((index % size) + size) % size)];
  // An older bucket's slot is reused; a late event for a bucket already replaced by a newer one
  // lands in the newer one (it is at most one bucket late: spans and expiries come in time order).
  if (b.index < index) b = Bucket{index};
  recent_[1] = recent_[0];
  recent_[0] = Recent{domain, index * bucket_ns_, &b};
  return b;
}

void PairingWindow::add_paired(const std::vector<Span>& spans) {
  for (std::size_t i = 0; i < spans.size();) {
    const Span& first = spans[i];
    const std::int64_t start = index_of(first.capture_ns) * bucket_ns_;  // the bucket's first ns
    const auto in_bucket = [&](std::int64_t t) {
      return t >= start &&
             static_cast<std::uint64_t>(t) - static_cast<std::uint64_t>(start) < static_cast<std::uint64_t>(bucket_ns_);
    };
    std::size_t j = i + 1;
    while (j < spans.size() && spans[j].src == first.src && spans[j].dst == first.dst && in_bucket(spans[j].capture_ns))
      ++j;
    bucket(first.src, first.capture_ns).paired += j - i;
    bucket(first.dst, first.capture_ns).paired += j - i;
    i = j;
  }
}

std::vector<DomainPairing> PairingWindow::report(std::int64_t now_ns) const {
  std::vector<DomainPairing> out;
  const std::int64_t newest = index_of(now_ns);
  const std::int64_t oldest = newest - static_cast<std::int64_t>(buckets_) + 1;
  for (const auto& [domain, ring] : rings_) {
    DomainPairing d;
    d.domain = domain;
    for (const Bucket& b : ring) {
      if (b.index < oldest || b.index > newest) continue;
      d.paired_halves += b.paired;
      d.unpaired_halves += b.unpaired;
    }
    if (d.paired_halves + d.unpaired_halves == 0) continue;
    d.below_floor = d.paired_halves + d.unpaired_halves >= floor_.min_halves && d.ratio() < floor_.min_ratio;
    out.push_back(d);
  }
  return out;
}

}  // namespace skewscope
