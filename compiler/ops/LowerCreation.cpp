//===- LowerCreation.cpp - Lowerings: full, zeros, ones and their *_like forms ----------------===//
#include "compiler/ops/Lowerings.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Diagnostics.h"

#include <cmath>

namespace sotc::ops::lowering {

void registerCreation(OpTable &t) {
  paddleLower(t, "full", fullOp("shape", "fill_value", "dtype", false), false);
  torchLower(t, "full", fullOp("size", "fill_value", "dtype", true), false);
  for (auto [name, value] : {std::pair<const char *, double>{"zeros", 0}, {"ones", 1}}) {
    paddleLower(
        t, name,
        [value = value](Lowering &L) {
          L.out(L.b.fill(value, L.args.intList("shape"), dtypeOr(L, "dtype", DType::Float32)));
        },
        false);
    std::string like = std::string(name) + "_like";
    paddleLower(t, like, fullLikeOp("x", value, "", "dtype"), false);
    torchLower(t, like, fullLikeOp("input", value, "", "dtype"), false);
  }
  paddleLower(t, "full_like", fullLikeOp("x", 0, "fill_value", "dtype"), false);
  torchLower(t, "full_like", fullLikeOp("input", 0, "fill_value", "dtype"), false);
}

} // namespace sotc::ops::lowering
