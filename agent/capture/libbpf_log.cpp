#include "capture/libbpf_log.hpp"

#include <bpf/libbpf.h>

#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace skewscope {
namespace {

std::mutex g_mutex;
std::string g_messages;

// libbpf hands over the whole verifier log as one "%s" argument: formatted in full, never into a
// fixed line buffer (which kept only its first KiB, and the verdict is at its end).
int collect(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (n <= 0) return n;
  std::string text(static_cast<std::size_t>(n) + 1, '\0');
  std::vsnprintf(text.data(), text.size(), format, args);
  text.resize(static_cast<std::size_t>(n));
  std::lock_guard lock(g_mutex);
  g_messages += text;
  if (g_messages.size() > kLibbpfLogKeep) g_messages.erase(0, g_messages.size() - kLibbpfLogKeep);
  return n;
}

}  // namespace

void collect_libbpf_messages() { libbpf_set_print(collect); }

std::string take_libbpf_messages() {
  std::lock_guard lock(g_mutex);
  std::string out;
  out.swap(g_messages);
  return out;
}

std::string last_lines(const std::string& text, int lines) {
  std::size_t end = text.find_last_not_of("\n ");
  if (end == std::string::npos) return {};
  std::size_t pos = end + 1;
  for (int i = 0; i < lines && pos > 0; ++i) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text.substr(0, end + 1);
    while (pos > 0 && text[pos - 1] == '\n') --pos;  // blank lines do not count
  }
  std::size_t start = text.find_first_not_of('\n', pos);
  return text.substr(start, end + 1 - start);
}

}  // namespace skewscope
