#include "dialects/sched/Utils/Mesh.h"

#include <catch2/catch.hpp>

#include <functional>
#include <map>

using namespace sotc::sched;

namespace {
std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const MeshError &e) {
    return e.what();
  }
  return "no error";
}

std::string loops(const Schedule &s) {
  std::string out;
  for (const LoopDescriptor &d : s.loops)
    out += (out.empty() ? "" : ", ") + d.str();
  return out;
}

ScheduleMesh mesh(std::vector<ScheduleDim> dims) { return ScheduleMesh(std::move(dims)); }

const SizeStandIns kSizes; // the first stand-ins
const int64_t kBatchRows = kSizes.rows();
} // namespace

TEST_CASE("meshes reshape, transpose and pad", "[sched]") {
  ScheduleMesh m = mesh({ScheduleDim::injective(4), ScheduleDim::reducedDim(6)});
  CHECK(m.str() == "[I(4), R(6)]");
  ScheduleMesh t = m.transpose({1, 0});
  CHECK(t.outputShape() == std::vector<int64_t>{6, 4});
  CHECK(t.outputReduced(0));
  CHECK_FALSE(t.outputReduced(1));
  ScheduleMesh r = m.reshape({4, 2, -1});
  CHECK(r.outputShape() == std::vector<int64_t>{4, 2, 3});
  CHECK_FALSE(r.outputReduced(0));
  CHECK(r.outputReduced(1));
  CHECK(r.outputReduced(2));
  ScheduleMesh flat = m.reshape({24});
  CHECK(flat.outputReduced(0)); // mixes reduced elements in
  ScheduleMesh p = flat.roundUpPadding({std::optional<int64_t>(32)});
  CHECK(p.outputShape() == std::vector<int64_t>{32});
  CHECK(p.str() == "[I(4), R(6)].reshape([24]).padding([32])");
  CHECK(p.roundUpPadding({std::optional<int64_t>(32)}).str() == p.str()); // nothing to pad
  CHECK(m.padding({4, 8}).outputNumElements() == 32);
  CHECK(m.inputNumElements() == 24);
}

TEST_CASE("mesh algebra errors say which rule broke", "[sched]") {
  ScheduleMesh m = mesh({ScheduleDim::injective(4), ScheduleDim::reducedDim(6)});
  CHECK(errorOf([&] {
          m.reshape({5, 5});
        }) == "reshape [5, 5] has 25 elements, the mesh [4, 6] has 24");
  CHECK(errorOf([&] { m.reshape({-1, -1}); }) == "reshape [-1, -1]: only one dimension can be -1");
  CHECK(errorOf([&] {
          m.reshape({-1, 5});
        }) == "reshape [-1, 5]: 24 elements do not divide into it");
  CHECK(errorOf([&] {
          m.reshape({-2, 24});
        }) == "reshape [-2, 24]: sizes must be non-negative or -1");
  CHECK(errorOf([&] { m.transpose({0, 0}); }) == "transpose [0, 0] is not a permutation");
  CHECK(errorOf([&] { m.transpose({0}); }) == "transpose [0] does not fit a rank-2 mesh");
  CHECK(errorOf([&] { m.padding({4, 5}); }) == "padding [4, 5] would shrink dim 1 from 6 to 5");
  CHECK(errorOf([&] { m.padding({4}); }) == "padding [4] does not fit a rank-2 mesh");
  CHECK(errorOf([&] {
          m.roundUpPadding({std::nullopt, 0});
        }) == "round-up alignment must be positive");
  CHECK(errorOf([] { mesh({ScheduleDim::injective(-1)}); }) ==
        "schedule dim 0 has size -1; meshes need static sizes");
  CHECK(errorOf([&] { loopDescriptors(m, {LoopType::S0x}); }) ==
        "1 loop types for a mesh with 2 output dims");
  CHECK(errorOf([&] {
          loopDescriptors(m, {LoopType::S1x, LoopType::S1x});
        }) == "loop type threadIdx.x=0..6 is bound twice");
  CHECK(errorOf([&] {
          loopDescriptors(m, {LoopType::S1x, LoopType::S0x});
        }) == "a reduced dim cannot be bound to blocks (blockIdx.x=0..6)");
}

TEST_CASE("loop descriptors print as CINN prints them", "[sched]") {
  ScheduleMesh m =
      mesh({ScheduleDim::injective(2), ScheduleDim::injective(64), ScheduleDim::reducedDim(3)});
  std::vector<LoopDescriptor> d =
      loopDescriptors(m, {LoopType::S0x, LoopType::S1x, LoopType::Temporal});
  CHECK(d[0].str() == "blockIdx.x=0..2");
  CHECK(d[1].str() == "threadIdx.x=0..64");
  CHECK(d[2].str() == "t0=0..3");
}

TEST_CASE("the injective GPU policy sizes blocks by the problem", "[sched][policy]") {
  // 64 elements: one block of 64 threads.
  CHECK(loops(gpuInjectiveSchedule({ScheduleDim::injective(64)})) ==
        "blockIdx.x=0..1, threadIdx.x=0..64");
  // 100 elements: padded to a warp multiple.
  Schedule odd = gpuInjectiveSchedule({ScheduleDim::injective(10), ScheduleDim::injective(10)});
  CHECK(loops(odd) == "blockIdx.x=0..1, threadIdx.x=0..128");
  CHECK(odd.mesh.str() == "[I(10), I(10)].reshape([100]).padding([128]).reshape([-1, 128])");
  // 64 x 128: 256 threads per block, vectorized by 4.
  CHECK(loops(gpuInjectiveSchedule({ScheduleDim::injective(64), ScheduleDim::injective(128)})) ==
        "blockIdx.x=0..8, threadIdx.x=0..256, v0=0..4");
  // Padded to 3072, which splits into 256-thread blocks of 4-wide vectors.
  CHECK(loops(gpuInjectiveSchedule({ScheduleDim::injective(3000)})) ==
        "blockIdx.x=0..3, threadIdx.x=0..256, v0=0..4");
  // 1100 pads to 1280: five blocks, no vectors (1280 is not a multiple of 256 x 4).
  CHECK(loops(gpuInjectiveSchedule({ScheduleDim::injective(1100)})) ==
        "blockIdx.x=0..5, threadIdx.x=0..256");
  CHECK_THROWS_AS(gpuInjectiveSchedule({ScheduleDim::reducedDim(4)}), MeshError);
}

TEST_CASE("GPU threads move 128 bits of the widest element at once", "[sched][policy]") {
  CHECK(gpuVectorElements(2) == 8); // float16, bfloat16: 8 halves, one 128-bit access
  CHECK(gpuVectorElements(1) == 8);
  CHECK(gpuVectorElements(4) == 4);
  CHECK(gpuVectorElements(8) == 4); // float64: two accesses
  // 64 x 128 halves: 256 threads per block, 8 halves each.
  CHECK(loops(gpuInjectiveSchedule({ScheduleDim::injective(64), ScheduleDim::injective(128)}, 8)) ==
        "blockIdx.x=0..4, threadIdx.x=0..256, v0=0..8");
  // 3072 splits into 256 x 4 but not 256 x 8: no vectors.
  CHECK(loops(gpuInjectiveSchedule({ScheduleDim::injective(3000)}, 8)) ==
        "blockIdx.x=0..12, threadIdx.x=0..256");
}

TEST_CASE("the reduction GPU policy puts rows on blocks and reduces across threads",
          "[sched][policy]") {
  // softmax over [32, 128], reducing the last axis.
  Schedule s =
      gpuReductionSchedule({ScheduleDim::injective(32), ScheduleDim::reducedDim(128)}, kSizes);
  CHECK(loops(s) == "blockIdx.x=0..32, threadIdx.x=0..128, t0=0..1");
  CHECK(s.mesh.str() == "[I(32), R(128)].transpose([0, 1]).reshape([32, 128]).reshape([32, -1, "
                        "128]).transpose([0, 2, 1])");
  // A reduced axis first ([R(1000), I(4)]): moved innermost, padded to the thread count.
  Schedule t =
      gpuReductionSchedule({ScheduleDim::reducedDim(1000), ScheduleDim::injective(4)}, kSizes);
  CHECK(loops(t) == "blockIdx.x=0..4, threadIdx.x=0..256, t0=0..4");
  CHECK(t.mesh.outputReduced(1));
  CHECK_FALSE(t.mesh.outputReduced(0));
}

TEST_CASE("empty spaces schedule to empty loops", "[sched][policy]") {
  CHECK(loops(gpuInjectiveSchedule({ScheduleDim::injective(0), ScheduleDim::injective(8)})) ==
        "blockIdx.x=0..0, threadIdx.x=0..32");
  CHECK(loops(gpuReductionSchedule({ScheduleDim::injective(4), ScheduleDim::reducedDim(0)},
                                   kSizes)) == "blockIdx.x=0..4, threadIdx.x=0..32, t0=0..0");
  CHECK(errorOf([] { mesh({ScheduleDim::injective(0)}).reshape({-1, 0}); }) == "no error");
}

TEST_CASE("the CPU policy maps the same space to a parallel and a vector loop", "[sched][policy]") {
  // The innermost dimension is the contiguous vector loop when it fills a vector...
  CHECK(loops(cpuSchedule({ScheduleDim::injective(64), ScheduleDim::injective(128)}, kSizes)) ==
        "blockIdx.x=0..64, v0=0..128");
  // ...else flat chunks of 8, padded.
  CHECK(loops(cpuSchedule({ScheduleDim::injective(64), ScheduleDim::injective(3)}, kSizes)) ==
        "blockIdx.x=0..24, v0=0..8");
  CHECK(loops(cpuSchedule({ScheduleDim::injective(10)}, kSizes)) == "blockIdx.x=0..2, v0=0..8");
  CHECK(loops(cpuSchedule({ScheduleDim::reducedDim(6), ScheduleDim::injective(4)}, kSizes)) ==
        "blockIdx.x=0..4, t0=0..6");
}

TEST_CASE("the CPU runs a reduction whose innermost dim is injective as lanes", "[sched][policy]") {
  using D = ScheduleDim;
  // A depthwise convolution's taps [N, C, KH, KW, OH, OW]: rows of (n, c, oh), the taps, the
  // output row's lanes; the last dim stays the mesh's last.
  std::optional<Schedule> dw =
      cpuLaneReductionSchedule({D::injective(2), D::injective(4), D::reducedDim(3),
                                D::reducedDim(3), D::injective(8), D::injective(16)},
                               kSizes);
  REQUIRE(dw);
  CHECK(loops(*dw) == "blockIdx.x=0..64, t0=0..9, v1=0..16");
  CHECK(dw->mesh.keepsLastDim());
  // x.sum(1) of [B, T, C] needs no transpose.
  std::optional<Schedule> middle =
      cpuLaneReductionSchedule({D::injective(4), D::reducedDim(128), D::injective(16)}, kSizes);
  REQUIRE(middle);
  CHECK(middle->mesh.str() == "[I(4), R(128), I(16)].reshape([4, 128, 16])");
  // Not for a reduced or short innermost dim, nor one or a reduced dim holding s0.
  CHECK_FALSE(cpuLaneReductionSchedule({D::injective(4), D::reducedDim(16)}, kSizes));
  CHECK_FALSE(cpuLaneReductionSchedule({D::reducedDim(16), D::injective(3)}, kSizes));
  CHECK_FALSE(cpuLaneReductionSchedule({D::reducedDim(16), D::injective(kBatchRows)}, kSizes));
  CHECK_FALSE(cpuLaneReductionSchedule({D::reducedDim(kBatchRows), D::injective(16)}, kSizes));
  CHECK(cpuLaneReductionSchedule({D::injective(kBatchRows), D::reducedDim(3), D::injective(16)},
                                 kSizes));
  // Rows of a short innermost dim where the caller asks (a statement reading windows).
  CHECK(loops(cpuSchedule({D::injective(64), D::injective(7)}, kSizes, {4, {}})) ==
        "blockIdx.x=0..64, v0=0..7");
  // A loop order of the caller's: the statement's writes.
  CHECK(cpuSchedule({D::injective(4), D::injective(6), D::injective(8)}, kSizes, {8, {1, 0, 2}})
            .mesh.str() == "[I(4), I(6), I(8)].transpose([1, 0, 2]).reshape([24, 8])");
  // keepsLastDim: a transpose that moves it, a reshape that splits it.
  CHECK_FALSE(mesh({D::injective(4), D::injective(8)}).transpose({1, 0}).keepsLastDim());
  CHECK_FALSE(mesh({D::injective(4), D::injective(8)}).reshape({8, 4}).keepsLastDim());
  CHECK(mesh({D::injective(4), D::injective(2), D::injective(8)}).reshape({8, 8}).keepsLastDim());
}

TEST_CASE("loop coordinates map back to anchor coordinates", "[sched]") {
  // Every point of the anchor space is reached exactly once; padding maps to nothing.
  for (const Schedule &s :
       {gpuInjectiveSchedule({ScheduleDim::injective(10), ScheduleDim::injective(10)}),
        gpuReductionSchedule({ScheduleDim::reducedDim(40), ScheduleDim::injective(3)}, kSizes)}) {
    std::map<std::vector<int64_t>, int> hits;
    std::vector<int64_t> idx(s.mesh.outputRank(), 0);
    int64_t total = s.mesh.outputNumElements();
    for (int64_t n = 0; n < total; ++n) {
      int64_t rest = n;
      for (size_t d = idx.size(); d-- > 0;) {
        idx[d] = rest % s.mesh.outputShape()[d];
        rest /= s.mesh.outputShape()[d];
      }
      if (auto in = s.mesh.inputIndex(idx))
        ++hits[*in];
    }
    CHECK(static_cast<int64_t>(hits.size()) == s.mesh.inputNumElements());
    for (const auto &[point, count] : hits) {
      INFO(s.mesh.str());
      CHECK(count == 1);
      for (size_t d = 0; d < point.size(); ++d)
        CHECK(point[d] < s.mesh.inputDims()[d].size);
    }
  }
}

TEST_CASE("row schedules put a kernel's rows on blocks or the parallel loop", "[mesh][rows]") {
  // A reduction over the trailing axis, and its consumer over the same [32, 128] space.
  std::vector<ScheduleDim> reduction = {ScheduleDim::injective(32), ScheduleDim::reducedDim(128)};
  std::vector<ScheduleDim> consumer = {ScheduleDim::injective(32), ScheduleDim::injective(128)};
  RowSplit split = rowSplit(reduction, kSizes);
  CHECK(split.perm == std::vector<int64_t>{0, 1});
  CHECK(split.rows == 32);
  CHECK(split.reduce == 128);
  CHECK(gpuRowThreads(128) == 128);
  CHECK(gpuRowThreads(96) == 128); // 3 warps: all_reduce's lowering races
  CHECK(gpuRowThreads(5) == 32);
  CHECK(gpuRowThreads(10000) == 256);
  Schedule gpu = gpuRowSchedule(consumer, split.perm, 32, 128);
  CHECK(gpu.loops[0].str() == "blockIdx.x=0..32");
  CHECK(gpu.loops[1].str() == "threadIdx.x=0..128");
  CHECK(gpu.loops[2].str() == "t0=0..1");
  CHECK(gpuRowSchedule(reduction, split.perm, 32, 128).loops[0].str() == "blockIdx.x=0..32");
  Schedule cpu = cpuRowSchedule(consumer, split.perm, 32);
  CHECK(cpu.loops[0].str() == "blockIdx.x=0..32"); // S0x: the parallel loop on a CPU
  CHECK(cpu.loops[1].type == LoopType::Vectorize);
  CHECK(cpuRowSchedule(reduction, split.perm, 32).loops[1].type == LoopType::Temporal);
  // A reduction over the leading axis: rows are the columns, the reduced axis goes last.
  RowSplit columns = rowSplit({ScheduleDim::reducedDim(64), ScheduleDim::injective(8)}, kSizes);
  CHECK(columns.perm == std::vector<int64_t>{1, 0});
  CHECK(columns.rows == 8);
  // Rows must divide the space.
  CHECK_THROWS_AS(gpuRowSchedule(consumer, split.perm, 3, 128), MeshError);
  CHECK_THROWS_AS(cpuRowSchedule(consumer, split.perm, 0), MeshError);
}

TEST_CASE("a dynamic size leads the grid, unpadded", "[sched][batch]") {
  auto I = ScheduleDim::injective;
  // First, or behind static dims (a transpose moved it): the grid holds it first (a block's
  // coordinate in it is a quotient by static sizes).
  Schedule first = cpuSchedule({I(kBatchRows), I(3)}, kSizes);
  CHECK(first.mesh.str() == "[I(4099), I(3)].reshape([4099, 3])");
  Schedule moved = cpuSchedule({I(3), I(kBatchRows), I(4), I(16)}, kSizes);
  CHECK(moved.mesh.str() ==
        "[I(3), I(4099), I(4), I(16)].transpose([1, 0, 2, 3]).reshape([49188, 16])");
  // Innermost ([H, D, T]: a transposed key): the order kept, the vector loop up to s0 over
  // contiguous elements.
  Schedule inner = cpuSchedule({I(4), I(kBatchRows)}, kSizes);
  CHECK(loops(inner) == "blockIdx.x=0..4, v0=0..4099");
  // Only dims of s0 ([T, T] scores): a grid of T, a vector loop up to T.
  Schedule square = cpuSchedule({I(kBatchRows), I(kBatchRows)}, kSizes);
  CHECK(loops(square) == "blockIdx.x=0..4099, v0=0..4099");
  CHECK_FALSE(padsBatch(square.mesh, kSizes));
  CHECK(rowSplit({I(4), I(kBatchRows), ScheduleDim::reducedDim(8)}, kSizes).perm ==
        std::vector<int64_t>{1, 0, 2});
  // A padded s0 is one a mask would compare with the stand-in.
  ScheduleMesh padded = mesh({I(kBatchRows), I(3)}).reshape({-1}).roundUpPadding({8});
  CHECK(padsBatch(padded.reshape({-1, 8}), kSizes));
  CHECK_FALSE(padsBatch(mesh({I(4), I(kBatchRows)}).reshape({4, kBatchRows}), kSizes));
  // Counts per row print as the batch symbol times them.
  CHECK(perRowText(1) == "s0");
  CHECK(perRowText(64, "?") == "64*?");
  CHECK(kSizes.sizeText(64 * kBatchRows, true) == "64*s0");
  CHECK(kSizes.sizeText(64 * kBatchRows, false) == std::to_string(64 * kBatchRows));
  CHECK(kSizes.sizeText(64 * kBatchRows * kBatchRows, true) == "64*s0^2");
  CHECK(kSizes.sizeText(kBatchRows * kBatchRows, true) == "s0^2");
  CHECK(kSizes.sizeText(64, true) == "64");
  CHECK(kSizes.batchDegree(3 * kBatchRows * kBatchRows) == 2);
  CHECK(kSizes.staticFactor(3 * kBatchRows * kBatchRows) == 3);
  for (int64_t size : {int64_t{7}, kBatchRows, 64 * kBatchRows, 4 * kBatchRows * kBatchRows})
    CHECK(kSizes.sizeOfText(kSizes.sizeText(size, true)) == size);
  CHECK_FALSE(kSizes.sizeOfText("4*"));
  CHECK_FALSE(kSizes.sizeOfText("s0*4"));
  // A second size (a sequence beside a batch) at its own stand-in: powers of each.
  const int64_t s1 = kSizes.values()[1];
  CHECK(kSizes.holdsBatch(3 * s1));
  CHECK_FALSE(kSizes.holdsBatch(4098));
  CHECK(kSizes.sizePowers(8 * kBatchRows * s1 * s1) == std::vector<int>{1, 2});
  CHECK(kSizes.sizePowers(8 * s1) == std::vector<int>{0, 1});
  CHECK(kSizes.sizePowers(8).empty());
  CHECK(kSizes.batchDegree(8 * kBatchRows * s1 * s1) == 3);
  CHECK(kSizes.staticFactor(8 * kBatchRows * s1 * s1) == 8);
  CHECK(kSizes.sizeText(8 * kBatchRows * s1 * s1, true) == "8*s0*s1^2");
  CHECK(kSizes.sizeText(s1, true) == "s1");
  CHECK(kSizes.sizeText(kBatchRows * s1, true) == "s0*s1");
  for (int64_t size : {s1, 2 * s1 * s1, 8 * kBatchRows * s1 * s1, kBatchRows * s1})
    CHECK(kSizes.sizeOfText(kSizes.sizeText(size, true)) == size);
  CHECK_FALSE(kSizes.sizeOfText("s1*s1"));
  CHECK_FALSE(kSizes.sizeOfText("s9"));
  CHECK_FALSE(kSizes.sizeOfText("2*s1^0"));
  CHECK_FALSE(kSizes.sizeOfText("s0^10"));
}

TEST_CASE("a module's stand-ins are the first primes that divide none of its static sizes",
          "[sched][batch]") {
  CHECK(kSizes.values() ==
        sotc::contract::SizeValues{4099, 4111, 4127, 4129, 4133, 4139, 4153, 4157});
  CHECK(kSizes.isFirst());
  CHECK(SizeStandIns::avoiding({0, 1, 7, 4098, 4100}).isFirst());
  // A static 4099 and a multiple of 4127: each stand-in taken by a factor moves on.
  SizeStandIns moved = SizeStandIns::avoiding({4099, 3 * 4127});
  CHECK(moved.values() ==
        sotc::contract::SizeValues{4111, 4129, 4133, 4139, 4153, 4157, 4159, 4177});
  CHECK_FALSE(moved.isFirst());
  // A static 4099 is then a static size, and a size of s0 one of 4111.
  CHECK_FALSE(moved.holdsBatch(4099));
  CHECK(moved.sizeText(4099 * 4111, true) == "4099*s0");
  CHECK(moved.sizeProduct(4099 * 4111) == sotc::contract::SizeProduct{4099, {1}});
  CHECK(moved.standInSize(sotc::contract::SizeProduct{4099, {1}}) == 4099 * 4111);
  // Only increasing primes from 4099 are stand-ins.
  CHECK(SizeStandIns::of({4111, 4129, 4133, 4139, 4153, 4157, 4159, 4177}) == moved);
  CHECK_FALSE(SizeStandIns::of({4111, 4129}));
  CHECK_FALSE(SizeStandIns::of({4111, 4129, 4133, 4139, 4153, 4157, 4177, 4159}));
  CHECK_FALSE(SizeStandIns::of({4111, 4129, 4133, 4139, 4153, 4157, 4159, 4179}));
  CHECK_FALSE(SizeStandIns::of({2, 3, 5, 7, 11, 13, 17, 19}));
}
