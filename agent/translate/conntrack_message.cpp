#include "translate/conntrack_message.hpp"

#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>

#include <cstring>
#include <optional>

namespace skewscope::translate {

bool ConntrackEntry::translated() const {
  // Without translation the reply is the original turned around; the status bits say the same,
  // but the tuples are what the pairing relies on, so they decide.
  const FlowKey turned{original.dst_addr, original.src_addr, original.dst_port, original.src_port};
  return !(reply == turned);
}

std::string_view to_string(ConntrackReject reason) {
  switch (reason) {
    case ConntrackReject::truncated: return "truncated";
    case ConntrackReject::missing_tuple: return "missing_tuple";
    case ConntrackReject::bad_address: return "bad_address";
    case ConntrackReject::unexpected_type: return "unexpected_type";
    case ConntrackReject::count_: break;
  }
  return "unknown";
}

namespace {

using Bytes = std::span<const std::uint8_t>;

// One attribute: its type without the nested/byte-order flags, and its payload.
struct Attribute {
  std::uint16_t type = 0;
  Bytes payload;
};

// Calls `each` for every attribute in `bytes`; false when one runs past the end.
template <class F>
bool for_each_attribute(Bytes bytes, F&& each) {
  while (bytes.size() >= sizeof(nlattr)) {
    nlattr header;
    std::memcpy(&header, bytes.data(), sizeof header);
    if (header.nla_len < sizeof(nlattr) || header.nla_len > bytes.size()) return false;
    each(Attribute{static_cast<std::uint16_t>(header.nla_type & NLA_TYPE_MASK),
                   bytes.subspan(sizeof(nlattr), header.nla_len - sizeof(nlattr))});
    const std::size_t step = NLA_ALIGN(header.nla_len);
    if (step >= bytes.size()) return true;
    bytes = bytes.subspan(step);
  }
  return bytes.empty();
}

std::uint16_t big_endian_16(Bytes b) { return static_cast<std::uint16_t>((b[0] << 8) | b[1]); }

// IPv4 as IPv4-mapped IPv6, the form every half's key uses.
std::optional<Address> address_of(Bytes b) {
  Address a{};
  if (b.size() == 4) {
    a[10] = a[11] = 0xff;
    std::memcpy(a.data() + 12, b.data(), 4);
    return a;
  }
  if (b.size() == 16) {
    std::memcpy(a.data(), b.data(), 16);
    return a;
  }
  return std::nullopt;
}

struct Tuple {
  std::optional<Address> src, dst;
  std::optional<std::uint16_t> src_port, dst_port;
  std::uint8_t protocol = 0;
};

Result<FlowKey, ConntrackReject> decode_tuple(Bytes bytes, std::uint8_t& protocol) {
  Tuple t;
  bool bad_address = false;
  bool nested_whole = true;
  const bool whole = for_each_attribute(bytes, [&](const Attribute& a) {
    if (a.type == CTA_TUPLE_IP) {
      nested_whole &= for_each_attribute(a.payload, [&](const Attribute& ip) {
        const bool src = ip.type == CTA_IP_V4_SRC || ip.type == CTA_IP_V6_SRC;
        const bool dst = ip.type == CTA_IP_V4_DST || ip.type == CTA_IP_V6_DST;
        if (!src && !dst) return;
        auto address = address_of(ip.payload);
        if (!address) bad_address = true;
        (src ? t.src : t.dst) = address;
      });
    } else if (a.type == CTA_TUPLE_PROTO) {
      nested_whole &= for_each_attribute(a.payload, [&](const Attribute& p) {
        if (p.type == CTA_PROTO_NUM && p.payload.size() >= 1) t.protocol = p.payload[0];
        if (p.type == CTA_PROTO_SRC_PORT && p.payload.size() >= 2) t.src_port = big_endian_16(p.payload);
        if (p.type == CTA_PROTO_DST_PORT && p.payload.size() >= 2) t.dst_port = big_endian_16(p.payload);
      });
    }
  });
  if (!whole || !nested_whole) return Result<FlowKey, ConntrackReject>::fail(ConntrackReject::truncated);
  if (bad_address) return Result<FlowKey, ConntrackReject>::fail(ConntrackReject::bad_address);
  // Protocols without ports (ICMP's id and type are other attributes) leave the ports zero.
  if (!t.src || !t.dst) return Result<FlowKey, ConntrackReject>::fail(ConntrackReject::missing_tuple);
  protocol = t.protocol;
  return Result<FlowKey, ConntrackReject>::ok(FlowKey{*t.src, *t.dst, t.src_port.value_or(0), t.dst_port.value_or(0)});
}

}  // namespace

Result<ConntrackEntry, ConntrackReject> decode_conntrack_entry(Bytes payload, bool destroyed) {
  using R = Result<ConntrackEntry, ConntrackReject>;
  if (payload.size() < sizeof(nfgenmsg)) return R::fail(ConntrackReject::truncated);
  ConntrackEntry entry;
  entry.change = destroyed ? ConntrackChange::destroyed : ConntrackChange::present;
  std::optional<Bytes> original, reply;
  const bool whole = for_each_attribute(payload.subspan(sizeof(nfgenmsg)), [&](const Attribute& a) {
    if (a.type == CTA_TUPLE_ORIG) original = a.payload;
    if (a.type == CTA_TUPLE_REPLY) reply = a.payload;
    if (a.type == CTA_STATUS && a.payload.size() >= 4)
      entry.status = (std::uint32_t{a.payload[0]} << 24) | (std::uint32_t{a.payload[1]} << 16) |
                     (std::uint32_t{a.payload[2]} << 8) | a.payload[3];
  });
  if (!whole) return R::fail(ConntrackReject::truncated);
  if (!original || !reply) return R::fail(ConntrackReject::missing_tuple);
  std::uint8_t reply_protocol = 0;
  auto o = decode_tuple(*original, entry.protocol);
  if (!o) return R::fail(o.error);
  auto r = decode_tuple(*reply, reply_protocol);
  if (!r) return R::fail(r.error);
  entry.original = *o;
  entry.reply = *r;
  return R::ok(entry);
}

DatagramEnd decode_conntrack_datagram(Bytes datagram, std::vector<ConntrackEntry>& entries,
                                      ConntrackRejects& rejected) {
  DatagramEnd end;
  auto count = [&](ConntrackReject reason) { ++rejected[static_cast<std::size_t>(reason)]; };
  while (!datagram.empty()) {
    nlmsghdr header;
    if (datagram.size() < sizeof header) {
      count(ConntrackReject::truncated);
      break;
    }
    std::memcpy(&header, datagram.data(), sizeof header);
    if (header.nlmsg_len < sizeof header || header.nlmsg_len > datagram.size()) {
      count(ConntrackReject::truncated);
      break;
    }
    const Bytes payload = datagram.subspan(sizeof header, header.nlmsg_len - sizeof header);
    const std::uint16_t subsystem = NFNL_SUBSYS_ID(header.nlmsg_type);
    const std::uint16_t message = NFNL_MSG_TYPE(header.nlmsg_type);
    if (header.nlmsg_type == NLMSG_DONE) {
      end.dump_done = true;
    } else if (header.nlmsg_type == NLMSG_ERROR) {
      int error = 0;
      if (payload.size() >= sizeof error) std::memcpy(&error, payload.data(), sizeof error);
      if (error != 0) end.error = -error;  // 0 is an acknowledgement
    } else if (header.nlmsg_type == NLMSG_NOOP) {
    } else if (subsystem == NFNL_SUBSYS_CTNETLINK &&
               (message == IPCTNL_MSG_CT_NEW || message == IPCTNL_MSG_CT_DELETE)) {
      auto entry = decode_conntrack_entry(payload, message == IPCTNL_MSG_CT_DELETE);
      if (entry) {
        entries.push_back(*entry);
      } else {
        count(entry.error);
      }
    } else {
      count(ConntrackReject::unexpected_type);
    }
    const std::size_t step = NLMSG_ALIGN(header.nlmsg_len);
    if (step >= datagram.size()) break;
    datagram = datagram.subspan(step);
  }
  return end;
}

}  // namespace skewscope::translate
