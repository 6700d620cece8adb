//===- Ptx.h - The PTX of a fatbin, decoded for the CUDA emulator ---------------------------===//
//
// The emulator runs the PTX a fatbin carries (docs/emulator.md says why PTX and not the NVVM
// IR). parsePtx decodes the text once, when the module loads, into flat instruction arrays
// whose operands are all register indices: immediates, symbols' addresses and the special
// registers (%tid.x, ...) become registers of their own that the launch fills, so executing
// an instruction never looks at text or at the kind of an operand.
//
// The subset is what LLVM's NVPTX back end emits for sotc's kernels (and libdevice's math):
// integer and floating-point arithmetic, conversions, predicates, loads and stores in every
// state space (vectors included), branches, bar.sync, shfl.sync, vote.sync. Anything else is
// refused when the module loads, naming the line, never executed wrongly.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_EMULATOR_PTX_H
#define SOTC_RUNTIME_EMULATOR_PTX_H

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sotc::runtime::emulator {

enum class Type : uint8_t {
  None, Pred, B8, B16, B32, B64, U8, U16, U32, U64, S8, S16, S32, S64, F16, BF16, F32, F64
};
/// The width of a type's values (predicates: 1); inline, as the interpreter asks per lane.
constexpr int bitsOf(Type t) {
  switch (t) {
  case Type::Pred:
    return 1;
  case Type::B8:
  case Type::U8:
  case Type::S8:
    return 8;
  case Type::B16:
  case Type::U16:
  case Type::S16:
  case Type::F16:
  case Type::BF16:
    return 16;
  case Type::B32:
  case Type::U32:
  case Type::S32:
  case Type::F32:
    return 32;
  case Type::B64:
  case Type::U64:
  case Type::S64:
  case Type::F64:
    return 64;
  case Type::None:
    break;
  }
  return 0;
}
constexpr bool isSigned(Type t) {
  return t == Type::S8 || t == Type::S16 || t == Type::S32 || t == Type::S64;
}
constexpr bool isFloat(Type t) {
  return t == Type::F16 || t == Type::BF16 || t == Type::F32 || t == Type::F64;
}

enum class Space : uint8_t { Generic, Global, Shared, Local, Param, Const };

enum class Op : uint8_t {
  Mov, Add, Sub, Mul, MulHi, MulWide, Mad, MadHi, MadWide, Fma, Div, Rem, Min, Max, Neg, Abs,
  Not, And, Or, Xor, Shl, Shr, Setp, Selp, Cvt, Cvta, Ld, St, Bra, BrxIdx, Bar, WarpSync, Shfl,
  Vote, Exit, Sqrt, Rsqrt, Rcp, Ex2, Lg2, Sin, Cos, Tanh, Copysign, Bfe, Bfi, ShfL, ShfR, Popc,
  Clz, Brev, Testp, AddCarry, SubCarry, MadCarry, Fence, Nop
};

/// Rounding of floating-point results (and of float-to-integer conversions: the "i" forms).
enum class Round : uint8_t { Default, Rn, Rz, Rm, Rp, Rni, Rzi, Rmi, Rpi };

/// setp's comparisons; the "u" forms are true when an operand is NaN.
enum class Compare : uint8_t {
  Eq, Ne, Lt, Le, Gt, Ge, Lo, Ls, Hi, Hs, Equ, Neu, Ltu, Leu, Gtu, Geu, Num, Nan
};

enum class ShflMode : uint8_t { Up, Down, Bfly, Idx };
enum class VoteMode : uint8_t { All, Any, Uni, Ballot };
enum class TestpMode : uint8_t { Finite, Infinite, Number, NotANumber, Normal, Subnormal };

struct Instr {
  Op op = Op::Nop;
  Type type = Type::None;    // the instruction's type; cvt: the destination's
  Type srcType = Type::None; // cvt: the source's
  Space space = Space::Generic;
  Round round = Round::Default;
  uint8_t mode = 0;     // Compare, ShflMode, VoteMode or TestpMode; carry ops: 1 = sets CC
  uint8_t boolOp = 0;   // setp's .and/.or/.xor (1, 2, 3) with a predicate source
  uint8_t vec = 1;      // ld/st: elements per access
  bool ftz = false, sat = false, nanPropagating = false, hi = false, wrapShift = false;
  bool negateGuard = false;
  bool packed = false;  // cvt to .f16x2/.bf16x2: two sources, packed into one 32-bit register
  int32_t guard = -1;   // the predicate register that guards it, or -1
  uint8_t numDst = 0, numSrc = 0;
  std::array<uint32_t, 4> dst{};
  std::array<uint32_t, 5> src{};
  int64_t offset = 0;   // ld/st: the address is src[0] + offset
  uint32_t target = 0;  // bra: the instruction it jumps to; brx.idx: its jump table
  uint32_t line = 0;    // its line in the PTX text
};

/// A register the launch fills: per block (the block's ids, a shared variable's address) or
/// per thread (thread ids, lane, a thread's local memory).
enum class Special : uint8_t {
  TidX, TidY, TidZ, NtidX, NtidY, NtidZ, CtaidX, CtaidY, CtaidZ, NctaidX, NctaidY, NctaidZ,
  LaneId, WarpId, LanemaskEq, LanemaskLt, LanemaskLe, LanemaskGt, LanemaskGe,
  SharedAddress, // the block's shared memory + offset
  LocalAddress,  // the thread's local memory + offset
  ParamAddress,  // the launch's parameter bytes + offset
  DynamicSharedAddress // the block's dynamic shared memory (after the static part)
};

struct SpecialRegister {
  uint32_t reg;
  Special kind;
  uint64_t offset = 0;
};

struct SharedVariable {
  std::string name;
  uint64_t offset = 0, bytes = 0;
};

struct Kernel {
  std::string name;
  std::vector<uint32_t> paramOffsets, paramSizes;
  uint64_t paramBytes = 0;
  std::vector<Instr> code;
  std::vector<std::string> text; // each instruction's source, for reports
  uint32_t registers = 0;        // rows of 32 lanes in a warp's register file
  uint32_t carryRegister = 0;    // the condition code of add.cc/addc and friends
  uint32_t sinkRegister = 0;     // where `_` writes go
  std::vector<std::pair<uint32_t, uint64_t>> constants; // immediates: register, value
  std::vector<std::pair<uint32_t, std::string>> globals; // module globals' addresses
  std::vector<SpecialRegister> specials;
  /// brx.idx's tables (.branchtargets): the instructions their entries jump to.
  std::vector<std::vector<uint32_t>> jumpTables;
  std::vector<SharedVariable> shared;
  uint64_t sharedBytes = 0, localBytes = 0;
  bool dynamicShared = false;
  std::array<uint32_t, 3> maxThreads{0, 0, 0}; // .maxntid / .reqntid, 0: none
};

struct GlobalVariable {
  std::string name;
  uint64_t bytes = 0, align = 1;
  std::vector<uint8_t> init; // empty: zeros
};

struct Module {
  std::string target; // "sm_90"
  std::map<std::string, Kernel> kernels;
  std::vector<GlobalVariable> globals;
};

/// Decodes PTX text; throws std::runtime_error("line N: why") for anything outside the subset.
Module parsePtx(const std::string &text);

} // namespace sotc::runtime::emulator

#endif // SOTC_RUNTIME_EMULATOR_PTX_H
