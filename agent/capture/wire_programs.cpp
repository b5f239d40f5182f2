#include "capture/wire_programs.hpp"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>

#include "capture/counter_slices.hpp"
#include "capture/libbpf_log.hpp"
#include "capture/program_verify.hpp"
#include "skewscope/abi/wire_event.h"
#include "wire_sockops.skel.h"
#include "wire_tc.skel.h"
#include "wire_tc_ctx.skel.h"

namespace skewscope {
namespace {

Status load_failed(const std::string& what, int err) {
  const std::string said = take_libbpf_messages();
  return Status::fail("loading BPF object " + what + ": " +
                      (said.empty() ? std::string(std::strerror(-err)) : verdict_line(said)));
}

}  // namespace

WirePrograms::~WirePrograms() { close_all(); }

void WirePrograms::close_all() {
  if (sockops_) wire_sockops__destroy(sockops_);
  sockops_ = nullptr;
  for (auto& [path, skel] : ctx_by_netns_) wire_tc_ctx__destroy(skel);
  ctx_by_netns_.clear();
  maps_owner_ = nullptr;
  if (kern_ctx_) wire_tc__destroy(kern_ctx_);
  kern_ctx_ = nullptr;
  variant_.clear();
}

Status WirePrograms::load_tc(const std::string& variant, const WireProgramSettings& settings) {
  close_all();
  collect_libbpf_messages();
  take_libbpf_messages();
  if (variant == kWireVariantKernCtx) {
    kern_ctx_ = wire_tc__open();
    if (!kern_ctx_) return Status::fail(std::string("opening BPF object wire_tc: ") + std::strerror(errno));
    kern_ctx_->rodata->egress_data = settings.egress_data ? 1 : 0;
    kern_ctx_->rodata->ack_samples = settings.ack_samples ? 1 : 0;
    if (Status sized = CounterSlices::size_map(kern_ctx_->maps.wire_counters, SKEWSCOPE_WIRE_CNT__COUNT); !sized) {
      close_all();
      return sized;
    }
    if (int err = wire_tc__load(kern_ctx_)) {
      Status failed = load_failed("wire_tc", err);
      close_all();
      return failed;
    }
    variant_ = variant;
    return Status::ok();
  }
  // ctx: one instance per namespace; the first one's ring buffer and counters serve them all.
  for (const auto& [path, inode] : settings.netns_inodes) {
    wire_tc_ctx* skel = wire_tc_ctx__open();
    if (!skel) {
      close_all();
      return Status::fail(std::string("opening BPF object wire_tc_ctx: ") + std::strerror(errno));
    }
    ctx_by_netns_[path] = skel;
    skel->rodata->egress_data = settings.egress_data ? 1 : 0;
    skel->rodata->ack_samples = settings.ack_samples ? 1 : 0;
    skel->rodata->iface_netns_ino = inode;
    if (maps_owner_) {
      bpf_map__reuse_fd(skel->maps.wire_halves, bpf_map__fd(maps_owner_->maps.wire_halves));
      bpf_map__reuse_fd(skel->maps.wire_counters, bpf_map__fd(maps_owner_->maps.wire_counters));
    } else if (Status sized = CounterSlices::size_map(skel->maps.wire_counters, SKEWSCOPE_WIRE_CNT__COUNT); !sized) {
      close_all();
      return sized;
    }
    if (int err = wire_tc_ctx__load(skel)) {
      Status failed = load_failed("wire_tc_ctx", err);
      close_all();
      return failed;
    }
    if (!maps_owner_) maps_owner_ = skel;
  }
  if (ctx_by_netns_.empty()) return Status::fail("no interface named: no namespace to load wire_tc_ctx for");
  variant_ = variant;
  return Status::ok();
}

Status WirePrograms::load_sockops() {
  if (variant_.empty()) return Status::fail("no tc variant loaded (the sock_ops send side shares its maps)");
  take_libbpf_messages();
  sockops_ = wire_sockops__open();
  if (!sockops_) return Status::fail(std::string("opening BPF object wire_sockops: ") + std::strerror(errno));
  // One ring buffer and one set of counters for both objects: one reader, one count.
  bpf_map__reuse_fd(sockops_->maps.wire_halves, ring_fd());
  bpf_map__reuse_fd(sockops_->maps.wire_counters, counters_fd());
  if (int err = wire_sockops__load(sockops_)) {
    Status failed = load_failed("wire_sockops", err);
    wire_sockops__destroy(sockops_);
    sockops_ = nullptr;
    return failed;
  }
  return Status::ok();
}

int WirePrograms::ingress_fd(const std::string& netns_path) const {
  if (kern_ctx_) return bpf_program__fd(kern_ctx_->progs.wire_ingress);
  auto it = ctx_by_netns_.find(netns_path);
  return it == ctx_by_netns_.end() ? -1 : bpf_program__fd(it->second->progs.wire_ingress_ctx);
}

int WirePrograms::egress_fd(const std::string& netns_path) const {
  if (kern_ctx_) return bpf_program__fd(kern_ctx_->progs.wire_egress);
  auto it = ctx_by_netns_.find(netns_path);
  return it == ctx_by_netns_.end() ? -1 : bpf_program__fd(it->second->progs.wire_egress_ctx);
}

int WirePrograms::ring_fd() const {
  if (kern_ctx_) return bpf_map__fd(kern_ctx_->maps.wire_halves);
  return maps_owner_ ? bpf_map__fd(maps_owner_->maps.wire_halves) : -1;
}

int WirePrograms::counters_fd() const {
  if (kern_ctx_) return bpf_map__fd(kern_ctx_->maps.wire_counters);
  return maps_owner_ ? bpf_map__fd(maps_owner_->maps.wire_counters) : -1;
}

bpf_link* WirePrograms::attach_sockops(int cgroup_fd) const {
  if (!sockops_) {
    errno = ENOENT;
    return nullptr;
  }
  return bpf_program__attach_cgroup(sockops_->progs.wire_sockops, cgroup_fd);
}

}  // namespace skewscope
