#include "capture/family_status.hpp"

namespace skewscope {

const char* family_name(CaptureFamily f) {
  switch (f) {
    case CaptureFamily::tcp: return "tcp";
    case CaptureFamily::payload: return "payload";
    case CaptureFamily::wire: return "wire";
    case CaptureFamily::wire_send: return "wire_send";
    case CaptureFamily::rdma: return "rdma";
    case CaptureFamily::count_: break;
  }
  return "?";
}

const char* family_reason_name(FamilyReason r) {
  switch (r) {
    case FamilyReason::running: return "running";
    case FamilyReason::not_requested: return "not_requested";
    case FamilyReason::kernel_lacks_feature: return "kernel_lacks_feature";
    case FamilyReason::load_failed: return "load_failed";
    case FamilyReason::count_: break;
  }
  return "?";
}

}  // namespace skewscope
