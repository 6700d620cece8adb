//===- Target.h - The machine a module is compiled for -----------------------------------===//
//
// One enum for the whole compiler: the pipeline, the passes that depend on the target (which
// read it from the module's #sched.target attribute), and the schedule policies.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_DIALECT_SCHED_UTILS_TARGET_H
#define SOTC_DIALECT_SCHED_UTILS_TARGET_H

#include <optional>
#include <string_view>

namespace sotc::sched {

enum class Target { Cuda, Cpu };

/// "cuda", "cpu": the one spelling of each, in options, attributes and manifests.
inline const char *targetName(Target target) { return target == Target::Cpu ? "cpu" : "cuda"; }

inline std::optional<Target> targetByName(std::string_view name) {
  if (name == "cuda")
    return Target::Cuda;
  if (name == "cpu")
    return Target::Cpu;
  return std::nullopt;
}

} // namespace sotc::sched

#endif // SOTC_DIALECT_SCHED_UTILS_TARGET_H
