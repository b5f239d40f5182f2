#include "exchange/flow_codec.hpp"

#include <cstring>

#include "skewscope/v1/halves.pb.h"

namespace skewscope::exchange {

void put_address(std::string* out, const Address& a) { out->assign(reinterpret_cast<const char*>(a.data()), a.size()); }

bool get_address(const std::string& in, Address& a) {
  if (in.size() != a.size()) return false;
  std::memcpy(a.data(), in.data(), a.size());
  return true;
}

void put_flow(v1::Flow* out, const FlowKey& k) {
  put_address(out->mutable_src_addr(), k.src_addr);
  put_address(out->mutable_dst_addr(), k.dst_addr);
  out->set_src_port(k.src_port);
  out->set_dst_port(k.dst_port);
}

bool get_flow(const v1::Flow& f, FlowKey& k) {
  if (!valid_port(f.src_port()) || !valid_port(f.dst_port())) return false;
  if (!get_address(f.src_addr(), k.src_addr) || !get_address(f.dst_addr(), k.dst_addr)) return false;
  k.src_port = static_cast<std::uint16_t>(f.src_port());
  k.dst_port = static_cast<std::uint16_t>(f.dst_port());
  return true;
}

}  // namespace skewscope::exchange
