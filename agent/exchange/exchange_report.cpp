#include "exchange/exchange_report.hpp"

namespace skewscope::exchange {

const char* drop_reason_name(DropReason r) {
  switch (r) {
    case DropReason::outbox_full: return "outbox_full";
    case DropReason::queue_full: return "queue_full";
    case DropReason::delivery_failed: return "delivery_failed";
    case DropReason::partition_revoked: return "partition_revoked";
    case DropReason::remote_domain_full: return "remote_domain_full";
    case DropReason::pending_full: return "pending_full";
    case DropReason::offset_gap: return "offset_gap";
    case DropReason::count_: break;
  }
  return "unknown";
}

}  // namespace skewscope::exchange
