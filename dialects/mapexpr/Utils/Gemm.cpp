#include "dialects/mapexpr/Utils/Gemm.h"

#include "compiler/ops/Inference.h"
#include "compiler/support/Expected.h"
#include "dialects/mapexpr/Utils/MapExpr.h"
#include "dialects/sched/Utils/Mesh.h"

#include <numeric>

namespace sotc::mapexpr {
namespace {

int64_t product(const std::vector<int64_t> &v, size_t from, size_t to) {
  return std::accumulate(v.begin() + from, v.begin() + to, int64_t{1}, std::multiplies<>());
}

} // namespace

std::optional<GemmPlan> planGemm(const std::vector<int64_t> &a, const std::vector<int64_t> &b,
                                 bool transposeA, bool transposeB, const sched::SizeStandIns &sizes,
                                 std::string *why) {
  auto fail = [&](const std::string &message) -> std::optional<GemmPlan> {
    if (why)
      *why = message;
    return std::nullopt;
  };
  Expected<std::vector<int64_t>> shape =
      catchCodedError([&] { return ops::matmulShape("matmul", a, b, transposeA, transposeB); });
  if (!shape)
    return fail(shape.error().what());
  // Dynamic sizes (sotc-sir-check-batch-dims) anywhere: the plan is made for each at its
  // stand-in (sched::SizeStandIns), primes no static size has as a factor, so each of its
  // counts holds the powers of the sizes it is made of.
  bool dynamic = false;
  for (const std::vector<int64_t> *s : {&a, &b})
    for (int64_t d : *s)
      if (d < 0)
        dynamic = true;
  for (const std::vector<int64_t> *s : {&a, &b})
    for (int64_t d : *s)
      if (dynamic && sizes.holdsBatch(d))
        return fail("a GEMM step of a dynamic size cannot have a dimension of " +
                    std::to_string(d));
  // Matrices as stored: a 1-D operand is a row (A) or a column (B), never transposed.
  std::vector<int64_t> as = a, bs = b;
  for (std::vector<int64_t> *s : {&as, &bs})
    for (int64_t &d : *s)
      if (d < 0) // a size the operand's type names (ops::dynamicDim, productDim), else s0
        d = modelDim(ops::isDynamicDim(d) ? d : ops::kDynamic, sizes);
  if (as.size() == 1) {
    as.insert(as.begin(), 1);
    transposeA = false;
  }
  if (bs.size() == 1) {
    bs.push_back(1);
    transposeB = false;
  }
  size_t ra = as.size(), rb = bs.size();
  GemmPlan p;
  p.standIns = sizes;
  p.transposeA = transposeA;
  p.transposeB = transposeB;
  p.m = transposeA ? as[ra - 1] : as[ra - 2];
  p.k = transposeA ? as[ra - 2] : as[ra - 1];
  p.n = transposeB ? bs[rb - 2] : bs[rb - 1];
  p.shape = *shape;
  p.lda = as[ra - 1];
  p.ldb = bs[rb - 1];
  p.ldc = p.n;
  // Batch dimensions, right-aligned and broadcast as numpy does.
  size_t batchA = ra - 2, batchB = rb - 2, rank = std::max(batchA, batchB);
  for (size_t d = 0; d < rank; ++d) {
    auto dim = [&](const std::vector<int64_t> &s, size_t batchRank) -> std::pair<int64_t, int64_t> {
      if (d + batchRank < rank)
        return {1, 0}; // absent: broadcast
      size_t i = d + batchRank - rank;
      return {s[i], s[i] == 1 ? 0 : product(s, i + 1, s.size())};
    };
    auto [da, sa] = dim(as, batchA);
    auto [db, sb] = dim(bs, batchB);
    int64_t size = std::max(da, db);
    if (size == 1)
      continue;
    p.batch.push_back(size);
    p.strideA.push_back(sa);
    p.strideB.push_back(sb);
  }
  // C is contiguous: each batch dimension's stride is the product of the later ones.
  p.strideC.assign(p.batch.size(), p.m * p.n);
  for (size_t d = p.batch.size(); d-- > 1;)
    p.strideC[d - 1] = p.strideC[d] * p.batch[d];
  // A batch only A walks, contiguous and untransposed, is more rows of one GEMM.
  bool onlyA = true;
  int64_t expect = p.m * p.k;
  for (size_t d = p.batch.size(); d-- > 0;) {
    onlyA &= p.strideB[d] == 0 && p.strideA[d] == expect;
    expect *= p.batch[d];
  }
  if (!p.batch.empty() && onlyA && !transposeA) {
    p.m *= product(p.batch, 0, p.batch.size());
    p.batch.clear();
    p.strideA.clear();
    p.strideB.clear();
    p.strideC.clear();
  }
  return p;
}

} // namespace sotc::mapexpr
