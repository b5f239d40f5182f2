// Result of parsing user input: a value, or a one-line error that names the problem.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace skewscope {

template <class T>
struct Parsed {
  std::optional<T> value;
  std::string error;

  static Parsed ok(T v) { return Parsed{std::move(v), {}}; }
  static Parsed fail(std::string why) { return Parsed{std::nullopt, std::move(why)}; }
  explicit operator bool() const { return value.has_value(); }
  const T& operator*() const { return *value; }
  const T* operator->() const { return &*value; }
};

}  // namespace skewscope
