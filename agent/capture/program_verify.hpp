// Test-loading the agent's BPF objects without keeping anything: each program alone (doctor
// --verify: the kernel's verdict on every program of every object), or a set of programs together
// (doctor: does what the candidate tables chose really load here). Each load opens its own copy
// of the object from the bytes built into the binary, loads, and closes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "skewscope/result.hpp"

struct bpf_object;

namespace skewscope {

// One BPF object as built into the binary (its skeleton's ELF bytes).
struct BpfObjectImage {
  std::string name;  // "tcp_syscalls", "wire_tc", "wire_tc_ctx", "wire_sockops", "rdma_verbs"
  const void* bytes = nullptr;
  std::size_t size = 0;
};
const std::vector<BpfObjectImage>& bpf_object_images();
const BpfObjectImage* find_bpf_object(const std::string& name);

// Read-only globals to set before load, by name (e.g. payload_max): code the agent enables with
// them is then verified too. Unsigned 8/16/32-bit variables of .rodata.
using RodataValues = std::map<std::string, std::uint32_t>;

struct ProgramVerdict {
  std::string object;
  std::string program;
  bool loaded = false;
  std::string log;  // what libbpf and the verifier said when it was refused (empty when loaded)
};

// Every program of `object`, each loaded alone (every other program's autoload off).
std::vector<ProgramVerdict> verify_each_program(const BpfObjectImage& object, const RodataValues& rodata = {});

// The named programs of `object` (empty: every program) loaded together (with every program named in no list off, as
// the agent does) and closed. The error: the loader's last lines.
Status test_load_programs(const BpfObjectImage& object, const std::vector<std::string>& programs,
                          const RodataValues& rodata = {});

// Maps of a type this kernel cannot create (task-local storage before Linux 5.11, used only by
// the raw_tp and sock_tp variants) are not created: libbpf would otherwise fail the whole object
// on them, whichever programs are loaded. A program that uses one is then refused by libbpf with
// the map's name. Call after open, before load.
void skip_maps_kernel_lacks(bpf_object* object);

// A verdict in one line: the last lines of the log, joined by " | ".
std::string verdict_line(const std::string& log, int lines = 3);

}  // namespace skewscope
