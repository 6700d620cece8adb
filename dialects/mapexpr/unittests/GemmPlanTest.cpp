// GEMM plans: what the library is asked to do for each shape of matmul.
#include "dialects/mapexpr/Utils/Gemm.h"

#include <catch2/catch.hpp>

using sotc::mapexpr::GemmPlan;
using sotc::mapexpr::planGemm;
using Shape = std::vector<int64_t>;

namespace {
const sotc::sched::SizeStandIns kSizes; // the first stand-ins
} // namespace

TEST_CASE("a 2-D matmul is one row-major GEMM", "[gemm]") {
  GemmPlan p = *planGemm({8, 16}, {16, 32}, false, false, kSizes);
  CHECK((p.m == 8 && p.n == 32 && p.k == 16));
  CHECK((p.lda == 16 && p.ldb == 32 && p.ldc == 32));
  CHECK(p.batch.empty());
  CHECK(p.shape == Shape{8, 32});
}

TEST_CASE("transposed operands keep their stored leading dimensions", "[gemm]") {
  GemmPlan p = *planGemm({16, 8}, {32, 16}, true, true, kSizes); // A stored [k, m], B [n, k]
  CHECK((p.m == 8 && p.n == 32 && p.k == 16 && p.transposeA && p.transposeB));
  CHECK((p.lda == 8 && p.ldb == 16 && p.ldc == 32));
}

TEST_CASE("a batch only A walks is folded into m (linear on [batch, seq, features])", "[gemm]") {
  GemmPlan p = *planGemm({4, 5, 16}, {16, 32}, false, false, kSizes);
  CHECK((p.m == 20 && p.n == 32 && p.k == 16));
  CHECK(p.batch.empty());
  CHECK(p.shape == Shape{4, 5, 32});
  // Transposed, A's rows are not contiguous: a batch loop instead.
  GemmPlan t = *planGemm({4, 16, 5}, {16, 32}, true, false, kSizes);
  CHECK((t.m == 5 && t.batch == Shape{4} && t.strideA == Shape{80} && t.strideB == Shape{0} &&
         t.strideC == Shape{160}));
}

TEST_CASE("broadcast batch dimensions stride 0; size-1 ones are dropped", "[gemm]") {
  GemmPlan p = *planGemm({2, 1, 3, 4}, {5, 4, 6}, false, false, kSizes);
  CHECK(p.shape == Shape{2, 5, 3, 6});
  CHECK(p.batch == Shape{2, 5});
  CHECK(p.strideA == Shape{12, 0});
  CHECK(p.strideB == Shape{0, 24});
  CHECK(p.strideC == Shape{90, 18});
  GemmPlan q = *planGemm({1, 3, 4}, {1, 4, 6}, false, false, kSizes);
  CHECK(q.batch.empty());
}

TEST_CASE("vectors are a 1 x k row or a k x 1 column", "[gemm]") {
  GemmPlan mv = *planGemm({3, 4}, {4}, false, true, kSizes); // a vector is never transposed
  CHECK((mv.m == 3 && mv.n == 1 && mv.k == 4 && !mv.transposeB && mv.ldb == 1));
  CHECK(mv.shape == Shape{3});
  GemmPlan vm = *planGemm({4}, {4, 6}, false, false, kSizes);
  CHECK((vm.m == 1 && vm.n == 6 && vm.lda == 4));
  CHECK(vm.shape == Shape{6});
}

TEST_CASE("shapes that are no matmul have no plan", "[gemm]") {
  std::string why;
  CHECK(!planGemm({2, 4}, {5, 3}, false, false, kSizes, &why));
  CHECK(why == "matmul(): contraction dimensions differ: [2, 4] and [5, 3] (4 vs 5)");
  CHECK(!planGemm({-1, 4099}, {4099, 3}, false, false, kSizes, &why));
  CHECK(why == "a GEMM step of a dynamic size cannot have a dimension of 4099");
}

namespace {
const int64_t S = kSizes.rows(); // s0 as the plan is made for it (4099)
} // namespace

TEST_CASE("the dynamic size s0 gives each count the power of s0 it holds", "[gemm]") {
  // Rows of A: m is s0, the rest static.
  GemmPlan rows = *planGemm({-1, 4}, {4, 3}, false, false, kSizes);
  CHECK((rows.m == S && rows.n == 3 && rows.k == 4 && rows.batch.empty()));
  CHECK(rows.shape == Shape{-1, 3});
  // A batch only A has folds into m: 8 rows per s0.
  GemmPlan folded = *planGemm({-1, 8, 4}, {4, 3}, false, false, kSizes);
  CHECK((folded.m == 8 * S && folded.batch.empty()));
  // A batch of both: the outer batch dim is s0, the strides static.
  GemmPlan both = *planGemm({-1, 2, 16, 8}, {-1, 2, 8, 16}, false, false, kSizes);
  CHECK((both.m == 16 && both.batch == Shape{S, 2}));
  CHECK((both.strideA == Shape{256, 128} && both.strideC == Shape{512, 256}));
  // A sequence length: the scores of an attention (q @ k^T: n and strides hold s0, C's s0^2),
  // then their product with v (k is s0).
  GemmPlan scores = *planGemm({4, -1, 16}, {4, -1, 16}, false, true, kSizes);
  CHECK((scores.m == S && scores.n == S && scores.k == 16 && scores.ldb == 16 && scores.ldc == S));
  CHECK((scores.batch == Shape{4} && scores.strideA == Shape{16 * S} &&
         scores.strideC == Shape{S * S}));
  GemmPlan values = *planGemm({4, -1, -1}, {4, -1, 16}, false, false, kSizes);
  CHECK((values.m == S && values.k == S && values.n == 16 && values.lda == S));
  CHECK((values.strideA == Shape{S * S} && values.strideB == Shape{16 * S}));
  // A contracted s0 (x^T @ y over the rows).
  GemmPlan contracted = *planGemm({-1, 4}, {-1, 3}, true, false, kSizes);
  CHECK((contracted.m == 4 && contracted.k == S && contracted.lda == 4));
}

TEST_CASE("a static dimension of 4099 is planned at other stand-ins", "[gemm]") {
  // sotc-choose-stand-ins gives such a module stand-ins that divide none of its sizes.
  sotc::sched::SizeStandIns sizes = sotc::sched::SizeStandIns::avoiding({4099, 3});
  GemmPlan p = *planGemm({-1, 4099}, {4099, 3}, false, false, sizes);
  CHECK((p.m == sizes.rows() && p.k == 4099 && p.n == 3));
  CHECK(sizes.sizeText(p.m, true) == "s0");
  CHECK(sizes.sizeText(p.k, true) == "4099");
}
