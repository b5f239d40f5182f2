#include "runtime/ring_drain.hpp"

namespace skewscope {

std::chrono::milliseconds DrainPace::next_timeout() const { return std::chrono::milliseconds(behind_ ? 0 : 20); }

Status source_failed(std::string why) { return Status::fail(why.empty() ? "the source failed" : std::move(why)); }

}  // namespace skewscope
