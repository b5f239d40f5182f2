#include "health/loss_window.hpp"

namespace skewscope {

LossWindow::LossWindow(std::int64_t bucket_ns, std::size_t buckets)
    : bucket_ns_(bucket_ns > 0 ? bucket_ns : 1), ring_(buckets > 0 ? buckets : 1) {}

namespace {
std::int64_t floor_div(std::int64_t t, std::int64_t d) { return t >= 0 ? t / d : -((-t + d - 1) / d); }
}  // namespace

void LossWindow::add(std::int64_t now_ns, std::uint64_t halves) {
  if (halves == 0) return;
  const std::int64_t index = floor_div(now_ns, bucket_ns_);
  const auto size = static_cast<std::int64_t>(ring_.size());
  Bucket& b = ring_[static_cast<std::size_t>(((index % size) + size) % size)];
  // A slot holding a newer bucket cannot happen for a loss noticed "now" unless time went back:
  // keep the newer one, and count the loss in it rather than forget it.
  if (b.index < index) b = Bucket{index, 0};
  b.halves += halves;
}

std::uint64_t LossWindow::in_window(std::int64_t now_ns) const {
  const std::int64_t newest = floor_div(now_ns, bucket_ns_);
  const std::int64_t oldest = newest - static_cast<std::int64_t>(ring_.size()) + 1;
  std::uint64_t total = 0;
  for (const Bucket& b : ring_)
    if (b.index >= oldest && b.index <= newest) total += b.halves;
  return total;
}

}  // namespace skewscope
