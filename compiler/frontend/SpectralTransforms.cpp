//===- SpectralTransforms.cpp - torch.stft and torch.istft as GEMMs with a Fourier bank ---===//
//
// A short-time Fourier transform is the signal's frames (unfold) times a bank of windowed
// cosines and sines (one row per frequency's real and imaginary part): a GEMM. Its inverse is
// the inverse bank times the spectrum, then the frames added where they overlap: with R =
// ceil(n_fft / hop), R shifted copies of the frames' hop-long blocks. (A transposed convolution
// would do both, but computed over the stride's inserted zeros: 1024x the work for HDemucs.)
// The banks are built from iota in the graph (weight hoisting computes them once, at load);
// angles are reduced modulo the frame length in integers before the cosine, so a 4096-point
// frame loses no precision to large arguments. The complex spectrum is a pair tensor
// (ComplexTensors.cpp).
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/Calls.h"

#include <cmath>

namespace sotc::frontend {
namespace {
using K = Variable::Kind;

VarPtr floatConst(double v) { return makeConst(PyConst::ofFloat(v), {}); }
} // namespace

VarPtr Executor::spectralTransform(Frame &f, StatementIR &sir, const std::string &opName,
                                   std::vector<VarPtr> &args, Kwargs &kwargs) {
  bool inverse = opName.substr(opName.rfind('.') + 1) == "istft";
  auto fail_ = [&](const std::string &why) {
    fail(DiagCode::FrontendUnsupportedCall, opName + " " + why, f);
  };
  auto call = [&](const std::string &name, std::vector<VarPtr> a, Kwargs k = {}) {
    return tensorCall(f, sir, "api", name, name, std::move(a), std::move(k));
  };
  auto arg = [&](const std::string &name, size_t index) {
    VarPtr v = argument(args, kwargs, name, index);
    return v && v->isConstant() && v->constant.kind == PyConst::Kind::None ? nullptr : v;
  };
  auto intArg = [&](const std::string &name, size_t index, int64_t otherwise) {
    VarPtr v = arg(name, index);
    if (v && !isInt(v))
      fail_("with a " + name + " that is not a number");
    return v ? v->constant.intValue : otherwise;
  };
  auto flag = [&](const std::string &name, size_t index, bool otherwise) {
    VarPtr v = arg(name, index);
    if (v && !isInt(v))
      fail_("with a " + name + " that is not a constant bool");
    return v ? v->constant.truthy() : otherwise;
  };

  // torch.stft(input, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
  //            onesided, return_complex); torch.istft(input, n_fft, hop_length, win_length,
  //            window, center, normalized, onesided, length, return_complex).
  VarPtr x = arg("input", 0);
  if (!x || !x->isTensor() || x->complexPair != inverse)
    fail_(inverse ? "needs a complex spectrum" : "needs a real signal");
  int64_t nFft = intArg("n_fft", 1, 0);
  int64_t hop = intArg("hop_length", 2, nFft / 4);
  int64_t winLength = intArg("win_length", 3, nFft);
  VarPtr window = arg("window", 4);
  bool center = flag("center", 5, true);
  bool normalized = flag("normalized", inverse ? 6 : 7, false);
  VarPtr onesided = arg("onesided", 8 - inverse);
  if (onesided && !(isInt(onesided) && onesided->constant.truthy()))
    fail_("of a two-sided spectrum is not supported yet (onesided=True is)");
  if (nFft <= 0 || hop <= 0 || winLength <= 0 || winLength > nFft)
    fail_("needs 0 < win_length <= n_fft and a positive hop_length");
  if (inverse && flag("return_complex", 9, false))
    fail_("with return_complex=True is not supported (a real signal is)");

  // The frame's window, centred in n_fft samples (torch pads a shorter one on both sides).
  const int64_t bins = nFft / 2 + 1;
  const VarPtr &like = x; // the dtype of the signal, or of the spectrum's pairs
  if (!window)
    window = call("torch.full_like",
                  {call("torch.Tensor.type_as", {call("torch.arange", {intConst(winLength)}), like}),
                   floatConst(1.0)});
  else if (!window->isTensor() || window->meta.rank() != 1 || window->meta.shape[0] != winLength)
    fail_("needs a window of win_length samples");
  window = call("torch.Tensor.type_as", {window, like});
  if (winLength < nFft) {
    int64_t left = (nFft - winLength) / 2;
    window = call("torch.nn.functional.pad", {window, intList({left, nFft - winLength - left})});
  }

  // The bank: row k holds cos(2 pi k n / N) then, F rows on, -sin(2 pi k n / N), each times
  // the window (and, for the inverse, the weight of bin k in the real inverse transform).
  VarPtr k = call("torch.unsqueeze", {call("torch.arange", {intConst(bins)}), intConst(1)});
  VarPtr n = call("torch.unsqueeze", {call("torch.arange", {intConst(nFft)}), intConst(0)});
  VarPtr turns = call("torch.remainder", {call("torch.mul", {k, n}), intConst(nFft)});
  VarPtr angle = call("torch.mul", {call("torch.Tensor.type_as", {turns, like}),
                                    floatConst(2 * M_PI / static_cast<double>(nFft))});
  VarPtr cosines = call("torch.cos", {angle}), sines = call("torch.neg", {call("torch.sin", {angle})});
  double scale = normalized ? (inverse ? std::sqrt(double(nFft)) : 1 / std::sqrt(double(nFft))) : 1;
  if (inverse) {
    // irfft: the bins between DC and Nyquist stand for themselves and their mirror images.
    VarPtr inner = call("torch.Tensor.type_as",
                        {call("torch.logical_and",
                              {call("torch.gt", {k, intConst(0)}),
                               call("torch.lt", {call("torch.mul", {k, intConst(2)}), intConst(nFft)})}),
                         like});
    VarPtr weight = call("torch.mul", {call("torch.add", {inner, floatConst(1.0)}),
                                       floatConst(scale / static_cast<double>(nFft))});
    cosines = call("torch.mul", {cosines, weight});
    sines = call("torch.mul", {sines, weight});
  } else if (scale != 1) {
    cosines = call("torch.mul", {cosines, floatConst(scale)});
    sines = call("torch.mul", {sines, floatConst(scale)});
  }
  VarPtr bank = call("torch.mul", {call("torch.cat", {makeSequence(K::List, {cosines, sines}, {}),
                                                      intConst(0)}),
                                   call("torch.unsqueeze", {window, intConst(0)})}); // [2F, N]

  if (!inverse) {
    // [L] or [B, L] -> [B, 1, L], padded by half a frame on each side when centred; its frames
    // [B, T, N] times the bank: [B, T, 2F].
    int64_t rank = x->meta.rank();
    if (rank != 1 && rank != 2)
      fail_("needs a signal of shape [L] or [B, L]");
    VarPtr signal = call("torch.unsqueeze", {rank == 1 ? call("torch.unsqueeze", {x, intConst(0)}) : x,
                                             intConst(1)});
    if (center) {
      VarPtr mode = arg("pad_mode", 6);
      signal = call("torch.nn.functional.pad",
                    {signal, intList({nFft / 2, nFft / 2}),
                     mode ? mode : makeConst(PyConst::ofStr("reflect"), {})});
    }
    VarPtr frames = tensorCall(f, sir, "method", "unfold", "torch.Tensor.unfold",
                               {call("torch.squeeze", {signal, intConst(1)}), intConst(-1),
                                intConst(nFft), intConst(hop)},
                               {});
    VarPtr spectrum = call("torch.matmul", {frames, call("torch.transpose", {bank, intConst(0), intConst(1)})});
    // [B, T, 2F] -> [B, F, T, 2]: the pair layout.
    spectrum = call("torch.unflatten", {spectrum, intConst(-1), intList({2, bins})});
    spectrum = call("torch.permute", {spectrum, intList({0, 3, 1, 2})});
    if (rank == 1)
      spectrum = call("torch.squeeze", {spectrum, intConst(0)});
    if (!arg("return_complex", 9))
      fail_("needs return_complex=True or False, as torch does for a real signal");
    spectrum->complexPair = flag("return_complex", 9, true);
    return spectrum;
  }

  // istft: [B, F, T, 2] -> [B, 2F, T]; the bank's transpose makes the windowed frames [B, N, T].
  int64_t rank = x->meta.rank() - 1;
  if (rank != 2 && rank != 3)
    fail_("needs a spectrum of shape [F, T] or [B, F, T]");
  if (x->meta.shape[rank - 2] != bins)
    fail_("needs n_fft / 2 + 1 frequency bins");
  VarPtr pairs = rank == 2 ? call("torch.unsqueeze", {x, intConst(0)}) : x;
  pairs = call("torch.permute", {pairs, intList({0, 3, 1, 2})});
  pairs = call("torch.flatten", {pairs, intConst(1), intConst(2)});
  VarPtr frames = call("torch.matmul", {call("torch.transpose", {bank, intConst(0), intConst(1)}), pairs});
  // Overlap-add of [b, N, T] frames, hop apart: N padded to R hops, frame t's hop r lands in
  // output block t + r, so R shifted [b, hop, T + R - 1] copies added make the blocks.
  const int64_t hops = (nFft + hop - 1) / hop;
  auto overlapAdd = [&](VarPtr framed) {
    VarPtr blocks = call("torch.unflatten",
                         {call("torch.nn.functional.pad", {framed, intList({0, 0, 0, hops * hop - nFft})}),
                          intConst(1), intList({hops, hop})});
    VarPtr sum;
    for (int64_t r = 0; r < hops; ++r) {
      VarPtr shifted = call("torch.nn.functional.pad",
                            {call("torch.select", {blocks, intConst(1), intConst(r)}),
                             intList({r, hops - 1 - r})});
      sum = sum ? call("torch.add", {sum, shifted}) : shifted;
    }
    return call("torch.flatten", {call("torch.transpose", {sum, intConst(1), intConst(2)}),
                                  intConst(1), intConst(2)});
  };
  // The windows' squares added up the same way: what the windowed frames are divided by.
  VarPtr ones = call("torch.ones_like",
                     {call("torch.narrow", {call("torch.narrow", {pairs, intConst(0), intConst(0), intConst(1)}),
                                            intConst(1), intConst(0), intConst(1)})});
  VarPtr squares = call("torch.mul", {call("torch.reshape", {call("torch.mul", {window, window}),
                                                            intList({1, nFft, 1})}),
                                      ones});
  VarPtr signal = call("torch.div", {overlapAdd(frames), overlapAdd(squares)});

  int64_t start = center ? nFft / 2 : 0;
  VarPtr length = arg("length", 8);
  if (length && !isInt(length))
    fail_("with a length that is not a number");
  int64_t count = x->meta.shape[rank - 1];
  if (count < 0 && (length || center))
    fail_("of a spectrum whose frame count is a symbolic size is not supported yet");
  int64_t produced = nFft + hop * (count - 1);
  int64_t end = length ? start + length->constant.intValue : center ? produced - nFft / 2 : produced;
  VarPtr out = call("torch.narrow", {signal, intConst(-1), intConst(start),
                                     intConst(std::min(end, produced) - start)});
  if (end > produced)
    out = call("torch.nn.functional.pad", {out, intList({0, end - produced})});
  return rank == 2 ? call("torch.squeeze", {out, intConst(0)}) : out;
}

} // namespace sotc::frontend
