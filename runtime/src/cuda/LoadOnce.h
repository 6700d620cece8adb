//===- LoadOnce.h - A library's entry points, resolved once per process ---------------------===//
#ifndef SOTC_RUNTIME_CUDA_LOADONCE_H
#define SOTC_RUNTIME_CUDA_LOADONCE_H

#include "runtime/src/Error.h"

#include <mutex>
#include <string>

namespace sotc::runtime::cuda {

/// What Load() returns, computed by the first caller; a failure (an Error) is remembered and
/// reported again, as E8003, to every later caller.
template <typename T, T (*Load)()> const T &loadOnce() {
  static std::once_flag once;
  static T loaded{};
  static std::string failure;
  std::call_once(once, [] {
    try {
      loaded = Load();
    } catch (const Error &e) {
      failure = e.what();
    }
  });
  if (!failure.empty())
    throw Error(ErrorCode::CannotRunHere, failure);
  return loaded;
}

} // namespace sotc::runtime::cuda

#endif // SOTC_RUNTIME_CUDA_LOADONCE_H
