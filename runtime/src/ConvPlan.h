//===- ConvPlan.h - A manifest's convolution step, as the CPU backend reads it ------------===//
//
// NCHW: out = activation(conv2d(x, weight) + bias + residual), x [n, c, h, w],
// weight [oc, c / groups, kh, kw], out [n, oc, oh, ow], zeros outside x (docs/manifest.md). The
// CPU backend runs it as a oneDNN convolution, or where there is none as columns and a GEMM
// (one group) or a direct loop (several).
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_CONVPLAN_H
#define SOTC_RUNTIME_CONVPLAN_H

#include <array>
#include <cstdint>
#include <string>

namespace sotc::runtime {

/// A layout oneDNN's convolutions read and write as they are, in which convolution steps pass
/// tensors to each other: channels last (NHWC), or the channels in blocks of 8 (nChw8c:
/// [N, C/8, H, W, 8]).
enum class ChainLayout { None, ChannelsLast, Blocks8 };

/// Whether a tensor of `channels` fits in `layout` with NCHW's bytes (blocks only when whole).
inline bool holds(ChainLayout layout, int64_t channels) {
  return layout == ChainLayout::ChannelsLast ||
         (layout == ChainLayout::Blocks8 && channels % 8 == 0);
}

struct ConvPlan {
  enum class Activation { None, Relu, Relu6, Hardswish } activation = Activation::None;
  int64_t n = 0, c = 0, h = 0, w = 0, oc = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  /// Dividing c and oc: output channel o reads the input channels of group o / (oc / groups).
  int64_t groups = 1;
  std::array<int64_t, 2> strides{1, 1}, dilations{1, 1};
  std::array<int64_t, 4> pads{0, 0, 0, 0}; // top, bottom, left, right
  bool bias = false;                       // an input of oc values, one per output channel
  bool residual = false; // an input of the output's shape, added before the activation
  /// Whether the weight is the model's (or prepared from it): the same on every call until the
  /// weights change, so the backend may keep it in the layout its library wants.
  bool constantWeight = false;
  /// The manifest's "compute": "bfloat16" (`--precision bf16`): x and the weight read in
  /// bfloat16, accumulated in float32 (AMX, AVX-512 BF16); what the step holds stays float32.
  bool bf16 = false;
  /// Set by the CPU backend for convolutions that pass tensors to each other: x, the residual
  /// and the output held in the layout `chain` (the same elements as NCHW, rearranged), not
  /// NCHW.
  ChainLayout chain = ChainLayout::None;
  bool chainedInput = false, chainedResidual = false, chainedOutput = false;

  /// One group, 1x1, stride 1, no padding: x itself is the GEMM's right operand.
  bool pointwise() const {
    return groups == 1 && kh == 1 && kw == 1 && strides == std::array<int64_t, 2>{1, 1} &&
           pads == std::array<int64_t, 4>{0, 0, 0, 0};
  }
  int64_t inputElements() const { return n * c * h * w; }
  int64_t weightElements() const { return oc * (c / groups) * kh * kw; }
  int64_t outputElements() const { return n * oc * oh * ow; }
};

/// Checks a step read from a manifest: positive sizes, and an output size that is the window's
/// over the padded input. An empty string when it holds together, else why not.
std::string validate(const ConvPlan &plan);

} // namespace sotc::runtime

#endif // SOTC_RUNTIME_CONVPLAN_H
