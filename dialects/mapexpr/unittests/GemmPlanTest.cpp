// GEMM plans: what the library is asked to do for each shape of matmul.
#include "dialects/mapexpr/Utils/Gemm.h"

#include <catch2/catch.hpp>

using sotc::mapexpr::GemmPlan;
using sotc::mapexpr::planGemm;
using Shape = std::vector<int64_t>;

TEST_CASE("a 2-D matmul is one row-major GEMM", "[gemm]") {
  GemmPlan p = *planGemm({8, 16}, {16, 32}, false, false);
  CHECK((p.m == 8 && p.n == 32 && p.k == 16));
  CHECK((p.lda == 16 && p.ldb == 32 && p.ldc == 32));
  CHECK(p.batch.empty());
  CHECK(p.shape == Shape{8, 32});
}

TEST_CASE("transposed operands keep their stored leading dimensions", "[gemm]") {
  GemmPlan p = *planGemm({16, 8}, {32, 16}, true, true); // A stored [k, m], B [n, k]
  CHECK((p.m == 8 && p.n == 32 && p.k == 16 && p.transposeA && p.transposeB));
  CHECK((p.lda == 8 && p.ldb == 16 && p.ldc == 32));
}

TEST_CASE("a batch only A walks is folded into m (linear on [batch, seq, features])", "[gemm]") {
  GemmPlan p = *planGemm({4, 5, 16}, {16, 32}, false, false);
  CHECK((p.m == 20 && p.n == 32 && p.k == 16));
  CHECK(p.batch.empty());
  CHECK(p.shape == Shape{4, 5, 32});
  // Transposed, A's rows are not contiguous: a batch loop instead.
  GemmPlan t = *planGemm({4, 16, 5}, {16, 32}, true, false);
  CHECK((t.m == 5 && t.batch == Shape{4} && t.strideA == Shape{80} && t.strideB == Shape{0} &&
         t.strideC == Shape{160}));
}

TEST_CASE("broadcast batch dimensions stride 0; size-1 ones are dropped", "[gemm]") {
  GemmPlan p = *planGemm({2, 1, 3, 4}, {5, 4, 6}, false, false);
  CHECK(p.shape == Shape{2, 5, 3, 6});
  CHECK(p.batch == Shape{2, 5});
  CHECK(p.strideA == Shape{12, 0});
  CHECK(p.strideB == Shape{0, 24});
  CHECK(p.strideC == Shape{90, 18});
  GemmPlan q = *planGemm({1, 3, 4}, {1, 4, 6}, false, false);
  CHECK(q.batch.empty());
}

TEST_CASE("vectors are a 1 x k row or a k x 1 column", "[gemm]") {
  GemmPlan mv = *planGemm({3, 4}, {4}, false, true); // a vector is never transposed
  CHECK((mv.m == 3 && mv.n == 1 && mv.k == 4 && !mv.transposeB && mv.ldb == 1));
  CHECK(mv.shape == Shape{3});
  GemmPlan vm = *planGemm({4}, {4, 6}, false, false);
  CHECK((vm.m == 1 && vm.n == 6 && vm.lda == 4));
  CHECK(vm.shape == Shape{6});
}

TEST_CASE("shapes that are no matmul, or not static, have no plan", "[gemm]") {
  std::string why;
  CHECK(!planGemm({2, 4}, {5, 3}, false, false, &why));
  CHECK(why == "matmul(): contraction dimensions differ: [2, 4] and [5, 3] (4 vs 5)");
  CHECK(!planGemm({4, -1}, {-1, 3}, false, false, &why));
  CHECK(why == "a GEMM step needs static shapes, or a dynamic first dimension of A (or of B as "
               "a batch)");
  CHECK(!planGemm({6, 4}, {-1, 3}, false, false, &why)); // B's rows are contracted
  CHECK(why == "a GEMM step needs static shapes, or a dynamic first dimension of A (or of B as "
               "a batch)");
  CHECK(!planGemm({-1, 4}, {4, 3}, true, false, &why));
  CHECK(why == "a GEMM step cannot contract the dynamic dimension");
  CHECK(!planGemm({-1, 4099}, {4099, 3}, false, false, &why));
  CHECK(why == "a GEMM step of a dynamic batch cannot have a dimension of 4099");
}

TEST_CASE("a dynamic batch makes m or the outer batch count per row of it", "[gemm]") {
  // Rows of A: m per row.
  GemmPlan rows = *planGemm({-1, 4}, {4, 3}, false, false);
  CHECK((rows.m == 1 && rows.n == 3 && rows.k == 4 && rows.batch.empty()));
  CHECK(rows.perBatch == GemmPlan::PerBatch::M);
  CHECK(rows.shape == Shape{-1, 3});
  // A batch only A has folds into m: 8 rows per batch row.
  GemmPlan folded = *planGemm({-1, 8, 4}, {4, 3}, false, false);
  CHECK((folded.m == 8 && folded.batch.empty() && folded.perBatch == GemmPlan::PerBatch::M));
  // A batch of both: the outer batch dim is one per batch row, the strides static.
  GemmPlan both = *planGemm({-1, 2, 16, 8}, {-1, 2, 8, 16}, false, false);
  CHECK((both.m == 16 && both.batch == Shape{1, 2}));
  CHECK((both.strideA == Shape{256, 128} && both.strideB == Shape{256, 128}));
  CHECK(both.strideC == Shape{512, 256});
  CHECK(both.perBatch == GemmPlan::PerBatch::Batch);
  // A batch only B has (a convolution's columns against its filters): A is shared.
  GemmPlan shared = *planGemm({4, 6}, {-1, 6, 5}, false, false);
  CHECK((shared.m == 4 && shared.batch == Shape{1} && shared.strideA == Shape{0}));
  CHECK((shared.strideB == Shape{30} && shared.strideC == Shape{20}));
  CHECK(shared.perBatch == GemmPlan::PerBatch::Batch);
  // Static shapes have no count per row.
  CHECK(planGemm({2, 4}, {4, 3}, false, false)->perBatch == GemmPlan::PerBatch::None);
}
