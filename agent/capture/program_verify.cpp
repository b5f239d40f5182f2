#include "capture/program_verify.hpp"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "capture/libbpf_log.hpp"
#include "rdma_verbs.skel.h"
#include "tcp_syscalls.skel.h"
#include "wire_sockops.skel.h"
#include "wire_tc.skel.h"
#include "wire_tc_ctx.skel.h"

namespace skewscope {
namespace {

template <const void* (*ElfBytes)(std::size_t*)>
BpfObjectImage image(const char* name) {
  std::size_t size = 0;
  const void* bytes = ElfBytes(&size);
  return {name, bytes, size};
}

// Writes each named variable's initial value in the object's .rodata (before load, libbpf lets
// the caller change it; the verifier then sees the value as a constant).
Status set_rodata(bpf_object* obj, const RodataValues& values) {
  if (values.empty()) return Status::ok();
  bpf_map* rodata = nullptr;
  bpf_map* map = nullptr;
  bpf_object__for_each_map(map, obj) {
    const char* name = bpf_map__name(map);
    if (name && std::strstr(name, ".rodata")) rodata = map;
  }
  btf* types = bpf_object__btf(obj);
  if (!rodata || !types) return Status::fail("the object has no .rodata or no BTF");
  std::size_t size = 0;
  const void* initial = bpf_map__initial_value(rodata, &size);
  const int sec = btf__find_by_name_kind(types, ".rodata", BTF_KIND_DATASEC);
  if (!initial || sec <= 0) return Status::fail("the object's .rodata cannot be read");
  std::vector<unsigned char> bytes(static_cast<const unsigned char*>(initial),
                                   static_cast<const unsigned char*>(initial) + size);
  unsigned char* data = bytes.data();
  const btf_type* datasec = btf__type_by_id(types, sec);
  std::size_t found = 0;
  const btf_var_secinfo* var = btf_var_secinfos(datasec);
  for (int i = 0; i < btf_vlen(datasec); ++i, ++var) {
    const char* name = btf__name_by_offset(types, btf__type_by_id(types, var->type)->name_off);
    auto value = values.find(name ? name : "");
    if (value == values.end()) continue;
    if (var->offset + var->size > size || var->size > sizeof(std::uint32_t))
      return Status::fail(std::string("rodata variable ") + value->first + " cannot be set");
    const std::uint32_t v = value->second;
    std::memcpy(data + var->offset, &v, var->size);  // little-endian: the low bytes first
    ++found;
  }
  if (found != values.size()) return Status::fail("a rodata variable to set is not in the object");
  if (int err = bpf_map__set_initial_value(rodata, bytes.data(), bytes.size()))
    return Status::fail(std::string("writing the object's .rodata: ") + std::strerror(-err));
  return Status::ok();
}

// Opens a private copy of the object with only `wanted` to load, loads and closes it.
Status load_only(const BpfObjectImage& object, const std::vector<std::string>& wanted, const RodataValues& rodata) {
  collect_libbpf_messages();
  take_libbpf_messages();
  LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = object.name.c_str());
  bpf_object* obj = bpf_object__open_mem(object.bytes, object.size, &opts);
  if (!obj) return Status::fail("opening BPF object " + object.name + ": " + std::strerror(errno));
  bpf_program* prog = nullptr;
  std::size_t matched = 0;
  bpf_object__for_each_program(prog, obj) {
    const bool want =
        wanted.empty() || std::find(wanted.begin(), wanted.end(), bpf_program__name(prog)) != wanted.end();
    matched += want;
    bpf_program__set_autoload(prog, want);
  }
  skip_maps_kernel_lacks(obj);
  Status status = set_rodata(obj, rodata);
  if (status && !wanted.empty() && matched != wanted.size())
    status = Status::fail("a program to load is not in " + object.name);
  if (status) {
    const int err = bpf_object__load(obj);
    if (err) {
      std::string said = take_libbpf_messages();
      status = Status::fail(said.empty() ? std::string(std::strerror(-err)) : said);
    }
  }
  bpf_object__close(obj);
  return status;
}

}  // namespace

void skip_maps_kernel_lacks(bpf_object* object) {
  bpf_map* map = nullptr;
  bpf_object__for_each_map(map, object) {
    const auto type = bpf_map__type(map);
    if (type == BPF_MAP_TYPE_ARRAY || type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_PERCPU_ARRAY) continue;
    if (libbpf_probe_bpf_map_type(type, nullptr) != 1) bpf_map__set_autocreate(map, false);
  }
}

const std::vector<BpfObjectImage>& bpf_object_images() {
  static const std::vector<BpfObjectImage> images = {
      image<tcp_syscalls__elf_bytes>("tcp_syscalls"), image<wire_tc__elf_bytes>("wire_tc"),
      image<wire_tc_ctx__elf_bytes>("wire_tc_ctx"),   image<wire_sockops__elf_bytes>("wire_sockops"),
      image<rdma_verbs__elf_bytes>("rdma_verbs"),
  };
  return images;
}

const BpfObjectImage* find_bpf_object(const std::string& name) {
  for (const auto& i : bpf_object_images())
    if (i.name == name) return &i;
  return nullptr;
}

std::vector<ProgramVerdict> verify_each_program(const BpfObjectImage& object, const RodataValues& rodata) {
  std::vector<std::string> names;
  {
    LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = object.name.c_str());
    bpf_object* obj = bpf_object__open_mem(object.bytes, object.size, &opts);
    if (!obj) return {{object.name, "(object)", false, std::string("cannot be opened: ") + std::strerror(errno)}};
    bpf_program* prog = nullptr;
    bpf_object__for_each_program(prog, obj) names.emplace_back(bpf_program__name(prog));
    bpf_object__close(obj);
  }
  std::vector<ProgramVerdict> out;
  for (const auto& name : names) {
    const Status loaded = load_only(object, {name}, rodata);
    out.push_back({object.name, name, static_cast<bool>(loaded), loaded.error});
  }
  return out;
}

Status test_load_programs(const BpfObjectImage& object, const std::vector<std::string>& programs,
                          const RodataValues& rodata) {
  const Status loaded = load_only(object, programs, rodata);
  if (loaded) return loaded;
  return Status::fail(verdict_line(loaded.error));
}

std::string verdict_line(const std::string& log, int lines) {
  // libbpf frames the verifier's log between these lines and adds its own summary after it
  // ("failed to load object"): the verdict is the log's end, when there is a log.
  static const std::string kEnd = "-- END PROG LOAD LOG --";
  std::string text = log;
  if (std::size_t end = text.rfind(kEnd); end != std::string::npos) {
    std::size_t begin = text.rfind("-- BEGIN PROG LOAD LOG --", end);
    text = begin == std::string::npos ? text.substr(0, end) : text.substr(begin, end - begin);
  }
  // Without a verifier log (libbpf refused before the kernel saw it: a missing extern, a missing
  // attach target), libbpf's generic summary lines say nothing: the lines before them do.
  std::string kept;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const bool generic = line.find("failed to load object") != std::string::npos ||
                         line.find("failed to load: -") != std::string::npos ||
                         line.find("failed to prepare load attributes") != std::string::npos;
    if (!generic) kept += line + "\n";
  }
  if (kept.find_first_not_of("\n ") == std::string::npos) kept = text;
  std::string out;
  for (char c : last_lines(kept, lines)) out += c == '\n' ? std::string(" | ") : std::string(1, c);
  return out;
}

}  // namespace skewscope
