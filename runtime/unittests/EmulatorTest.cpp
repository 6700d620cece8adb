// The CUDA emulator on PTX written here: what it computes (thread ids, predicates, shuffles,
// shared memory, rounding), each fault it reports (out of bounds, a shared-memory race, a
// barrier not every thread reaches, a shuffle that reads a lane not taking part, members that
// never arrive), the emulated driver's failures as CUDA result codes, and the emulated
// cuBLASLt, driven by the CUDA backend's own planning (Matmuls), against CBLAS.
#include "runtime/src/Error.h"
#include "runtime/src/GemmPlan.h"
#include "runtime/src/cpu/GemmLibraries.h"
#include "runtime/src/cuda/CublasLt.h"
#include "runtime/src/emulator/EmulatedCuda.h"
#include "runtime/src/emulator/Half.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace sotc::runtime;
using cuda::CUdeviceptr;
using cuda::CUfunction;
using cuda::CUmodule;

const cuda::Driver &d() { return emulator::emulatedDriver(); }

const char *kHeader = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// out[i] = in[i] * 2 + 1 for i < n, one thread per element.
const char *kAffine = R"(
.visible .entry affine(.param .u64 out, .param .u64 in, .param .u32 n)
.maxntid 256, 1, 1
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra $L_done;
  mul.wide.u32 %rd3, %r5, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.nc.f32 %f1, [%rd4];
  fma.rn.f32 %f2, %f1, 0f40000000, 0f3F800000;
  add.s64 %rd5, %rd1, %rd3;
  st.global.f32 [%rd5], %f2;
$L_done:
  ret;
}
)";

/// out[t] = 10, 20 or 30 by t % 3 through a jump table (LLVM's lowering of a switch: each lane
/// of a warp to its own entry), 40 for a guarded-off lane (t of 31).
const char *kSwitch = R"(
.visible .entry switched(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  rem.u32 %r2, %r1, 3;
  mov.u32 %r3, 40;
  setp.eq.u32 %p1, %r1, 31;
$L_brx_0: .branchtargets
  $L_zero,
  $L_one,
  $L_two;
  @!%p1 brx.idx %r2, $L_brx_0;
  bra.uni $L_store;
$L_two:
  mov.u32 %r3, 30;
  bra.uni $L_store;
$L_one:
  mov.u32 %r3, 20;
  bra.uni $L_store;
$L_zero:
  mov.u32 %r3, 10;
$L_store:
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
)";

/// out[warp] = the sum of the warp's 32 inputs, by butterfly shuffles; lane 0 stores it.
const char *kWarpSum = R"(
.visible .entry warpsum(.param .u64 out, .param .u64 in)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .f32 %f<12>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  shfl.sync.bfly.b32 %f2, %f1, 16, 31, -1;
  add.f32 %f3, %f1, %f2;
  shfl.sync.bfly.b32 %f4, %f3, 8, 31, -1;
  add.f32 %f5, %f3, %f4;
  shfl.sync.bfly.b32 %f6, %f5, 4, 31, -1;
  add.f32 %f7, %f5, %f6;
  shfl.sync.bfly.b32 %f8, %f7, 2, 31, -1;
  add.f32 %f9, %f7, %f8;
  shfl.sync.bfly.b32 %f10, %f9, 1, 31, -1;
  add.f32 %f11, %f9, %f10;
  mov.u32 %r2, %laneid;
  setp.ne.u32 %p1, %r2, 0;
  @%p1 bra $L_done;
  shr.u32 %r3, %r1, 5;
  mul.wide.u32 %rd5, %r3, 4;
  add.s64 %rd6, %rd1, %rd5;
  st.global.f32 [%rd6], %f11;
$L_done:
  ret;
}
)";

/// out[t] = t + 1 (mod 64) read back from shared memory; BARRIER is replaced by bar.sync or
/// nothing.
const char *kNeighbours = R"(
.visible .entry neighbours(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .shared .align 4 .b8 tile[256];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd1, %r1, 4;
  mov.u64 %rd2, tile;
  add.s64 %rd3, %rd2, %rd1;
  st.shared.u32 [%rd3], %r1;
  BARRIER
  add.u32 %r2, %r1, 1;
  and.b32 %r3, %r2, 63;
  mul.wide.u32 %rd4, %r3, 4;
  add.s64 %rd5, %rd2, %rd4;
  ld.shared.u32 %r4, [%rd5];
  ld.param.u64 %rd6, [out];
  add.s64 %rd7, %rd6, %rd1;
  st.global.u32 [%rd7], %r4;
  ret;
}
)";

/// The first warp leaves before the barrier the second waits at.
const char *kEarlyExit = R"(
.visible .entry early()
{
  .reg .pred %p<2>;
  .reg .b32 %r<2>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  @%p1 bra $L_done;
  bar.sync 0;
$L_done:
  ret;
}
)";

/// Lanes 0..15 shuffle with lane ^ 16 after lanes 16..31 have exited.
const char *kHalfWarp = R"(
.visible .entry halfwarp(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, 16;
  @%p1 bra $L_done;
  shfl.sync.bfly.b32 %r2, %r1, OFFSET, 31, -1;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
$L_done:
  ret;
}
)";

/// Lanes 0..15 wait at a full-warp shuffle for lanes 16..31, which wait at a barrier.
const char *kShuffleVersusBarrier = R"(
.visible .entry crossed()
{
  .reg .pred %p<2>;
  .reg .b32 %r<4>;
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, 16;
  @%p1 bra $L_barrier;
  shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
  bra.uni $L_done;
$L_barrier:
  bar.sync 0;
$L_done:
  ret;
}
)";

/// Integer and float corners: out[0..7].
const char *kCorners = R"(
.visible .entry corners(.param .u64 out)
{
  .reg .pred %p<4>;
  .reg .b32 %r<16>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.b32 %f1, 0f3FC00000;
  cvt.rni.s32.f32 %r1, %f1;
  mov.b32 %f2, 0fBFC00000;
  cvt.rmi.s32.f32 %r2, %f2;
  mov.b32 %f3, 0f7FC00000;
  cvt.rzi.s32.f32 %r3, %f3;
  mov.b32 %f4, 0f4F800000;
  cvt.rzi.s32.f32 %r4, %f4;
  mov.b32 %r5, -8;
  shr.s32 %r6, %r5, 40;
  shr.u32 %r7, %r5, 28;
  bfe.s32 %r8, %r5, 2, 3;
  setp.ltu.f32 %p1, %f3, %f1;
  selp.b32 %r9, 7, 9, %p1;
  st.global.v4.b32 [%rd1], {%r1, %r2, %r3, %r4};
  st.global.v4.b32 [%rd1+16], {%r6, %r7, %r8, %r9};
  ret;
}
)";

/// What NVPTX emits to read a double's high word: a scope with its own register, unpacked into.
const char *kUnpack = R"(
.visible .entry unpack(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.b64 %rd2, 0x400921FB54442D18;
  { .reg .b32 tmp; mov.b64 {tmp, %r1}, %rd2; }
  { .reg .b32 tmp; mov.b64 {%r2, tmp}, %rd2; }
  mov.b64 %rd3, {%r1, %r2};
  st.global.v2.b32 [%rd1], {%r1, %r2};
  st.global.b64 [%rd1+8], %rd3;
  ret;
}
)";

// Packed conversions (NVPTX rounds two floats to halves at once): the first source in the
// upper half, the second in the lower; the destination may be a source.
const char *kPackedCvt = R"(
.visible .entry packed(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.f32 %f1, 0f3F800000;
  mov.f32 %f2, 0fC0000000;
  cvt.rn.f16x2.f32 %r1, %f1, %f2;
  cvt.rn.bf16x2.f32 %r2, %f1, %f2;
  mov.b32 %r3, %f2;
  cvt.rn.f16x2.f32 %r3, %f1, %r3;
  st.global.v2.b32 [%rd1], {%r1, %r2};
  st.global.b32 [%rd1+8], %r3;
  ret;
}
)";

std::string ptx(const std::string &body) { return kHeader + body; }

std::string replaced(std::string text, const std::string &what, const std::string &with) {
  return text.replace(text.find(what), what.size(), with);
}

/// A module loaded from PTX text, freed at the end of the test.
struct Module {
  CUmodule m = nullptr;
  explicit Module(const std::string &text) {
    REQUIRE(d().cuModuleLoadData(&m, text.c_str()) == 0);
  }
  ~Module() { d().cuModuleUnload(m); }
  CUfunction get(const char *name) const {
    CUfunction f = nullptr;
    REQUIRE(d().cuModuleGetFunction(&f, m, name) == 0);
    return f;
  }
};

/// Device memory, freed at the end of the test.
struct Buffer {
  CUdeviceptr p = 0;
  size_t bytes;
  explicit Buffer(size_t n) : bytes(n) { REQUIRE(d().cuMemAlloc(&p, n) == 0); }
  ~Buffer() { d().cuMemFree(p); }
  template <typename T> void put(const std::vector<T> &v) {
    REQUIRE(d().cuMemcpyHtoDAsync(p, v.data(), v.size() * sizeof(T), nullptr) == 0);
  }
  template <typename T> std::vector<T> get() const {
    std::vector<T> v(bytes / sizeof(T));
    REQUIRE(d().cuMemcpyDtoHAsync(v.data(), p, bytes, nullptr) == 0);
    return v;
  }
};

int launch(CUfunction f, unsigned grid, unsigned block, std::vector<void *> params) {
  return d().cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, nullptr, params.data(), nullptr);
}

/// The E8007 report of a launch that faults.
std::string faultOf(CUfunction f, unsigned grid, unsigned block, std::vector<void *> params) {
  try {
    launch(f, grid, block, std::move(params));
  } catch (const Error &e) {
    CHECK(e.code() == "E8007");
    return e.what();
  }
  FAIL("the launch did not fault");
  return "";
}

std::string errorName(int r) { return cuda::errorName(d(), r); }

} // namespace

TEST_CASE("the emulator runs a kernel over a grid, with masked tails", "[emulator]") {
  Module m(ptx(kAffine));
  const unsigned n = 1000;
  std::vector<float> x(n);
  for (unsigned i = 0; i < n; ++i)
    x[i] = static_cast<float>(i) * 0.25f - 7;
  Buffer in(n * 4), out(n * 4);
  in.put(x);
  CUdeviceptr o = out.p, i = in.p;
  unsigned count = n;
  REQUIRE(launch(m.get("affine"), 4, 256, {&o, &i, &count}) == 0);
  std::vector<float> y = out.get<float>();
  for (unsigned k = 0; k < n; ++k)
    CHECK(y[k] == x[k] * 2 + 1);
}

TEST_CASE("brx.idx sends each lane to its own entry of a jump table", "[emulator]") {
  Module m(ptx(kSwitch));
  Buffer out(64 * 4);
  CUdeviceptr o = out.p;
  REQUIRE(launch(m.get("switched"), 1, 64, {&o}) == 0);
  std::vector<uint32_t> y = out.get<uint32_t>();
  for (uint32_t t = 0; t < 64; ++t)
    CHECK(y[t] == (t == 31 ? 40u : 10u * (t % 3 + 1)));
}

TEST_CASE("butterfly shuffles sum a warp; the sums match every warp of several blocks",
          "[emulator]") {
  Module m(ptx(kWarpSum));
  std::vector<float> x(128);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i % 7) - 3;
  Buffer in(128 * 4), out(4 * 4);
  in.put(x);
  CUdeviceptr o = out.p, i = in.p;
  REQUIRE(launch(m.get("warpsum"), 1, 128, {&o, &i}) == 0);
  std::vector<float> y = out.get<float>();
  for (int w = 0; w < 4; ++w) {
    float want = 0;
    for (int l = 0; l < 32; ++l)
      want += x[w * 32 + l];
    CHECK(y[w] == want);
  }
}

TEST_CASE("conversions saturate and round as PTX says; shifts clamp; bfe sign-extends",
          "[emulator]") {
  Module m(ptx(kCorners));
  Buffer out(8 * 4);
  CUdeviceptr o = out.p;
  REQUIRE(launch(m.get("corners"), 1, 1, {&o}) == 0);
  std::vector<int32_t> y = out.get<int32_t>();
  CHECK(y[0] == 2);          // cvt.rni 1.5: to even
  CHECK(y[1] == -2);         // cvt.rmi -1.5: down
  CHECK(y[2] == 0);          // NaN: 0
  CHECK(y[3] == 2147483647); // 2^32: saturated
  CHECK(y[4] == -1);         // shr.s32 by 40: the sign
  CHECK(y[5] == 15);         // shr.u32 -8 by 28
  CHECK(y[6] == -2);         // bits 2..4 of -8 (0b110), sign-extended
  CHECK(y[7] == 7);          // setp.ltu with a NaN: true
}

TEST_CASE("a vector mov unpacks a register into scoped registers and packs, low part first",
          "[emulator]") {
  Module m(ptx(kUnpack));
  Buffer out(4 * 4);
  CUdeviceptr o = out.p;
  REQUIRE(launch(m.get("unpack"), 1, 1, {&o}) == 0);
  std::vector<uint32_t> y = out.get<uint32_t>();
  CHECK(y[0] == 0x400921FBu); // pi's high word
  CHECK(y[1] == 0x54442D18u); // and its low word
  CHECK(y[2] == 0x400921FBu); // packed back with the words swapped: the high word low
  CHECK(y[3] == 0x54442D18u);
}

TEST_CASE("packed conversions to f16x2 and bf16x2 put the first source high", "[emulator]") {
  Module m(ptx(kPackedCvt));
  Buffer out(3 * 4);
  CUdeviceptr o = out.p;
  REQUIRE(launch(m.get("packed"), 1, 1, {&o}) == 0);
  std::vector<uint32_t> y = out.get<uint32_t>();
  CHECK(y[0] == 0x3c00c000u); // 1.0 and -2.0 in half
  CHECK(y[1] == 0x3f80c000u); // in bfloat16
  CHECK(y[2] == 0x3c00c000u); // the destination was the second source
}

TEST_CASE("half and bfloat16 round to nearest even, overflow to infinity, keep subnormals",
          "[emulator]") {
  using namespace sotc::runtime::emulator;
  CHECK(floatToHalf(1.0f) == 0x3c00);
  CHECK(floatToHalf(-2.0f) == 0xc000);
  CHECK(floatToHalf(65504.0f) == 0x7bff);
  CHECK(floatToHalf(65519.0f) == 0x7bff);
  CHECK(floatToHalf(65520.0f) == 0x7c00);
  CHECK(floatToHalf(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(floatToHalf(std::ldexp(1.0f, -26)) == 0x0000);
  CHECK(floatToHalf(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);     // a tie: to even
  CHECK(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02); // a tie: to even, up
  CHECK((floatToHalf(NAN) & 0x7c00) == 0x7c00);
  for (uint32_t h = 0; h < 0x7c00; ++h) // every finite half survives the round trip
    REQUIRE(floatToHalf(halfToFloat(static_cast<uint16_t>(h))) == h);
  CHECK(floatToBfloat(1.0f) == 0x3f80);
  CHECK(floatToBfloat(1.0f + std::ldexp(1.0f, -8)) == 0x3f80); // a tie: to even
  CHECK(floatToBfloat(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);
  CHECK(bfloatToFloat(0xc040) == -3.0f);
}

TEST_CASE("an access outside every buffer names kernel, block, thread and address",
          "[emulator]") {
  Module m(ptx(kAffine));
  Buffer in(100 * 4), out(200 * 4);
  CUdeviceptr o = out.p, i = in.p;
  unsigned count = 200; // the input holds 100
  std::string report = faultOf(m.get("affine"), 1, 256, {&o, &i, &count});
  INFO(report);
  CHECK(report.find("affine: block (0,0,0) thread (100,0,0): out-of-bounds global load of 4 "
                    "bytes at 0x") != std::string::npos);
  CHECK(report.find("just past the end of the 400-byte allocation") != std::string::npos);
  CHECK(report.find("ld.global.nc.f32 %f1, [%rd4]") != std::string::npos);
}

TEST_CASE("threads reading shared memory others wrote since the last barrier: a race",
          "[emulator]") {
  Buffer out(64 * 4);
  CUdeviceptr o = out.p;
  SECTION("with the barrier, every thread reads its neighbour's value") {
    Module m(ptx(replaced(kNeighbours, "BARRIER", "bar.sync 0;")));
    REQUIRE(launch(m.get("neighbours"), 2, 64, {&o}) == 0);
    std::vector<uint32_t> y = out.get<uint32_t>();
    for (uint32_t t = 0; t < 64; ++t)
      CHECK(y[t] == (t + 1) % 64);
  }
  SECTION("without it, the emulator reports the race") {
    Module m(ptx(replaced(kNeighbours, "BARRIER", "")));
    std::string report = faultOf(m.get("neighbours"), 2, 64, {&o});
    INFO(report);
    CHECK(report.find("neighbours: block (0,0,0) thread (0,0,0): shared-memory race on byte 4 "
                      "(tile+4): it reads what thread (1,0,0) wrote since the last barrier") !=
          std::string::npos);
  }
}

TEST_CASE("a barrier that threads which exited never reach", "[emulator]") {
  Module m(ptx(kEarlyExit));
  std::string report = faultOf(m.get("early"), 1, 64, {});
  INFO(report);
  CHECK(report.find("early: block (0,0,0): a barrier not every thread of the block reaches: "
                    "threads (32,0,0)..(63,0,0) wait at it while threads (0,0,0)..(31,0,0) "
                    "exited") != std::string::npos);
}

TEST_CASE("shuffles: an exited source lane, members that never arrive", "[emulator]") {
  Buffer out(32 * 4);
  CUdeviceptr o = out.p;
  SECTION("reading lane ^ 16 after it exited") {
    Module m(ptx(replaced(kHalfWarp, "OFFSET", "16")));
    std::string report = faultOf(m.get("halfwarp"), 1, 32, {&o});
    INFO(report);
    CHECK(report.find("thread (0,0,0): the shuffle reads lane 16, which does not take part in "
                      "it") != std::string::npos);
  }
  SECTION("among the lanes still there it runs (exited members are not waited for)") {
    Module m(ptx(replaced(kHalfWarp, "OFFSET", "1")));
    REQUIRE(launch(m.get("halfwarp"), 1, 32, {&o}) == 0);
    std::vector<uint32_t> y = out.get<uint32_t>();
    for (uint32_t t = 0; t < 16; ++t)
      CHECK(y[t] == (t ^ 1));
  }
  SECTION("members waiting at a barrier instead") {
    Module m(ptx(kShuffleVersusBarrier));
    std::string report = faultOf(m.get("crossed"), 1, 32, {});
    INFO(report);
    CHECK(report.find("threads (0,0,0)..(15,0,0) wait at a warp-synchronous instruction for "
                      "members of its mask that never reach it") != std::string::npos);
  }
}

TEST_CASE("the emulated driver fails as the driver does, with what it knows", "[emulator]") {
  SECTION("PTX outside the subset: CUDA_ERROR_INVALID_PTX naming the line") {
    CUmodule m = nullptr;
    std::string text = ptx(replaced(kAffine, "fma.rn.f32 %f2, %f1, 0f40000000, 0f3F800000;",
                                    "atom.global.add.f32 %f2, [%rd4], %f1;"));
    int r = d().cuModuleLoadData(&m, text.c_str());
    CHECK(r == 218);
    CHECK(errorName(r) == "CUDA_ERROR_INVALID_PTX (PTX line 24: unsupported instruction "
                         "atom.global.add.f32)");
  }
  SECTION("a kernel the module lacks") {
    Module m(ptx(kAffine));
    CUfunction f = nullptr;
    int r = d().cuModuleGetFunction(&f, m.m, "softmax");
    CHECK(r == 500);
    CHECK(errorName(r) == "CUDA_ERROR_NOT_FOUND (the module has no kernel softmax)");
  }
  SECTION("a block larger than the kernel's .maxntid") {
    Module m(ptx(kAffine));
    Buffer buffer(4);
    CUdeviceptr p = buffer.p;
    unsigned count = 1;
    int r = launch(m.get("affine"), 1, 512, {&p, &p, &count});
    CHECK(r == 701);
    CHECK(errorName(r).find("a block of 512 threads (at most 256)") != std::string::npos);
  }
  SECTION("dynamic shared memory beyond 48 KiB only as far as the kernel opted in") {
    Module m(ptx(kAffine));
    CUfunction f = m.get("affine");
    Buffer buffer(4);
    CUdeviceptr p = buffer.p;
    unsigned count = 1;
    std::vector<void *> params = {&p, &p, &count};
    auto launchWith = [&](unsigned dynamicBytes) {
      return d().cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, dynamicBytes, nullptr, params.data(),
                                nullptr);
    };
    int optin = 0;
    REQUIRE(d().cuDeviceGetAttribute(&optin, cuda::kMaxSharedBytesPerBlockOptin, 0) == 0);
    CHECK(optin == 227 * 1024);
    CHECK(launchWith(48 * 1024) == 0);
    int r = launchWith(64 * 1024);
    CHECK(r == 1);
    CHECK(errorName(r) == "CUDA_ERROR_INVALID_VALUE (affine needs 65536 shared bytes per block "
                          "(at most 49152, or 0 as it opted in))");
    CHECK(d().cuFuncSetAttribute(f, cuda::kFuncMaxDynamicSharedBytes, optin + 1) == 1);
    REQUIRE(d().cuFuncSetAttribute(f, cuda::kFuncMaxDynamicSharedBytes, 100000) == 0);
    CHECK(launchWith(64 * 1024) == 0);
    CHECK(launchWith(100001) == 1);
  }
  SECTION("more memory than SOTC_EMULATOR_MEMORY gives") {
    setenv("SOTC_EMULATOR_MEMORY", "4096", 1);
    CUdeviceptr p = 0;
    int r = d().cuMemAlloc(&p, 1 << 20);
    unsetenv("SOTC_EMULATOR_MEMORY");
    CHECK(r == 2);
    CHECK(errorName(r).find("CUDA_ERROR_OUT_OF_MEMORY") == 0);
  }
  SECTION("a copy past an allocation's end, a free of no allocation") {
    Buffer buffer(64);
    std::vector<char> host(128);
    int r = d().cuMemcpyHtoDAsync(buffer.p, host.data(), 128, nullptr);
    CHECK(r == 1);
    CHECK(errorName(r) == "CUDA_ERROR_INVALID_VALUE (a copy to the device of 128 bytes: 64 bytes "
                         "past the end of the 64-byte allocation)");
    CHECK(d().cuMemFree(buffer.p + 8) == 1);
  }
}

namespace {

/// C = act(op(A) op(B) + bias) for `plan` on the emulated device through the CUDA backend's
/// Matmuls, and the same through CBLAS on the host (bias and activation applied after).
void compareWithCblas(const GemmPlan &plan) {
  cpu::Cblas cblas = cpu::openCblas(cpu::cblasCandidates());
  REQUIRE(cblas.sgemm);
  REQUIRE(validate(plan).empty());
  int64_t count = plan.batchCount();
  auto span = [&](int64_t rows, int64_t ld, const std::vector<int64_t> &stride) {
    int64_t last = 0;
    for (size_t i = 0; i < plan.batch.size(); ++i)
      last += (plan.batch[i] - 1) * stride[i];
    return last + rows * ld;
  };
  size_t sizeA = static_cast<size_t>(span(plan.transposeA ? plan.k : plan.m, plan.lda, plan.strideA));
  size_t sizeB = static_cast<size_t>(span(plan.transposeB ? plan.n : plan.k, plan.ldb, plan.strideB));
  size_t sizeC = static_cast<size_t>(span(plan.m, plan.ldc, plan.strideC));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(sizeA), b(sizeB), bias(static_cast<size_t>(plan.n));
  for (float &x : a)
    x = u(rng);
  for (float &x : b)
    x = u(rng);
  for (float &x : bias)
    x = u(rng);
  std::vector<float> want(sizeC, 0.0f), magnitude(sizeC, 0.0f);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offA, offB, offC;
    plan.offsets(i, offA, offB, offC);
    cblas.sgemm(CblasRowMajor, plan.transposeA ? CblasTrans : CblasNoTrans,
                plan.transposeB ? CblasTrans : CblasNoTrans, static_cast<int>(plan.m),
                static_cast<int>(plan.n), static_cast<int>(plan.k), static_cast<float>(plan.alpha),
                a.data() + offA, static_cast<int>(plan.lda), b.data() + offB,
                static_cast<int>(plan.ldb), 0.0f, want.data() + offC, static_cast<int>(plan.ldc));
    for (int64_t r = 0; r < plan.m; ++r)
      for (int64_t c = 0; c < plan.n; ++c) {
        float &v = want[static_cast<size_t>(offC + r * plan.ldc + c)];
        if (plan.bias)
          v += bias[static_cast<size_t>(c)];
        if (plan.activation == GemmPlan::Activation::Relu)
          v = std::max(v, 0.0f);
        if (plan.activation == GemmPlan::Activation::GeluTanh)
          v = 0.5f * v * (1 + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
        magnitude[static_cast<size_t>(offC + r * plan.ldc + c)] = static_cast<float>(plan.k);
      }
  }
  Buffer da(sizeA * 4), db(sizeB * 4), dc(sizeC * 4), dbias(bias.size() * 4);
  da.put(a);
  db.put(b);
  dc.put(std::vector<float>(sizeC, 0.0f));
  dbias.put(bias);
  {
    cuda::Matmuls matmuls({&plan}, d(), emulator::emulatedCublasLt());
    matmuls.run(0, dc.p, da.p, db.p, plan.bias ? dbias.p : 0, nullptr);
  }
  std::vector<float> got = dc.get<float>();
  for (int64_t i = 0; i < count; ++i) {
    int64_t offA, offB, offC;
    plan.offsets(i, offA, offB, offC);
    for (int64_t r = 0; r < plan.m; ++r)
      for (int64_t c = 0; c < plan.n; ++c) {
        size_t at = static_cast<size_t>(offC + r * plan.ldc + c);
        INFO("product " << i << " element (" << r << ", " << c << ")");
        // float32 dot products of k terms of magnitude < 1, summed in two orders
        CHECK(std::fabs(got[at] - want[at]) <= 1e-6f * magnitude[at] + 1e-6f);
      }
  }
}

GemmPlan plan(int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  GemmPlan p;
  p.m = m, p.n = n, p.k = k;
  p.transposeA = ta, p.transposeB = tb;
  p.lda = ta ? m : k;
  p.ldb = tb ? k : n;
  p.ldc = n;
  return p;
}

} // namespace

TEST_CASE("the emulated cuBLASLt under the CUDA backend's plans matches CBLAS",
          "[emulator][gemm]") {
  SECTION("plain") { compareWithCblas(plan(33, 17, 65, false, false)); }
  SECTION("transposed A") { compareWithCblas(plan(8, 40, 24, true, false)); }
  SECTION("transposed B") { compareWithCblas(plan(12, 9, 31, false, true)); }
  SECTION("both transposed, padded leading dimensions") {
    GemmPlan p = plan(10, 6, 14, true, true);
    p.lda += 3, p.ldb += 1, p.ldc += 5;
    compareWithCblas(p);
  }
  SECTION("a bias and ReLU, alpha") {
    GemmPlan p = plan(16, 24, 32, false, false);
    p.bias = true, p.activation = GemmPlan::Activation::Relu, p.alpha = 0.5;
    compareWithCblas(p);
  }
  SECTION("a bias and GELU") {
    GemmPlan p = plan(9, 20, 11, false, true);
    p.bias = true, p.activation = GemmPlan::Activation::GeluTanh;
    compareWithCblas(p);
  }
  SECTION("a strided batch (one cuBLASLt call)") {
    GemmPlan p = plan(7, 5, 6, false, false);
    p.batch = {3}, p.strideA = {7 * 6}, p.strideB = {6 * 5}, p.strideC = {7 * 5};
    compareWithCblas(p);
  }
  SECTION("a broadcast batch over two dimensions (one call per product)") {
    GemmPlan p = plan(4, 3, 5, false, false);
    p.batch = {2, 3}, p.strideA = {3 * 4 * 5, 4 * 5}, p.strideB = {0, 5 * 3},
    p.strideC = {3 * 4 * 3, 4 * 3};
    compareWithCblas(p);
  }
}

TEST_CASE("an erf-GELU epilogue is refused by the CUDA backend (cuBLASLt has none)",
          "[emulator][gemm]") {
  GemmPlan p = plan(8, 16, 32, false, true);
  p.bias = true, p.activation = GemmPlan::Activation::GeluErf;
  try {
    cuda::Matmuls matmuls({&p}, d(), emulator::emulatedCublasLt());
    FAIL("the plan was accepted");
  } catch (const Error &e) {
    CHECK(e.code() == "E8002");
    CHECK(std::string(e.what()).find("erf-GELU") != std::string::npos);
  }
}
