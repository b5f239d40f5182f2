// What libbpf says while it opens and loads objects: its messages (the verifier's log among them)
// collected so an error can say why a program was refused, not only which one. One collector for
// the process: libbpf's print callback is global.
#pragma once

#include <cstddef>
#include <string>

namespace skewscope {

// Installs the collector (idempotent). Messages of every level but debug are kept, the most
// recent `kLibbpfLogKeep` bytes of them.
void collect_libbpf_messages();
inline constexpr std::size_t kLibbpfLogKeep = 4 * 1024 * 1024;

// Everything collected since the last take, emptied.
std::string take_libbpf_messages();

// The last `lines` non-empty lines of `text`: the verifier's verdict is at the end of its log.
std::string last_lines(const std::string& text, int lines);

}  // namespace skewscope
