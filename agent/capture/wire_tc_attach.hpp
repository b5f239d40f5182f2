// Per-interface tc work for WireCapture, each run inside the interface's network namespace:
// attaching our filters (creating a clsact only where none exists, marking it so that a restarted
// agent can remove it) and detaching them again. Apart from wire_capture.cpp because it is the
// part that changes the system's qdiscs and must leave everyone else's filters alone.
#pragma once

#include "capture/wire_capture.hpp"
#include "skewscope/result.hpp"

namespace skewscope {

// Attaches wire_ingress (and, when `tc_egress`, wire_egress) on slot.iface, filling in slot's
// ifindex, namespace and what it created or recovered; `slot` records whatever part succeeded,
// so that detach_wire_filters undoes exactly that. Without tc egress, a filter of ours that an
// earlier agent left on egress is removed.
Status attach_wire_filters(WireAttachment& slot, int ingress_fd, int egress_fd, bool tc_egress);

// Removes our filters from a's interface and the clsact if the agent created it (with its mark).
// A namespace that is gone took them with it: nothing to do there.
void detach_wire_filters(const WireAttachment& a);

}  // namespace skewscope
