#include "runtime/src/ConvPlan.h"

namespace sotc::runtime {

std::string validate(const ConvPlan &p) {
  // Beyond 2^40 elements no machine holds the tensor; products of these stay in int64.
  constexpr int64_t kMaxSize = int64_t{1} << 20;
  for (int64_t size : {p.n, p.c, p.h, p.w, p.oc, p.kh, p.kw, p.oh, p.ow})
    if (size < 1 || size > kMaxSize)
      return "sizes must be positive (and below 2^20)";
  if (p.groups < 1 || p.c % p.groups != 0 || p.oc % p.groups != 0)
    return "groups must divide the input and output channels";
  for (int i = 0; i < 2; ++i) {
    if (p.strides[i] < 1 || p.dilations[i] < 1 || p.pads[2 * i] < 0 || p.pads[2 * i + 1] < 0 ||
        p.strides[i] > kMaxSize || p.dilations[i] > kMaxSize || p.pads[2 * i] > kMaxSize ||
        p.pads[2 * i + 1] > kMaxSize)
      return "strides and dilations must be positive, pads not negative";
    int64_t in = i ? p.w : p.h, kernel = i ? p.kw : p.kh, out = i ? p.ow : p.oh;
    int64_t span = in + p.pads[2 * i] + p.pads[2 * i + 1] - p.dilations[i] * (kernel - 1);
    if (span < 1 || (span - 1) / p.strides[i] + 1 != out)
      return "the output size is not the window's over the padded input";
  }
  if (p.inputElements() > kMaxSize * kMaxSize || p.outputElements() > kMaxSize * kMaxSize ||
      p.weightElements() > kMaxSize * kMaxSize)
    return "a tensor of more than 2^40 elements";
  return "";
}

} // namespace sotc::runtime
