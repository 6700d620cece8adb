#include "compiler/ops/Inference.h"
#include "compiler/ops/OpTable.h"
#include "compiler/support/Diagnostics.h"

#include <catch2/catch.hpp>

using namespace sotc;
using namespace sotc::ops;
using Shape = std::vector<int64_t>;

namespace {
Arg tensor(Shape shape, DType d = DType::Float32) { return Arg::ofTensor({std::move(shape), d}); }

TensorMeta infer(const std::string &name, std::vector<Arg> positional,
                 std::vector<std::pair<std::string, Arg>> keywords = {}, size_t output = 0) {
  return OpTable::get().lower(name, {std::move(positional), std::move(keywords)}).outputs()[output];
}

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const CodedError &e) {
    return std::string(diagInfo(e.code()).id) + " " + e.what();
  }
  return "no error";
}
} // namespace

TEST_CASE("numpy broadcasting", "[inference]") {
  CHECK(broadcastShapes("add", {2, 3}, {3}) == Shape{2, 3});
  CHECK(broadcastShapes("add", {2, 1}, {1, 4}) == Shape{2, 4});
  CHECK(broadcastShapes("add", {}, {5, 1}) == Shape{5, 1});
  CHECK(broadcastShapes("add", {kDynamic, 3}, {1, 3}) == Shape{kDynamic, 3});
  CHECK(errorOf([] {
          broadcastShapes("add", {2, 3}, {4});
        }) == "E2008 add(): shapes [2, 3] and [4] cannot be broadcast together");
  CHECK(errorOf([] {
          infer("paddle.add", {tensor({2, 3}), tensor({4})});
        }) == "E2008 add(): shapes [2, 3] and [4] cannot be broadcast together");
}

TEST_CASE("dtype promotion", "[inference]") {
  CHECK(promoteTypes(DType::Float16, DType::BFloat16) == DType::Float32);
  CHECK(promoteTypes(DType::Float16, DType::Float32) == DType::Float32);
  CHECK(promoteTypes(DType::Int32, DType::Float16) == DType::Float16);
  CHECK(promoteTypes(DType::Bool, DType::Int32) == DType::Int32);
  CHECK(promoteTypes(DType::UInt8, DType::Int8) == DType::Int16);
  CHECK(promoteTypes(DType::Int64, DType::Int32) == DType::Int64);
  CHECK(promoteTypes(DType::Complex64, DType::Float64) == DType::Complex128);
  CHECK(promoteWithScalar(DType::Int32, Arg::ofFloat(0.5)) == DType::Float32);
  CHECK(promoteWithScalar(DType::Float16, Arg::ofFloat(0.5)) == DType::Float16);
  CHECK(promoteWithScalar(DType::Bool, Arg::ofInt(2)) == DType::Int64);
  CHECK(promoteWithScalar(DType::Int32, Arg::ofInt(2)) == DType::Int32);

  CHECK(infer("paddle.divide", {tensor({2}, DType::Int32), tensor({2}, DType::Int32)}).dtype ==
        DType::Float32);
  CHECK(infer("__mul__", {tensor({2}, DType::Int64), Arg::ofFloat(1.5)}).dtype == DType::Float32);
  CHECK(infer("__radd__", {tensor({2}, DType::Float16), Arg::ofInt(1)}).dtype == DType::Float16);
  CHECK(infer("paddle.less_than", {tensor({2}), Arg::ofInt(0)}).dtype == DType::Bool);
  CHECK(infer("paddle.exp", {tensor({2}, DType::Int32)}).dtype == DType::Float32);
  CHECK(infer("paddle.concat", {Arg::list({tensor({1, 2}, DType::Float16), tensor({3, 2})})}) ==
        TensorMeta{{4, 2}, DType::Float32});
  CHECK(errorOf([] { infer("__invert__", {tensor({2})}); }) ==
        "E2009 __invert__(): ~ needs an integer or bool tensor, not float32");
}

TEST_CASE("reductions: negative axes, keepdim, integer accumulation", "[inference]") {
  CHECK(infer("paddle.sum", {tensor({2, 3, 4})},
              {{"axis", Arg::ofInt(-1)}, {"keepdim", Arg::ofBool(true)}}) ==
        TensorMeta{{2, 3, 1}, DType::Float32});
  CHECK(
      infer("Tensor.mean", {tensor({2, 3, 4}), Arg::list({Arg::ofInt(0), Arg::ofInt(-1)})}).shape ==
      Shape{3});
  CHECK(infer("paddle.sum", {tensor({2, 3}, DType::Int32)}) == TensorMeta{{}, DType::Int64});
  CHECK(infer("torch.amax", {tensor({2, 3})}, {{"dim", Arg::ofInt(0)}}).shape == Shape{3});
  CHECK(infer("paddle.logsumexp", {tensor({4, 5}), Arg::ofInt(1)}).shape == Shape{4});
  CHECK(normalizeAxes("sum", {-1, 0}, 3) == Shape{0, 2});
  CHECK(errorOf([] {
          infer("paddle.sum", {tensor({2, 3}), Arg::ofInt(2)});
        }) == "E2010 sum(): axis 2 is out of range for a 2-D tensor (expected -2 to 1)");
  CHECK(errorOf([] {
          infer("paddle.max", {tensor({2, 3}), Arg::list({Arg::ofInt(1), Arg::ofInt(-1)})});
        }) == "E2010 max(): axis -1 appears twice");
}

TEST_CASE("reshape with -1 and 0", "[inference]") {
  CHECK(reshapeShape("reshape", {4, 6}, {-1, 3}) == Shape{8, 3});
  CHECK(reshapeShape("reshape", {4, 6}, {0, 2, -1}, /*zeroCopies=*/true) == Shape{4, 2, 3});
  CHECK(reshapeShape("reshape", {0, 6}, {0, 2, 3}) == Shape{0, 2, 3}); // torch: 0 is a size
  CHECK(reshapeShape("reshape", {kDynamic, 6}, {-1, 3}) ==
        Shape{productDim(SizeProduct{2, {1}}), 3});
  CHECK(infer("Tensor.reshape", {tensor({2, 3, 4}), Arg::list({Arg::ofInt(4), Arg::ofInt(-1)})})
            .shape == Shape{4, 6});
  CHECK(errorOf([] {
          reshapeShape("reshape", {2, 3}, {4, 2});
        }) ==
        "E2008 reshape(): cannot reshape a tensor of shape [2, 3] (6 elements) into [4, 2] (8 "
        "elements)");
  CHECK(errorOf([] {
          reshapeShape("reshape", {2, 3}, {-1, 4});
        }) == "E2008 reshape(): cannot reshape a tensor of shape [2, 3] into [-1, 4]");
  CHECK(errorOf([] {
          reshapeShape("reshape", {2, 3}, {-1, -1});
        }) == "E2010 reshape(): only one dimension can be -1 in [-1, -1]");
}

TEST_CASE("matmul: transposes, vectors, batch broadcasting", "[inference]") {
  CHECK(matmulShape("matmul", {3, 4}, {4, 5}, false, false) == Shape{3, 5});
  CHECK(matmulShape("matmul", {4, 3}, {5, 4}, true, true) == Shape{3, 5});
  CHECK(matmulShape("matmul", {2, 1, 3, 4}, {5, 4, 6}, false, false) == Shape{2, 5, 3, 6});
  CHECK(matmulShape("matmul", {4}, {4, 5}, false, false) == Shape{5});
  CHECK(matmulShape("matmul", {3, 4}, {4}, false, false) == Shape{3});
  CHECK(matmulShape("matmul", {4}, {4}, false, false) == Shape{});
  CHECK(errorOf([] {
          matmulShape("matmul", {3, 4}, {5, 6}, false, false);
        }) == "E2008 matmul(): contraction dimensions differ: [3, 4] and [5, 6] (4 vs 5)");
  CHECK(infer("paddle.nn.functional.linear", {tensor({8, 16}), tensor({16, 32}), tensor({32})})
            .shape == Shape{8, 32});
  CHECK(infer("torch.nn.functional.linear", {tensor({8, 16}), tensor({32, 16})}).shape ==
        Shape{8, 32});
}

TEST_CASE("shape operators and indexing", "[inference]") {
  CHECK(infer("paddle.unsqueeze", {tensor({3, 4}), Arg::list({Arg::ofInt(0), Arg::ofInt(-1)})})
            .shape == Shape{1, 3, 4, 1});
  CHECK(infer("paddle.squeeze", {tensor({1, 3, 1})}, {{"axis", Arg::ofInt(0)}}).shape ==
        Shape{3, 1});
  CHECK(infer("paddle.flatten", {tensor({2, 3, 4, 5})},
              {{"start_axis", Arg::ofInt(1)}, {"stop_axis", Arg::ofInt(2)}})
            .shape == Shape{2, 12, 5});
  CHECK(infer("torch.transpose", {tensor({2, 3, 4}), Arg::ofInt(0), Arg::ofInt(2)}).shape ==
        Shape{4, 3, 2});
  CHECK(infer("paddle.split", {tensor({6, 4}), Arg::ofInt(3)}, {}, 2).shape == Shape{2, 4});
  CHECK(errorOf([] {
          infer("paddle.split", {tensor({7, 4}), Arg::ofInt(3)});
        }) == "E2008 split(): axis 0 of size 7 cannot be split into 3 equal sections");
  CHECK(errorOf([] {
          infer("paddle.transpose", {tensor({2, 3}), Arg::list({Arg::ofInt(0), Arg::ofInt(0)})});
        }) == "E2010 transpose(): [0, 0] is not a permutation");
  // testdata/programs/08_slice.py on float32[8, 16, 4]
  Arg x = tensor({8, 16, 4});
  auto sl = [](Arg a, Arg b, Arg c) { return Arg::slice(a, b, c); };
  CHECK(infer("__getitem__", {x, Arg::ofInt(0)}).shape == Shape{16, 4});
  CHECK(infer("__getitem__", {x, Arg::tuple({sl(Arg::ofInt(1), Arg::ofInt(5), Arg::none()),
                                             sl(Arg::none(), Arg::none(), Arg::ofInt(2))})})
            .shape == Shape{4, 8, 4});
  CHECK(infer("__getitem__", {x, Arg::tuple({Arg::ellipsis(), Arg::ofInt(0)})}).shape ==
        Shape{8, 16});
  CHECK(infer("__getitem__", {x, Arg::tuple({sl(Arg::none(), Arg::none(), Arg::none()), Arg::none(),
                                             Arg::ofInt(3)})})
            .shape == Shape{8, 1, 4});
  CHECK(errorOf([&] {
          infer("__getitem__", {x, Arg::ofInt(8)});
        }) == "E2010 __getitem__(): index 8 is out of bounds for axis 0 with size 8");
  CHECK(errorOf([] {
          infer("paddle.nn.functional.layer_norm", {tensor({4, 8}), Arg::ofInt(4)});
        }) ==
        "E2008 layer_norm(): normalized_shape [4] does not match the trailing dimensions of the "
        "input [4, 8]");
  CHECK(errorOf([] { infer("paddle.nn.functional.dropout", {tensor({4})}); }) ==
        "E2010 dropout(): training=True is not supported: sotc compiles inference (pass "
        "training=False)");
}

TEST_CASE("dynamic sizes keep their symbols through inference", "[inference]") {
  const int64_t B = kDynamic, T = dynamicDim(1);
  CHECK(isDynamicDim(T));
  CHECK(symbolOf(T) == 1);
  CHECK(!isDynamicDim(kBatchSize));
  CHECK(dimOfSymbolSize(symbolSize(1)) == T);
  CHECK(formatShape({B, T, 4}) == "[?, s1, 4]");
  CHECK(broadcastShapes("add", {B, T, 4}, {1, T, 1}) == Shape{B, T, 4});
  CHECK(broadcastShapes("add", {T, 1}, {1, 8}) == Shape{T, 8});
  // Two sizes that meet: SizesMeet names them (the frontend makes them one, guarded).
  auto meeting = [](const std::function<void()> &f) {
    try {
      f();
    } catch (const SizesMeet &e) {
      return std::to_string(e.first) + " " + std::to_string(e.second) + ": " + e.what();
    }
    return std::string("no SizesMeet");
  };
  CHECK(meeting([&] {
          broadcastShapes("add", {B, 4}, {T, 4});
        }) == "0 1: add(): shapes [?, 4] and [s1, 4] broadcast two dynamic sizes together");
  CHECK(meeting([&] {
          matmulShape("matmul", {3, B}, {T, 5}, false, false);
        }) == "0 1: matmul(): [3, ?] and [s1, 5] contract two dynamic sizes");
  CHECK(meeting([&] {
          infer("torch.cat", {Arg::list({tensor({B, 2}), tensor({T, 2})}), Arg::ofInt(1)});
        }).rfind("0 1: ", 0) == 0);
  // x.view(B, T, 2, 4) as the frontend passes it: B as -1, T as its own dim.
  CHECK(reshapeShape("reshape", {B, T, 8}, {-1, T, 2, 4}) == Shape{B, T, 2, 4});
  CHECK(reshapeShape("reshape", {T, 2, 4}, {T, -1}) == Shape{T, 8});
  // A -1 is what the other sizes leave, a product of the dynamic ones where they merge.
  SizeProduct bt;
  bt.powers[0] = bt.powers[1] = 1;
  const int64_t BT = productDim(bt), twoB = productDim(SizeProduct{2, {1}});
  CHECK(productOf(BT) == bt);
  CHECK(isDynamicDim(BT));
  CHECK(!isSymbolDim(BT));
  CHECK(productDim(SizeProduct{1, {1}}) == B); // s0 alone is s0's dim
  CHECK(productDim(SizeProduct{6, {}}) == 6);
  CHECK(reshapeShape("reshape", {B, 6}, {-1, 3}) == Shape{twoB, 3});
  CHECK(reshapeShape("reshape", {B, T, 8}, {-1, 8}) == Shape{BT, 8});
  CHECK(reshapeShape("reshape", {BT, 8}, {symbolSize(0), -1, 8}) == Shape{B, T, 8});
  CHECK(reshapeShape("reshape", {B, 8}, {sizeOfDim(twoB), -1}) == Shape{twoB, 4});
  CHECK(formatShape({BT, twoB, T, 4}) == "[s0*s1, 2*s0, s1, 4]");
  CHECK(dynamicSizes({BT, T, 4}) == std::vector<int>{0, 1, 1});
  CHECK(withSizes({-1, -1, 4}, dynamicDimSizes({BT, T, 4})) == Shape{BT, T, 4});
  CHECK(dynamicDimSizes({BT, T, 4}) == std::vector<SizeProduct>{{1, {1, 1}}, {1, {0, 1}}});
  CHECK(!parseProduct("s0*s0"));
  CHECK(!parseProduct("s0*2"));
  CHECK(parseProduct("16*s0*s1^2") == SizeProduct{16, {1, 2}});
  // A -1 that splits a size: SizeNotWhole says which size, a multiple of what, would do.
  auto notWhole = [](const std::function<void()> &f) {
    try {
      f();
    } catch (const SizeNotWhole &e) {
      return "s" + std::to_string(e.symbol) + " * " + std::to_string(e.factor) + ": " + e.what();
    }
    return std::string("no SizeNotWhole");
  };
  CHECK(notWhole([&] {
          reshapeShape("reshape", {B, 6}, {-1, 4});
        }) == "s0 * 2: reshape(): a -1 that splits a dynamic size ([?, 6] into [-1, 4]) needs "
              "s0 to be a multiple of 2");
  CHECK(notWhole([&] {
          reshapeShape("reshape", {B, T, 8}, {symbolSize(0), 3, -1});
        }) == "s1 * 3: reshape(): a -1 that splits a dynamic size ([?, s1, 8] into [s0, 3, -1]) "
              "needs s1 to be a multiple of 3");
  CHECK(errorOf([&] {
          reshapeShape("reshape", {B, 6}, {symbolSize(0), -1, 4});
        }) == "E2008 reshape(): cannot reshape a tensor of shape [?, 6] into [s0, -1, 4]");
  CHECK(errorOf([&] {
          reshapeShape("reshape", {B, T}, {symbolSize(0), symbolSize(0)});
        }) == "E2008 reshape(): cannot reshape a tensor of shape [?, s1] (s0*s1 elements) into "
              "[s0, s0] (s0^2 elements)");
  CHECK(errorOf([&] {
          broadcastShapes("add", {BT, 4}, {T, 4});
        }) == "E2008 add(): shapes [s0*s1, 4] and [s1, 4] broadcast two dynamic sizes together (a "
              "product of dynamic sizes against another size is not compiled yet)");
  CHECK(matmulShape("matmul", {B, 2, T, 4}, {B, 2, 4, T}, false, false) == Shape{B, 2, T, T});
  CHECK(matmulShape("matmul", {B, 2, T, T}, {B, 2, T, 4}, false, false) == Shape{B, 2, T, 4});
  CHECK(TensorMeta{{B, T}, DType::Float32}.numElements() == kDynamic);
  // arange(T) and a mean over T make dims of T.
  CHECK(infer("torch.arange", {Arg::ofInt(symbolSize(1))}).shape == Shape{T});
  CHECK(infer("torch.mean", {tensor({B, T, 4})}, {{"dim", Arg::ofInt(1)}}).shape == Shape{B, 4});
}

TEST_CASE("sizes derived by a number are sizes of their own", "[inference]") {
  const int64_t B = kDynamic, T = dynamicDim(1);
  DerivedSizes sizes;
  sizes.setInputSizes(2); // B and T: derived sizes are s2 on
  auto lower = [&](const std::string &name, std::vector<Arg> positional,
                   std::vector<std::pair<std::string, Arg>> keywords = {}) {
    return OpTable::get()
        .lower(name, {std::move(positional), std::move(keywords)}, &sizes)
        .outputs()[0]
        .shape;
  };
  auto slice = [](std::optional<int64_t> start, std::optional<int64_t> stop) {
    auto value = [](std::optional<int64_t> v) { return v ? Arg::ofInt(*v) : Arg::none(); };
    return Arg::tuple({Arg::slice(Arg::none(), Arg::none(), Arg::none()),
                       Arg::slice(value(start), value(stop), Arg::none())});
  };
  // x[:, 1:] and x[:, :-1] of T positions: T - 1, one size (s2); x[:, 2:-2] T - 4 (s4; its
  // end T - 2 is s3).
  const int64_t T1 = dynamicDim(2);
  CHECK(lower("__getitem__", {tensor({B, T, 4}), slice(1, std::nullopt)}) == Shape{B, T1, 4});
  CHECK(lower("__getitem__", {tensor({B, T, 4}), slice(std::nullopt, -1)}) == Shape{B, T1, 4});
  CHECK(lower("__getitem__", {tensor({B, T, 4}), slice(2, -2)}) == Shape{B, dynamicDim(4), 4});
  CHECK(sizes.of(4).text() == "s1-4");
  CHECK(sizes.of(3).definition() == "s3=s1-2");
  // Up to a size of T's: x[:, :T - 1] is T - 1, x[:, :T + 1] all of T, x[:, 1:T] T - 1.
  CHECK(lower("__getitem__", {tensor({B, T, 4}), slice(std::nullopt, sizeOfDim(T1))}) ==
        Shape{B, T1, 4});
  CHECK(lower("__getitem__", {tensor({B, T, 4}), slice(1, symbolSize(1))}) == Shape{B, T1, 4});
  // A pad of one along T is T + 1, and its shift back T itself.
  int64_t padded = lower("torch.nn.functional.pad",
                         {tensor({B, T}, DType::Int64), Arg::list({Arg::ofInt(0), Arg::ofInt(1)})})
                       .at(1);
  CHECK(sizes.of(symbolOf(padded)).text() == "s1+1");
  CHECK(lower("__getitem__", {tensor({B, padded}), slice(1, std::nullopt)}) == Shape{B, T});
  CHECK(sizes.offsetDim(T1, 1) == T);
  CHECK(sizes.offsetDim(6, -1) == 5);
  CHECK(sizes.difference(T1, T) == -1);
  CHECK(sizes.difference(T, B) == std::nullopt);
  CHECK(sizes.sizes().size() == 4);
  // Their text and back; products plus a number, and sizes past eight, are refused.
  CHECK(DerivedSizes::parse("s2=s1-1")->offset == -1);
  CHECK(DerivedSizes::parse("s7=s0+12")->base == 0);
  CHECK(!DerivedSizes::parse("s2=s2-1"));
  CHECK(!DerivedSizes::parse("s2=s1"));
  CHECK(!DerivedSizes::parse("s8=s1-1"));
  CHECK(!DerivedSizes::parse("s2=s1-"));
  SizeProduct bt;
  bt.powers[0] = bt.powers[1] = 1;
  CHECK(errorOf([&] { sizes.offsetDim(productDim(bt), -1); }) ==
        "E2010 a dimension of s0*s1 - 1 (a product of dynamic sizes plus a number) is not "
        "supported yet");
  for (int k = 6; k < kMaxSymbols; ++k) // s6 and s7
    sizes.offsetDim(T, -10 - k);
  CHECK(errorOf([&] { sizes.offsetDim(T, -20); }) ==
        "E2010 the dimension s1-20 would be more than the 8 dynamic sizes sotc compiles");
  // Without a table a call that derives a size is refused.
  CHECK(errorOf([&] {
          infer("__getitem__", {tensor({B, T, 4}), slice(1, std::nullopt)});
        }) ==
        "E2010 __getitem__(): a dimension of a dynamic size plus a number needs the program's "
        "derived sizes");
}

TEST_CASE("sizes a kernel counts are numbered after the others", "[inference]") {
  DerivedSizes sizes;
  sizes.setInputSizes(1);                          // B
  int64_t shorter = sizes.offsetDim(kDynamic, -1); // B - 1: s1
  int counted = sizes.produce();                   // nonzero's rows: s2, a base
  CHECK(symbolOf(shorter) == 1);
  CHECK(counted == 2);
  CHECK(sizes.produced(counted));
  CHECK(!sizes.produced(0));
  CHECK(!sizes.produced(1));
  CHECK(sizes.of(counted).base == counted);
  int64_t fewer = sizes.offsetDim(dynamicDim(counted), -1); // its rows but one: s3 = s2 - 1
  CHECK(symbolOf(fewer) == 3);
  CHECK(sizes.of(3).base == counted);
  CHECK(sizes.produced(3));
  CHECK(sizes.producedSizes() == std::vector<int>{2});
  for (int k = 4; k < kMaxSymbols; ++k)
    sizes.produce();
  CHECK(errorOf([&] { sizes.produce(); }) ==
        "E2010 a size computed from tensor values would be more than the 8 dynamic sizes sotc "
        "compiles");
}
