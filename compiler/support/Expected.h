//===- Expected.h - A value or the coded error that prevented it -------------------------===//
//
// Libraries below the passes (operator table, index expressions, meshes) report failures
// to IR code as values: passes never catch exceptions. `catchCodedError` is the one place
// a library turns its own CodedError into such a value, at its boundary.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_SUPPORT_EXPECTED_H
#define SOTC_SUPPORT_EXPECTED_H

#include "compiler/support/Diagnostics.h"

#include <optional>
#include <type_traits>
#include <utility>

namespace sotc {

template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : value_(std::move(value)) {}
  Expected(CodedError error) : error_(std::move(error)) {}

  explicit operator bool() const { return value_.has_value(); }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }
  /// Only when !*this.
  const CodedError &error() const { return *error_; }

private:
  std::optional<T> value_;
  std::optional<CodedError> error_;
};

/// Runs `f`; a CodedError it throws becomes the error of the result.
template <typename F> auto catchCodedError(F &&f) -> Expected<std::invoke_result_t<F>> {
  try {
    return f();
  } catch (const CodedError &e) {
    return e;
  }
}

} // namespace sotc

#endif // SOTC_SUPPORT_EXPECTED_H
