// The one way a stage reports failure: a function that can fail returns Result<T> (a value, or
// an error) or Status (nothing, or an error). The error is a one-line message that names the
// problem, for an operator to read; a decoder of peer or captured bytes whose rejections are
// counted by reason uses an enum as E instead, so the count and the message come from one place.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace skewscope {

template <class T, class E = std::string>
struct Result {
  std::optional<T> value;
  E error{};

  static Result ok(T v) { return Result{std::move(v), E{}}; }
  static Result fail(E why) { return Result{std::nullopt, std::move(why)}; }
  explicit operator bool() const { return value.has_value(); }
  const T& operator*() const& { return *value; }
  T& operator*() & { return *value; }
  T&& operator*() && { return std::move(*value); }
  const T* operator->() const { return &*value; }
  T* operator->() { return &*value; }
};

// For an operation with no value to return. Empty error = success, but only this type says so.
struct Status {
  std::string error;

  static Status ok() { return Status{}; }
  static Status fail(std::string why) { return Status{std::move(why)}; }
  explicit operator bool() const { return error.empty(); }
};

}  // namespace skewscope
