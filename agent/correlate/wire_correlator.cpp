#include "correlate/wire_correlator.hpp"

namespace skewscope {

namespace {
void tag(std::vector<Span>& out, std::size_t from, TimestampSource source) {
  for (std::size_t i = from; i < out.size(); ++i) out[i].timestamp_source = source;
}
}  // namespace

void WireCorrelator::add(const Half& software, const std::optional<Half>& hardware, std::vector<Span>& out) {
  std::size_t first = out.size();
  software_.add(software, out);
  tag(out, first, TimestampSource::wire_software);
  if (hardware) {
    first = out.size();
    hardware_.add(*hardware, out);
    tag(out, first, TimestampSource::wire_hardware);
  }
}

void WireCorrelator::add_hardware_only(const Half& hardware, std::vector<Span>& out) {
  const std::size_t first = out.size();
  hardware_.add(hardware, out);
  tag(out, first, TimestampSource::wire_hardware);
}

void WireCorrelator::add_ack(const Half& ack, std::vector<Span>& out) {
  const std::size_t first = out.size();
  acks_.add(ack, out);
  tag(out, first, TimestampSource::wire_software);
}

void WireCorrelator::expire(std::int64_t now_ns) {
  acks_.expire(now_ns);
  software_.expire(now_ns);
  hardware_.expire(now_ns);
}

}  // namespace skewscope
