//===- ModelWeights.h - The weights a compiled model carries -----------------------------===//
//
// A model's trace names a safetensors file of its parameters and buffers; its artifact gets
// the ones the translation reads, checked against what was traced, in a file of its own.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_DRIVER_MODELWEIGHTS_H
#define SOTC_DRIVER_MODELWEIGHTS_H

#include "compiler/frontend/Translation.h"

#include <string>

namespace sotc::driver {

/// The safetensors bytes of the weights `translation` reads, taken from the file that the
/// trace at `tracePath` names; E1015 when that file is missing, corrupt, or disagrees with
/// the trace (a weight absent, or of another dtype or shape).
std::string artifactWeights(const std::string &tracePath, const trace::Trace &trace,
                            const frontend::Translation &translation);

} // namespace sotc::driver

#endif // SOTC_DRIVER_MODELWEIGHTS_H
