#include "runtime/src/emulator/Interpreter.h"
#include "runtime/src/emulator/Half.h"

#include <algorithm>
#include <atomic>
#include <cfenv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

namespace sotc::runtime::emulator {
namespace {

constexpr uint32_t kFullWarp = 0xffffffffu;
/// Warp instructions one block may run before the launch is stopped as a hang.
constexpr uint64_t kStepLimit = uint64_t(1) << 30;

/// Calls f(lane) for every lane in `mask`.
template <class F> inline void forLanes(uint32_t mask, F &&f) {
  if (mask == kFullWarp) {
    for (int l = 0; l < 32; ++l)
      f(l);
    return;
  }
  while (mask) {
    int l = __builtin_ctz(mask);
    mask &= mask - 1;
    f(l);
  }
}

inline uint64_t lowMask(int bits) { return bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1; }
inline uint64_t truncate(uint64_t v, int bits) { return v & lowMask(bits); }
inline int64_t signExtend(uint64_t v, int bits) {
  return bits >= 64 ? static_cast<int64_t>(v)
                    : static_cast<int64_t>(v << (64 - bits)) >> (64 - bits);
}
/// A register's value as a type of `bits` reads it: sign- or zero-extended from its width.
inline uint64_t widen(uint64_t v, int bits, bool isSignedType) {
  return isSignedType ? static_cast<uint64_t>(signExtend(v, bits)) : truncate(v, bits);
}
inline uint64_t widen(uint64_t v, Type t) { return widen(v, bitsOf(t), isSigned(t)); }

inline float asFloat(uint64_t v) { return bitsToFloat(static_cast<uint32_t>(v)); }

inline float toFloat(uint64_t v, Type t) {
  if (t == Type::F16)
    return halfToFloat(static_cast<uint16_t>(v));
  if (t == Type::BF16)
    return bfloatToFloat(static_cast<uint16_t>(v));
  return asFloat(v);
}
inline uint64_t fromFloat(float f, Type t) {
  if (t == Type::F16)
    return floatToHalf(f);
  if (t == Type::BF16)
    return floatToBfloat(f);
  return floatToBits(f);
}

template <class T> T flushSubnormal(T x) {
  return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(T(0), x) : x;
}
template <class T> T saturate(T x) {
  return std::isnan(x) ? T(0) : x < T(0) ? T(0) : x > T(1) ? T(1) : x;
}

/// The rounding a PTX rounding modifier asks of the host's floating-point unit.
struct RoundingScope {
  int saved = FE_TONEAREST;
  bool changed = false;
  explicit RoundingScope(Round r) {
    int mode = r == Round::Rz || r == Round::Rzi   ? FE_TOWARDZERO
               : r == Round::Rm || r == Round::Rmi ? FE_DOWNWARD
               : r == Round::Rp || r == Round::Rpi ? FE_UPWARD
                                                   : FE_TONEAREST;
    if (mode != FE_TONEAREST) {
      saved = std::fegetround();
      std::fesetround(mode);
      changed = true;
    }
  }
  ~RoundingScope() {
    if (changed)
      std::fesetround(saved);
  }
};

template <class T> T roundIntegral(T x, Round r) {
  switch (r) {
  case Round::Rni:
    return std::nearbyint(x);
  case Round::Rzi:
    return std::trunc(x);
  case Round::Rmi:
    return std::floor(x);
  case Round::Rpi:
    return std::ceil(x);
  default:
    return x;
  }
}

bool compareFloat(Compare c, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (c) {
  case Compare::Eq:
    return !unordered && a == b;
  case Compare::Ne:
    return !unordered && a != b;
  case Compare::Lt:
    return !unordered && a < b;
  case Compare::Le:
    return !unordered && a <= b;
  case Compare::Gt:
    return !unordered && a > b;
  case Compare::Ge:
    return !unordered && a >= b;
  case Compare::Equ:
    return unordered || a == b;
  case Compare::Neu:
    return unordered || a != b;
  case Compare::Ltu:
    return unordered || a < b;
  case Compare::Leu:
    return unordered || a <= b;
  case Compare::Gtu:
    return unordered || a > b;
  case Compare::Geu:
    return unordered || a >= b;
  case Compare::Num:
    return !unordered;
  case Compare::Nan:
    return unordered;
  default:
    return false;
  }
}

bool compareInt(Compare c, uint64_t a, uint64_t b, bool isSignedType) {
  int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
  switch (c) {
  case Compare::Eq:
    return a == b;
  case Compare::Ne:
    return a != b;
  case Compare::Lt:
    return isSignedType ? sa < sb : a < b;
  case Compare::Le:
    return isSignedType ? sa <= sb : a <= b;
  case Compare::Gt:
    return isSignedType ? sa > sb : a > b;
  case Compare::Ge:
    return isSignedType ? sa >= sb : a >= b;
  case Compare::Lo:
    return a < b;
  case Compare::Ls:
    return a <= b;
  case Compare::Hi:
    return a > b;
  case Compare::Hs:
    return a >= b;
  default:
    return false;
  }
}

/// PTX min/max: a NaN operand gives the other one (or NaN with .NaN); -0 is below +0.
template <class T> T minMax(T a, T b, bool max, bool nanPropagating) {
  if (std::isnan(a) || std::isnan(b)) {
    if (nanPropagating || (std::isnan(a) && std::isnan(b)))
      return std::numeric_limits<T>::quiet_NaN();
    return std::isnan(a) ? b : a;
  }
  if (a == b)
    return (std::signbit(a) != max) ? a : b;
  return (a < b) != max ? a : b;
}

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

std::string triple(const std::array<uint32_t, 3> &v) {
  return "(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) +
         ")";
}

/// What the checker remembers of one shared-memory byte since the block's last barrier.
struct Shadow {
  uint32_t writeTag = 0, readTag = 0;
  uint32_t writeSync = 0, readSync = 0;
  uint32_t writePc = 0, readPc = 0;
  uint16_t writer = 0, reader = 0;
  int16_t readWarp = 0; // the readers' warp, -1 when several warps read
  bool manyReaders = false;
};

struct Warp {
  uint64_t *regs = nullptr;
  uint32_t exists = 0;    // lanes that are threads of the block
  uint32_t live = 0;      // lanes that have not exited
  uint32_t atBarrier = 0; // lanes waiting at bar.sync
  uint32_t parked = 0;    // lanes waiting at a shfl/vote/bar.warp for the rest of its members
  uint32_t serial = 0;    // warp-synchronous instructions executed so far
  std::array<uint32_t, 32> pc{};
  std::array<uint32_t, 32> lastSync{};
};

struct AlignedBuffer {
  uint8_t *data = nullptr;
  explicit AlignedBuffer(size_t bytes)
      : data(static_cast<uint8_t *>(std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256))) {
    if (!data)
      throw Fault("the emulator cannot allocate " + std::to_string(bytes) + " bytes");
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
};

/// Runs the blocks of one launch given to it, with its own warps, shared and local memory.
class BlockRunner {
public:
  BlockRunner(const Kernel &k, const LaunchConfig &c, const std::vector<Region> &regions,
              const uint8_t *params)
      : k_(k), c_(c), regions_(regions),
        threads_(c.block[0] * c.block[1] * c.block[2]), warpCount_((threads_ + 31) / 32),
        dynamicOffset_((k.sharedBytes + 15) / 16 * 16),
        sharedTotal_(dynamicOffset_ + c.dynamicSharedBytes),
        localStride_((k.localBytes + 15) / 16 * 16), params_(params),
        files_(static_cast<size_t>(warpCount_) * k.registers * 32), shared_(sharedTotal_),
        local_(localStride_ * threads_), shadow_(sharedTotal_), warps_(warpCount_) {
    sharedBase_ = reinterpret_cast<uint64_t>(shared_.data);
    localBase_ = reinterpret_cast<uint64_t>(local_.data);
    for (const SpecialRegister &s : k.specials)
      if (s.kind == Special::CtaidX || s.kind == Special::CtaidY || s.kind == Special::CtaidZ)
        blockSpecials_.push_back(&s);
    for (uint32_t w = 0; w < warpCount_; ++w) {
      Warp &warp = warps_[w];
      warp.regs = files_.data() + static_cast<size_t>(w) * k.registers * 32;
      uint32_t count = std::min<uint32_t>(32, threads_ - w * 32);
      warp.exists = count == 32 ? kFullWarp : (uint32_t(1) << count) - 1;
      for (const auto &[reg, value] : k.constants)
        std::fill_n(row(warp, reg), 32, value);
      for (const SpecialRegister &s : k.specials)
        for (int l = 0; l < 32; ++l)
          row(warp, s.reg)[l] = special(s, w, l);
    }
  }

  void run(uint32_t linear) {
    ctaid_ = {linear % c_.grid[0], (linear / c_.grid[0]) % c_.grid[1],
              linear / (c_.grid[0] * c_.grid[1])};
    for (Warp &w : warps_) {
      for (const SpecialRegister *s : blockSpecials_)
        std::fill_n(row(w, s->reg), 32,
                    ctaid_[static_cast<int>(s->kind) - static_cast<int>(Special::CtaidX)]);
      w.live = w.exists;
      w.atBarrier = w.parked = 0;
      w.serial = 0;
      w.pc.fill(0);
      w.lastSync.fill(0);
    }
    // CUDA leaves shared memory undefined: NaN bytes make a read before any write visible.
    std::memset(shared_.data, 0xff, sharedTotal_);
    tag_ = ++epoch_;
    steps_ = 0;
    for (;;) {
      for (uint32_t w = 0; w < warpCount_; ++w)
        runWarp(warps_[w], w);
      // Every lane has exited or waits: at a barrier, or for the members of a shuffle.
      bool done = true, parked = false, exited = false;
      for (const Warp &w : warps_) {
        done = done && !w.live;
        parked = parked || w.parked;
        exited = exited || w.live != w.exists;
      }
      if (done)
        return;
      if (parked)
        reportParked();
      if (exited)
        reportBarrier();
      for (Warp &w : warps_)
        w.atBarrier = 0;
      tag_ = ++epoch_;
    }
  }

private:
  uint64_t *row(Warp &w, uint32_t reg) { return w.regs + static_cast<size_t>(reg) * 32; }

  std::array<uint32_t, 3> threadIndex(uint32_t t) const {
    return {t % c_.block[0], (t / c_.block[0]) % c_.block[1], t / (c_.block[0] * c_.block[1])};
  }

  uint64_t special(const SpecialRegister &s, uint32_t w, int l) const {
    uint32_t t = w * 32 + static_cast<uint32_t>(l);
    std::array<uint32_t, 3> tid = threadIndex(t);
    uint32_t lane = static_cast<uint32_t>(l);
    switch (s.kind) {
    case Special::TidX:
    case Special::TidY:
    case Special::TidZ:
      return tid[static_cast<int>(s.kind) - static_cast<int>(Special::TidX)];
    case Special::NtidX:
    case Special::NtidY:
    case Special::NtidZ:
      return c_.block[static_cast<int>(s.kind) - static_cast<int>(Special::NtidX)];
    case Special::NctaidX:
    case Special::NctaidY:
    case Special::NctaidZ:
      return c_.grid[static_cast<int>(s.kind) - static_cast<int>(Special::NctaidX)];
    case Special::CtaidX:
    case Special::CtaidY:
    case Special::CtaidZ:
      return 0; // per block
    case Special::LaneId:
      return lane;
    case Special::WarpId:
      return w;
    case Special::LanemaskEq:
      return uint64_t(1) << lane;
    case Special::LanemaskLt:
      return (uint64_t(1) << lane) - 1;
    case Special::LanemaskLe:
      return (uint64_t(2) << lane) - 1;
    case Special::LanemaskGt:
      return truncate(~((uint64_t(2) << lane) - 1), 32);
    case Special::LanemaskGe:
      return truncate(~((uint64_t(1) << lane) - 1), 32);
    case Special::SharedAddress:
      return sharedBase_ + s.offset;
    case Special::DynamicSharedAddress:
      return sharedBase_ + dynamicOffset_ + s.offset;
    case Special::LocalAddress:
      return localBase_ + static_cast<uint64_t>(t) * localStride_ + s.offset;
    case Special::ParamAddress:
      return reinterpret_cast<uint64_t>(params_) + s.offset;
    }
    return 0;
  }

  // --- reports -------------------------------------------------------------------------

  std::string where(uint32_t pc) const {
    return "PTX line " + std::to_string(k_.code[pc].line) + ": " + k_.text[pc];
  }

  std::string threadName(uint32_t t) const { return "thread " + triple(threadIndex(t)); }

  /// "threads (0,0,0)..(63,0,0)" for a set of linear thread ids.
  std::string threadSet(const std::vector<uint32_t> &ts) const {
    if (ts.empty())
      return "no threads";
    std::string s;
    size_t i = 0, shown = 0;
    while (i < ts.size() && shown < 4) {
      size_t j = i;
      while (j + 1 < ts.size() && ts[j + 1] == ts[j] + 1)
        ++j;
      s += (s.empty() ? "" : ", ") + triple(threadIndex(ts[i])) +
           (j > i ? ".." + triple(threadIndex(ts[j])) : "");
      i = j + 1;
      ++shown;
    }
    if (i < ts.size())
      s += ", ...";
    return (ts.size() == 1 ? "thread " : "threads ") + s;
  }

  [[noreturn]] void fault(uint32_t warp, int lane, uint32_t pc, const std::string &what) const {
    throw Fault(k_.name + ": block " + triple(ctaid_) + " " +
                threadName(warp * 32 + static_cast<uint32_t>(lane)) + ": " + what + " (" +
                where(pc) + ")");
  }

  [[noreturn]] void reportBarrier() const {
    std::vector<uint32_t> waiting, exited;
    uint32_t pc = 0;
    for (uint32_t w = 0; w < warpCount_; ++w)
      for (int l = 0; l < 32; ++l) {
        if (!(warps_[w].exists >> l & 1))
          continue;
        if (warps_[w].atBarrier >> l & 1) {
          waiting.push_back(w * 32 + static_cast<uint32_t>(l));
          pc = warps_[w].pc[l] - 1;
        } else if (!(warps_[w].live >> l & 1)) {
          exited.push_back(w * 32 + static_cast<uint32_t>(l));
        }
      }
    throw Fault(k_.name + ": block " + triple(ctaid_) + ": a barrier not every thread of the " +
                "block reaches: " + threadSet(waiting) + " wait at it while " +
                threadSet(exited) + " exited (" + where(pc) + ")");
  }

  [[noreturn]] void reportParked() const {
    for (uint32_t w = 0; w < warpCount_; ++w) {
      const Warp &warp = warps_[w];
      if (!warp.parked)
        continue;
      int lane = __builtin_ctz(warp.parked);
      uint32_t pc = warp.pc[lane];
      std::vector<uint32_t> parked, elsewhere;
      for (int l = 0; l < 32; ++l) {
        if (!(warp.live >> l & 1))
          continue;
        bool here = (warp.parked >> l & 1) && warp.pc[l] == pc;
        (here ? parked : elsewhere).push_back(w * 32 + static_cast<uint32_t>(l));
      }
      throw Fault(k_.name + ": block " + triple(ctaid_) + ": " + threadSet(parked) +
                  " wait at a warp-synchronous instruction for members of its mask that " +
                  "never reach it (" + threadSet(elsewhere) + " are elsewhere) (" + where(pc) +
                  ")");
    }
    throw Fault(k_.name + ": a warp waits for lanes that never arrive");
  }

  // --- memory --------------------------------------------------------------------------

  bool inShared(uint64_t a, uint64_t n) const {
    return a >= sharedBase_ && a + n <= sharedBase_ + sharedTotal_ && a + n >= a;
  }
  bool inLocal(uint64_t a, uint64_t n) const {
    return a >= localBase_ && a + n <= localBase_ + localStride_ * threads_;
  }
  bool inParams(uint64_t a, uint64_t n) const {
    uint64_t base = reinterpret_cast<uint64_t>(params_);
    return a >= base && a + n <= base + k_.paramBytes;
  }

  const Region *regionOf(uint64_t a, uint64_t n) {
    if (last_ && a >= last_->base && a + n <= last_->base + last_->bytes)
      return last_;
    auto it = std::upper_bound(regions_.begin(), regions_.end(), a,
                               [](uint64_t x, const Region &r) { return x < r.base; });
    if (it == regions_.begin())
      return nullptr;
    --it;
    if (a + n <= it->base + it->bytes && a + n >= a)
      return last_ = &*it;
    return nullptr;
  }

  /// Why [a, a+n) is in no buffer, relative to the nearest one.
  std::string outside(uint64_t a, uint64_t n) const {
    const Region *nearest = nullptr;
    uint64_t distance = std::numeric_limits<uint64_t>::max();
    for (const Region &r : regions_) {
      uint64_t d = a < r.base ? r.base - a : a + n > r.base + r.bytes ? a + n - (r.base + r.bytes) : 0;
      if (d < distance)
        distance = d, nearest = &r;
    }
    if (!nearest)
      return "no buffer is allocated";
    std::string what = "the " + std::to_string(nearest->bytes) + "-byte " + nearest->what +
                       " at " + hex(nearest->base);
    uint64_t end = nearest->base + nearest->bytes;
    if (a < nearest->base)
      return std::to_string(nearest->base - a) + " bytes before " + what;
    if (a < end)
      return "reaching " + std::to_string(a + n - end) + " bytes past the end of " + what;
    if (a == end)
      return "just past the end of " + what;
    return std::to_string(a - end) + " bytes past the end of " + what;
  }

  std::string sharedName(uint64_t offset) const {
    for (const SharedVariable &v : k_.shared)
      if (offset >= v.offset && offset < v.offset + v.bytes)
        return v.name + "+" + std::to_string(offset - v.offset);
    return offset >= dynamicOffset_ ? "dynamic shared memory+" + std::to_string(offset - dynamicOffset_)
                                    : "padding";
  }

  /// Checks one lane's access of `n` bytes at `a` in `space`; returns the space it is in.
  Space check(uint64_t a, uint64_t n, Space space, bool write, uint32_t w, int l, uint32_t pc) {
    uint64_t align = std::min<uint64_t>(n, 16);
    const char *verb = write ? "store" : "load";
    if (a % align)
      fault(w, l, pc, std::string("misaligned ") + verb + " of " + std::to_string(n) +
                          " bytes at " + hex(a));
    if (space == Space::Generic)
      space = inShared(a, n) ? Space::Shared
              : inLocal(a, n) ? Space::Local
              : inParams(a, n) ? Space::Param
                               : Space::Global;
    switch (space) {
    case Space::Shared:
      if (!inShared(a, n))
        fault(w, l, pc, std::string("out-of-bounds shared ") + verb + " of " +
                            std::to_string(n) + " bytes at " + hex(a) + " (the block has " +
                            std::to_string(sharedTotal_) + " shared bytes at " +
                            hex(sharedBase_) + ")");
      break;
    case Space::Local: {
      uint64_t own = localBase_ + (w * 32 + static_cast<uint64_t>(l)) * localStride_;
      if (a < own || a + n > own + k_.localBytes)
        fault(w, l, pc, std::string("out-of-bounds local ") + verb + " of " +
                            std::to_string(n) + " bytes at " + hex(a) + " (the thread has " +
                            std::to_string(k_.localBytes) + " local bytes at " + hex(own) + ")");
      break;
    }
    case Space::Param:
      if (write || !inParams(a, n))
        fault(w, l, pc, std::string(write ? "a store to" : "out-of-bounds load from") +
                            " kernel parameters at " + hex(a));
      break;
    case Space::Global:
    case Space::Const:
    case Space::Generic:
      if (!regionOf(a, n))
        fault(w, l, pc, std::string("out-of-bounds global ") + verb + " of " +
                            std::to_string(n) + " bytes at " + hex(a) + ": " + outside(a, n));
      break;
    }
    return space;
  }

  /// Two accesses by threads of one warp are ordered when both lanes took part in a
  /// warp-synchronous instruction (shfl.sync, vote.sync, bar.warp.sync) after the first one.
  bool ordered(uint32_t other, uint32_t otherSync, uint32_t w, int l) const {
    if (other / 32 != w)
      return false;
    const Warp &warp = warps_[w];
    return warp.lastSync[l] > otherSync && warp.lastSync[other % 32] > otherSync;
  }

  [[noreturn]] void race(uint32_t w, int l, uint32_t pc, uint64_t offset, const char *mine,
                         const char *theirs, uint32_t other, uint32_t otherPc) const {
    fault(w, l, pc, std::string("shared-memory race on byte ") + std::to_string(offset) + " (" +
                        sharedName(offset) + "): it " + mine + " what " + threadName(other) +
                        " " + theirs + " since the last barrier (" + where(otherPc) + ")");
  }

  void sharedRead(uint64_t a, uint64_t n, uint32_t w, int l, uint32_t pc) {
    uint16_t me = static_cast<uint16_t>(w * 32 + static_cast<uint32_t>(l));
    uint32_t serial = warps_[w].serial;
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t off = a - sharedBase_ + i;
      Shadow &s = shadow_[off];
      if (s.writeTag == tag_ && s.writer != me && !ordered(s.writer, s.writeSync, w, l))
        race(w, l, pc, off, "reads", "wrote", s.writer, s.writePc);
      if (s.readTag != tag_) {
        s.readTag = tag_;
        s.reader = me;
        s.readSync = serial;
        s.readPc = pc;
        s.readWarp = static_cast<int16_t>(w);
        s.manyReaders = false;
      } else if (s.reader != me) {
        s.manyReaders = true;
        if (s.readWarp != static_cast<int16_t>(w))
          s.readWarp = -1;
        s.readSync = std::max(s.readSync, serial);
      }
    }
  }

  void sharedWrite(uint64_t a, const uint8_t *bytes, uint64_t n, uint32_t w, int l, uint32_t pc) {
    uint16_t me = static_cast<uint16_t>(w * 32 + static_cast<uint32_t>(l));
    const Warp &warp = warps_[w];
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t off = a - sharedBase_ + i;
      Shadow &s = shadow_[off];
      // Two threads writing the same value is no hazard for the result (the block
      // reductions' lanes all store their shared total).
      if (s.writeTag == tag_ && s.writer != me && !ordered(s.writer, s.writeSync, w, l) &&
          shared_.data[off] != bytes[i])
        race(w, l, pc, off, "overwrites", "wrote", s.writer, s.writePc);
      if (s.readTag == tag_) {
        bool safe = s.manyReaders ? s.readWarp == static_cast<int16_t>(w) &&
                                        warp.lastSync[l] > s.readSync
                                  : s.reader == me || ordered(s.reader, s.readSync, w, l);
        if (!safe)
          race(w, l, pc, off, "overwrites", "read", s.reader, s.readPc);
      }
      s.writeTag = tag_;
      s.writer = me;
      s.writeSync = warp.serial;
      s.writePc = pc;
      s.readTag = 0;
    }
  }

  // --- execution -----------------------------------------------------------------------

  void runWarp(Warp &w, uint32_t wi) {
    const std::vector<Instr> &code = k_.code;
    for (;;) {
      uint32_t runnable = w.live & ~w.atBarrier & ~w.parked;
      if (!runnable && !(runnable = unpark(w)))
        return;
      // The lanes at the lowest program counter, and the next lowest one's.
      uint32_t pc = std::numeric_limits<uint32_t>::max(), othersMin = pc, group = 0;
      forLanes(runnable, [&](int l) {
        uint32_t at = w.pc[l];
        if (at < pc) {
          othersMin = pc;
          pc = at;
          group = uint32_t(1) << l;
        } else if (at == pc) {
          group |= uint32_t(1) << l;
        } else if (at < othersMin) {
          othersMin = at;
        }
      });
      // The group runs until it splits, waits, or meets lanes that were behind it.
      for (;;) {
        if (++steps_ > kStepLimit)
          fault(wi, __builtin_ctz(group), pc,
                "the block runs more than " + std::to_string(kStepLimit) +
                    " warp instructions (a kernel that does not end?)");
        const Instr &in = code[pc];
        uint32_t active = group;
        if (in.guard >= 0) {
          const uint64_t *g = row(w, static_cast<uint32_t>(in.guard));
          active = 0;
          forLanes(group, [&](int l) {
            if ((g[l] != 0) != in.negateGuard)
              active |= uint32_t(1) << l;
          });
        }
        if (in.op == Op::Bra) {
          uint32_t stay = group & ~active;
          if (!stay) {
            pc = in.target;
          } else if (active) {
            forLanes(active, [&](int l) { w.pc[l] = in.target; });
            forLanes(stay, [&](int l) { w.pc[l] = pc + 1; });
            goto reselect;
          } else {
            ++pc;
          }
          if (pc >= othersMin)
            break;
          continue;
        }
        if (in.op == Op::BrxIdx) { // each lane to its entry of the table
          const std::vector<uint32_t> &table = k_.jumpTables[in.target];
          const uint64_t *index = row(w, in.src[0]);
          forLanes(group, [&](int l) {
            if (!(active >> l & 1)) {
              w.pc[l] = pc + 1;
              return;
            }
            uint64_t i = index[l] & 0xffffffffu;
            if (i >= table.size())
              fault(wi, l, pc,
                    "brx.idx to entry " + std::to_string(i) + " of a table of " +
                        std::to_string(table.size()));
            w.pc[l] = table[i];
          });
          goto reselect;
        }
        if (in.op == Op::Exit || in.op == Op::Bar) {
          if (in.op == Op::Exit) {
            w.live &= ~active;
          } else {
            w.atBarrier |= active;
            forLanes(active, [&](int l) { w.pc[l] = pc + 1; });
          }
          group &= ~active;
          if (!group)
            goto reselect;
          ++pc;
        } else if (in.op == Op::Shfl || in.op == Op::Vote || in.op == Op::WarpSync) {
          if (active && !warpSync(in, active, group, w, wi, pc))
            goto reselect;
          ++pc;
        } else {
          if (active)
            execute(in, active, w, wi, pc);
          ++pc;
        }
        if (pc == othersMin)
          break;
      }
      forLanes(group, [&](int l) { w.pc[l] = pc; });
    reselect:;
    }
  }

  /// Lanes parked at a warp-synchronous instruction whose other members have all exited
  /// since (it waits only for live ones): they may run it now. Returns them.
  uint32_t unpark(Warp &w) {
    uint32_t released = 0;
    forLanes(w.parked, [&](int l) {
      if (released >> l & 1)
        return;
      uint32_t pc = w.pc[l], here = 0;
      forLanes(w.parked, [&](int o) {
        if (w.pc[o] == pc)
          here |= uint32_t(1) << o;
      });
      const Instr &in = k_.code[pc];
      uint32_t members = static_cast<uint32_t>(row(w, in.src[in.numSrc - 1])[l]);
      if (!(members & w.live & ~here))
        released |= here;
    });
    w.parked &= ~released;
    return released;
  }

  /// A shfl/vote/bar.warp: runs it when every live member of its mask is here (parked lanes
  /// at this instruction join); else parks the group's active lanes. False when the group has
  /// nobody left to run.
  bool warpSync(const Instr &in, uint32_t &active, uint32_t &group, Warp &w, uint32_t wi,
                uint32_t pc) {
    const uint64_t *maskRow = row(w, in.src[in.numSrc - 1]);
    int first = __builtin_ctz(active);
    uint32_t members = static_cast<uint32_t>(maskRow[first]);
    forLanes(active, [&](int l) {
      if (static_cast<uint32_t>(maskRow[l]) != members)
        fault(wi, l, pc, "lanes of one warp give different member masks (" +
                             hex(static_cast<uint32_t>(maskRow[l])) + " and " + hex(members) + ")");
      if (!(members >> l & 1))
        fault(wi, l, pc, "a lane outside the member mask " + hex(members) + " executes it");
    });
    uint32_t joining = 0;
    forLanes(w.parked, [&](int l) {
      if (w.pc[l] == pc)
        joining |= uint32_t(1) << l;
    });
    w.parked &= ~joining;
    active |= joining;
    group |= joining;
    if (members & w.live & ~active) { // members still on their way
      w.parked |= active;
      forLanes(active, [&](int l) { w.pc[l] = pc; });
      group &= ~active;
      if (!group)
        return false;
      forLanes(group, [&](int l) { w.pc[l] = pc + 1; });
      return false;
    }
    if (in.op == Op::Shfl) {
      shuffle(in, active, w, wi, pc);
    } else if (in.op == Op::Vote) {
      const uint64_t *p = row(w, in.src[0]);
      uint32_t ballot = 0;
      forLanes(active, [&](int l) {
        if (p[l])
          ballot |= uint32_t(1) << l;
      });
      uint64_t result = 0;
      switch (static_cast<VoteMode>(in.mode)) {
      case VoteMode::Ballot:
        result = ballot;
        break;
      case VoteMode::All:
        result = ballot == active;
        break;
      case VoteMode::Any:
        result = ballot != 0;
        break;
      case VoteMode::Uni:
        result = ballot == 0 || ballot == active;
        break;
      }
      uint64_t *d = row(w, in.dst[0]);
      forLanes(active, [&](int l) { d[l] = result; });
    }
    ++w.serial;
    forLanes(active, [&](int l) { w.lastSync[l] = w.serial; });
    return true;
  }

  void shuffle(const Instr &in, uint32_t active, Warp &w, uint32_t wi, uint32_t pc) {
    const uint64_t *a = row(w, in.src[0]), *b = row(w, in.src[1]), *c = row(w, in.src[2]);
    std::array<uint64_t, 32> value{};
    std::array<uint64_t, 32> inRange{};
    forLanes(active, [&](int l) {
      uint32_t lane = static_cast<uint32_t>(l), bval = b[l] & 31, cval = c[l] & 31,
               segmask = (c[l] >> 8) & 31;
      uint32_t maxLane = (lane & segmask) | (cval & ~segmask), minLane = lane & segmask;
      int32_t j = 0;
      bool p = false;
      switch (static_cast<ShflMode>(in.mode)) {
      case ShflMode::Up:
        j = static_cast<int32_t>(lane) - static_cast<int32_t>(bval);
        p = j >= static_cast<int32_t>(maxLane);
        break;
      case ShflMode::Down:
        j = static_cast<int32_t>(lane + bval);
        p = j <= static_cast<int32_t>(maxLane);
        break;
      case ShflMode::Bfly:
        j = static_cast<int32_t>(lane ^ bval);
        p = j <= static_cast<int32_t>(maxLane);
        break;
      case ShflMode::Idx:
        j = static_cast<int32_t>(minLane | (bval & ~segmask));
        p = j <= static_cast<int32_t>(maxLane);
        break;
      }
      if (!p)
        j = l;
      if (j < 0 || j > 31 || !(active >> j & 1))
        fault(wi, l, pc, "the shuffle reads lane " + std::to_string(j) +
                             ", which does not take part in it (inactive or exited)");
      value[l] = truncate(a[j], 32);
      inRange[l] = p;
    });
    uint64_t *d = row(w, in.dst[0]);
    forLanes(active, [&](int l) { d[l] = value[l]; });
    if (in.numDst > 1) {
      uint64_t *pd = row(w, in.dst[1]);
      forLanes(active, [&](int l) { pd[l] = inRange[l]; });
    }
  }

  template <class Fn> void floatUnary(const Instr &in, uint32_t m, uint64_t *d, const uint64_t *a, Fn fn) {
    RoundingScope r(in.round);
    if (in.type == Type::F64) {
      forLanes(m, [&](int l) {
        double x = fn(bitsToDouble(a[l]));
        d[l] = doubleToBits(in.sat ? saturate(x) : x);
      });
      return;
    }
    forLanes(m, [&](int l) {
      float x = toFloat(a[l], in.type);
      if (in.ftz)
        x = flushSubnormal(x);
      float y = fn(x);
      if (in.sat)
        y = saturate(y);
      if (in.ftz)
        y = flushSubnormal(y);
      d[l] = fromFloat(y, in.type);
    });
  }

  template <class Fn>
  void floatBinary(const Instr &in, uint32_t m, uint64_t *d, const uint64_t *a, const uint64_t *b,
                   Fn fn) {
    RoundingScope r(in.round);
    if (in.type == Type::F64) {
      forLanes(m, [&](int l) {
        double x = fn(bitsToDouble(a[l]), bitsToDouble(b[l]));
        d[l] = doubleToBits(in.sat ? saturate(x) : x);
      });
      return;
    }
    forLanes(m, [&](int l) {
      float x = toFloat(a[l], in.type), y = toFloat(b[l], in.type);
      if (in.ftz)
        x = flushSubnormal(x), y = flushSubnormal(y);
      float z = fn(x, y);
      if (in.sat)
        z = saturate(z);
      if (in.ftz)
        z = flushSubnormal(z);
      d[l] = fromFloat(z, in.type);
    });
  }

  template <class Fn> void integer(const Instr &in, uint32_t m, uint64_t *d, Fn fn) {
    int bits = bitsOf(in.type);
    forLanes(m, [&](int l) { d[l] = truncate(fn(l), bits); });
  }

  void execute(const Instr &in, uint32_t m, Warp &w, uint32_t wi, uint32_t pc) {
    uint64_t *d = in.numDst ? row(w, in.dst[0]) : nullptr;
    const uint64_t *a = in.numSrc > 0 ? row(w, in.src[0]) : nullptr;
    const uint64_t *b = in.numSrc > 1 ? row(w, in.src[1]) : nullptr;
    const uint64_t *c = in.numSrc > 2 ? row(w, in.src[2]) : nullptr;
    Type t = in.type;
    int bits = bitsOf(t);
    bool fp = isFloat(t), sgn = isSigned(t);
    auto A = [&](int l) { return widen(a[l], bits, sgn); };
    auto B = [&](int l) { return widen(b[l], bits, sgn); };
    auto C = [&](int l) { return widen(c[l], bits, sgn); };
    switch (in.op) {
    case Op::Mov:
    case Op::Cvta:
      if (in.numSrc > 1) { // mov.b64 x, {lo, hi}: the parts' bits joined, the low part first
        int part = bits / in.numSrc;
        forLanes(m, [&](int l) {
          uint64_t v = 0;
          for (int k = 0; k < in.numSrc; ++k)
            v |= truncate(row(w, in.src[k])[l], part) << (k * part);
          d[l] = v;
        });
        break;
      }
      if (in.numDst > 1) { // mov.b64 {lo, hi}, x: x's bits split, the low part first
        int part = bits / in.numDst;
        for (int k = 0; k < in.numDst; ++k) {
          uint64_t *dk = row(w, in.dst[k]);
          forLanes(m, [&](int l) { dk[l] = truncate(a[l] >> (k * part), part); });
        }
        break;
      }
      forLanes(m, [&](int l) { d[l] = a[l]; });
      break;
    case Op::Add:
      if (fp)
        floatBinary(in, m, d, a, b, [](auto x, auto y) { return x + y; });
      else
        integer(in, m, d, [&](int l) { return A(l) + B(l); });
      break;
    case Op::Sub:
      if (fp)
        floatBinary(in, m, d, a, b, [](auto x, auto y) { return x - y; });
      else
        integer(in, m, d, [&](int l) { return A(l) - B(l); });
      break;
    case Op::Mul:
      if (fp)
        floatBinary(in, m, d, a, b, [](auto x, auto y) { return x * y; });
      else
        integer(in, m, d, [&](int l) { return A(l) * B(l); });
      break;
    case Op::MulHi:
    case Op::MadHi:
      integer(in, m, d, [&](int l) {
        uint64_t hi;
        if (bits == 64)
          hi = sgn ? static_cast<uint64_t>((static_cast<__int128>(static_cast<int64_t>(A(l))) *
                                            static_cast<int64_t>(B(l))) >> 64)
                   : static_cast<uint64_t>((static_cast<unsigned __int128>(A(l)) * B(l)) >> 64);
        else
          hi = sgn ? static_cast<uint64_t>((static_cast<int64_t>(A(l)) * static_cast<int64_t>(B(l))) >> bits)
                   : (A(l) * B(l)) >> bits;
        return in.op == Op::MadHi ? hi + C(l) : hi;
      });
      break;
    case Op::MulWide:
    case Op::MadWide:
      forLanes(m, [&](int l) {
        uint64_t p = A(l) * B(l);
        if (in.op == Op::MadWide)
          p += c[l];
        d[l] = truncate(p, 2 * bits);
      });
      break;
    case Op::Mad:
      integer(in, m, d, [&](int l) { return A(l) * B(l) + C(l); });
      break;
    case Op::Fma: {
      RoundingScope r(in.round);
      if (t == Type::F64) {
        forLanes(m, [&](int l) {
          d[l] = doubleToBits(std::fma(bitsToDouble(a[l]), bitsToDouble(b[l]), bitsToDouble(c[l])));
        });
      } else {
        forLanes(m, [&](int l) {
          float x = toFloat(a[l], t), y = toFloat(b[l], t), z = toFloat(c[l], t);
          if (in.ftz)
            x = flushSubnormal(x), y = flushSubnormal(y), z = flushSubnormal(z);
          float v = std::fma(x, y, z);
          if (in.sat)
            v = saturate(v);
          if (in.ftz)
            v = flushSubnormal(v);
          d[l] = fromFloat(v, t);
        });
      }
      break;
    }
    case Op::Div:
      if (fp)
        floatBinary(in, m, d, a, b, [](auto x, auto y) { return x / y; });
      else
        integer(in, m, d, [&](int l) -> uint64_t {
          uint64_t x = A(l), y = B(l);
          if (!truncate(y, bits))
            return ~uint64_t(0);
          if (!sgn)
            return x / y;
          int64_t sx = static_cast<int64_t>(x), sy = static_cast<int64_t>(y);
          if (sy == -1)
            return static_cast<uint64_t>(0) - x; // INT_MIN / -1 wraps
          return static_cast<uint64_t>(sx / sy);
        });
      break;
    case Op::Rem:
      integer(in, m, d, [&](int l) -> uint64_t {
        uint64_t x = A(l), y = B(l);
        if (!truncate(y, bits))
          return x;
        if (!sgn)
          return x % y;
        int64_t sy = static_cast<int64_t>(y);
        return sy == -1 ? 0 : static_cast<uint64_t>(static_cast<int64_t>(x) % sy);
      });
      break;
    case Op::Min:
    case Op::Max: {
      bool max = in.op == Op::Max;
      if (fp) {
        bool nan = in.nanPropagating;
        floatBinary(in, m, d, a, b, [max, nan](auto x, auto y) { return minMax(x, y, max, nan); });
      } else {
        integer(in, m, d, [&](int l) {
          uint64_t x = A(l), y = B(l);
          bool less = sgn ? static_cast<int64_t>(x) < static_cast<int64_t>(y) : x < y;
          return less != max ? x : y;
        });
      }
      break;
    }
    case Op::Neg:
      if (fp)
        floatUnary(in, m, d, a, [](auto x) { return -x; });
      else
        integer(in, m, d, [&](int l) { return uint64_t(0) - A(l); });
      break;
    case Op::Abs:
      if (fp)
        floatUnary(in, m, d, a, [](auto x) { return std::fabs(x); });
      else
        integer(in, m, d, [&](int l) {
          int64_t x = static_cast<int64_t>(widen(a[l], t == Type::S16   ? Type::S16
                                                       : t == Type::S64 ? Type::S64
                                                                        : Type::S32));
          return static_cast<uint64_t>(x < 0 ? -x : x);
        });
      break;
    case Op::Not:
      integer(in, m, d, [&](int l) { return ~a[l]; });
      break;
    case Op::And:
      integer(in, m, d, [&](int l) { return a[l] & b[l]; });
      break;
    case Op::Or:
      integer(in, m, d, [&](int l) { return a[l] | b[l]; });
      break;
    case Op::Xor:
      integer(in, m, d, [&](int l) { return a[l] ^ b[l]; });
      break;
    case Op::Shl:
      integer(in, m, d, [&](int l) {
        uint64_t s = truncate(b[l], 32);
        return s >= static_cast<uint64_t>(bits) ? 0 : a[l] << s;
      });
      break;
    case Op::Shr:
      integer(in, m, d, [&](int l) -> uint64_t {
        uint64_t s = truncate(b[l], 32);
        if (sgn)
          return static_cast<uint64_t>(static_cast<int64_t>(A(l)) >>
                                       std::min<uint64_t>(s, static_cast<uint64_t>(bits - 1)));
        return s >= static_cast<uint64_t>(bits) ? 0 : truncate(a[l], bits) >> s;
      });
      break;
    case Op::Setp: {
      Compare cmp = static_cast<Compare>(in.mode);
      uint64_t *q = in.numDst > 1 ? row(w, in.dst[1]) : nullptr;
      forLanes(m, [&](int l) {
        bool r = fp ? (t == Type::F64 ? compareFloat(cmp, bitsToDouble(a[l]), bitsToDouble(b[l]))
                                      : compareFloat(cmp, toFloat(a[l], t), toFloat(b[l], t)))
                    : compareInt(cmp, A(l), B(l), sgn);
        bool nr = !r;
        if (in.boolOp) {
          bool p = c[l] != 0;
          r = in.boolOp == 1 ? r && p : in.boolOp == 2 ? r || p : r != p;
          nr = in.boolOp == 1 ? nr && p : in.boolOp == 2 ? nr || p : nr != p;
        }
        d[l] = r;
        if (q)
          q[l] = nr;
      });
      break;
    }
    case Op::Selp:
      forLanes(m, [&](int l) { d[l] = c[l] ? a[l] : b[l]; });
      break;
    case Op::Cvt:
      if (in.packed) { // a's half in the upper 16 bits, b's in the lower (b read before d is
                       // written)
        uint64_t low[32];
        convert(in, m, low, b);
        convert(in, m, d, a);
        forLanes(m, [&](int l) { d[l] = (d[l] & 0xffff) << 16 | (low[l] & 0xffff); });
      } else {
        convert(in, m, d, a);
      }
      break;
    case Op::Ld:
      load(in, m, w, wi, pc);
      break;
    case Op::St:
      store(in, m, w, wi, pc);
      break;
    case Op::Sqrt:
      floatUnary(in, m, d, a, [](auto x) { return std::sqrt(x); });
      break;
    case Op::Rsqrt:
      floatUnary(in, m, d, a, [](auto x) { return decltype(x)(1) / std::sqrt(x); });
      break;
    case Op::Rcp:
      floatUnary(in, m, d, a, [](auto x) { return decltype(x)(1) / x; });
      break;
    case Op::Ex2:
      floatUnary(in, m, d, a, [](auto x) { return std::exp2(x); });
      break;
    case Op::Lg2:
      floatUnary(in, m, d, a, [](auto x) { return std::log2(x); });
      break;
    case Op::Sin:
      floatUnary(in, m, d, a, [](auto x) { return std::sin(x); });
      break;
    case Op::Cos:
      floatUnary(in, m, d, a, [](auto x) { return std::cos(x); });
      break;
    case Op::Tanh:
      floatUnary(in, m, d, a, [](auto x) { return std::tanh(x); });
      break;
    case Op::Copysign: // copysign d, a, b: b's magnitude, a's sign
      floatBinary(in, m, d, a, b, [](auto x, auto y) { return std::copysign(y, x); });
      break;
    case Op::Testp: {
      TestpMode mode = static_cast<TestpMode>(in.mode);
      forLanes(m, [&](int l) {
        double x = t == Type::F64 ? bitsToDouble(a[l]) : toFloat(a[l], t);
        int cls = t == Type::F64 ? std::fpclassify(x) : std::fpclassify(static_cast<float>(x));
        bool r = mode == TestpMode::Finite       ? std::isfinite(x)
                 : mode == TestpMode::Infinite   ? std::isinf(x)
                 : mode == TestpMode::Number     ? !std::isnan(x)
                 : mode == TestpMode::NotANumber ? std::isnan(x)
                 : mode == TestpMode::Normal     ? cls == FP_NORMAL
                                                 : cls == FP_SUBNORMAL;
        d[l] = r;
      });
      break;
    }
    case Op::Popc:
      forLanes(m, [&](int l) { d[l] = static_cast<uint64_t>(__builtin_popcountll(truncate(a[l], bits))); });
      break;
    case Op::Clz:
      forLanes(m, [&](int l) {
        uint64_t x = truncate(a[l], bits);
        d[l] = x ? static_cast<uint64_t>(__builtin_clzll(x) - (64 - bits)) : static_cast<uint64_t>(bits);
      });
      break;
    case Op::Brev:
      integer(in, m, d, [&](int l) {
        uint64_t x = a[l], r = 0;
        for (int i = 0; i < bits; ++i)
          r |= ((x >> i) & 1) << (bits - 1 - i);
        return r;
      });
      break;
    case Op::Bfe:
      integer(in, m, d, [&](int l) -> uint64_t {
        uint64_t x = truncate(a[l], bits);
        uint64_t pos = b[l] & 0xff, len = c[l] & 0xff;
        if (len == 0)
          return 0;
        uint64_t avail = pos >= static_cast<uint64_t>(bits) ? 0 : bits - pos;
        uint64_t eff = std::min(len, avail);
        uint64_t field = avail ? (x >> pos) & lowMask(static_cast<int>(eff)) : 0;
        if (!sgn)
          return field;
        uint64_t msb = std::min<uint64_t>(pos + len - 1, static_cast<uint64_t>(bits - 1));
        bool sign = (x >> msb) & 1;
        return sign ? field | ~lowMask(static_cast<int>(eff)) : field;
      });
      break;
    case Op::Bfi: {
      const uint64_t *e = row(w, in.src[3]);
      integer(in, m, d, [&](int l) -> uint64_t {
        uint64_t pos = c[l] & 0xff, len = e[l] & 0xff;
        if (len == 0 || pos >= static_cast<uint64_t>(bits))
          return b[l];
        uint64_t mask = lowMask(static_cast<int>(std::min<uint64_t>(len, bits - pos))) << pos;
        return (b[l] & ~mask) | ((a[l] << pos) & mask);
      });
      break;
    }
    case Op::ShfL:
    case Op::ShfR:
      integer(in, m, d, [&](int l) -> uint64_t {
        uint64_t s = in.wrapShift ? (c[l] & 31) : std::min<uint64_t>(truncate(c[l], 32), 32);
        uint64_t both = (truncate(b[l], 32) << 32) | truncate(a[l], 32);
        return in.op == Op::ShfL ? (both << s) >> 32 : both >> s;
      });
      break;
    case Op::AddCarry:
    case Op::SubCarry:
    case Op::MadCarry: {
      uint64_t *cc = row(w, k_.carryRegister);
      bool setCarry = in.mode & 1, useCarry = in.mode & 2;
      forLanes(m, [&](int l) {
        unsigned __int128 x = truncate(a[l], bits), y = truncate(b[l], bits),
                          carry = useCarry ? cc[l] & 1 : 0, r;
        if (in.op == Op::MadCarry) {
          unsigned __int128 p = x * y;
          unsigned __int128 part = in.hi ? p >> bits : p & lowMask(bits);
          r = part + truncate(c[l], bits) + carry;
        } else if (in.op == Op::AddCarry) {
          r = x + y + carry;
        } else {
          r = x - y - carry;
        }
        d[l] = truncate(static_cast<uint64_t>(r), bits);
        if (setCarry)
          cc[l] = static_cast<uint64_t>(r >> bits) & 1;
      });
      break;
    }
    case Op::Fence:
    case Op::Nop:
      break;
    case Op::Bra:
    case Op::BrxIdx:
    case Op::Bar:
    case Op::Exit:
    case Op::Shfl:
    case Op::Vote:
    case Op::WarpSync:
      break; // runWarp's
    }
  }

  void convert(const Instr &in, uint32_t m, uint64_t *d, const uint64_t *a) {
    Type dt = in.type, st = in.srcType;
    int dbits = bitsOf(dt);
    if (isFloat(dt) && isFloat(st)) {
      bool integral = in.round >= Round::Rni;
      RoundingScope r(integral ? Round::Default : in.round);
      forLanes(m, [&](int l) {
        if (dt == Type::F64) {
          double x = st == Type::F64 ? bitsToDouble(a[l]) : static_cast<double>(toFloat(a[l], st));
          x = roundIntegral(x, in.round);
          d[l] = doubleToBits(in.sat ? saturate(x) : x);
          return;
        }
        float x = st == Type::F64 ? static_cast<float>(bitsToDouble(a[l])) : toFloat(a[l], st);
        if (in.ftz)
          x = flushSubnormal(x);
        x = roundIntegral(x, in.round);
        if (in.sat)
          x = saturate(x);
        d[l] = fromFloat(x, dt);
      });
    } else if (isFloat(st)) { // to an integer: rounded as asked, saturated, NaN -> 0
      bool dsigned = isSigned(dt);
      double lo = dsigned ? -std::ldexp(1.0, dbits - 1) : 0.0;
      double hi = dsigned ? std::ldexp(1.0, dbits - 1) : std::ldexp(1.0, dbits);
      Round r = in.round == Round::Default ? Round::Rzi : in.round;
      forLanes(m, [&](int l) {
        double x = st == Type::F64 ? bitsToDouble(a[l]) : static_cast<double>(toFloat(a[l], st));
        if (in.ftz)
          x = static_cast<double>(flushSubnormal(static_cast<float>(x)));
        x = roundIntegral(x, r == Round::Rn ? Round::Rni : r == Round::Rz ? Round::Rzi
                                               : r == Round::Rm ? Round::Rmi
                                               : r == Round::Rp ? Round::Rpi : r);
        uint64_t v;
        if (std::isnan(x))
          v = 0;
        else if (x <= lo)
          v = dsigned ? static_cast<uint64_t>(int64_t(-1)) << (dbits - 1) : 0;
        else if (x >= hi)
          v = dsigned ? lowMask(dbits - 1) : lowMask(dbits);
        else
          v = dsigned ? static_cast<uint64_t>(static_cast<int64_t>(x)) : static_cast<uint64_t>(x);
        d[l] = truncate(v, dbits);
      });
    } else if (isFloat(dt)) { // from an integer
      RoundingScope r(in.round);
      bool ssigned = isSigned(st);
      forLanes(m, [&](int l) {
        uint64_t v = widen(a[l], st);
        if (dt == Type::F64)
          d[l] = doubleToBits(ssigned ? static_cast<double>(static_cast<int64_t>(v))
                                    : static_cast<double>(v));
        else
          d[l] = fromFloat(ssigned ? static_cast<float>(static_cast<int64_t>(v))
                                   : static_cast<float>(v),
                           dt);
      });
    } else { // between integers: extended by the source's signedness, then narrowed
      bool dsigned = isSigned(dt), ssigned = isSigned(st);
      forLanes(m, [&](int l) {
        uint64_t v = widen(a[l], st);
        if (in.sat && dbits < 64) {
          int64_t sv = static_cast<int64_t>(v);
          int64_t lo = dsigned ? -(int64_t(1) << (dbits - 1)) : 0;
          int64_t hi = dsigned ? (int64_t(1) << (dbits - 1)) - 1
                               : static_cast<int64_t>(lowMask(dbits));
          if (ssigned)
            v = static_cast<uint64_t>(std::min(std::max(sv, lo), hi));
          else
            v = std::min<uint64_t>(v, static_cast<uint64_t>(hi));
        }
        d[l] = truncate(v, dbits);
      });
    }
  }

  void load(const Instr &in, uint32_t m, Warp &w, uint32_t wi, uint32_t pc) {
    uint64_t element = static_cast<uint64_t>(std::max(bitsOf(in.type), 8) / 8);
    uint64_t bytes = element * in.vec;
    const uint64_t *a = row(w, in.src[0]);
    bool sgn = isSigned(in.type);
    forLanes(m, [&](int l) {
      uint64_t address = a[l] + static_cast<uint64_t>(in.offset);
      if (check(address, bytes, in.space, false, wi, l, pc) == Space::Shared)
        sharedRead(address, bytes, wi, l, pc);
      for (uint32_t v = 0; v < in.vec; ++v) {
        uint64_t x = 0;
        std::memcpy(&x, reinterpret_cast<const void *>(address + v * element), element);
        row(w, in.dst[v])[l] = sgn ? static_cast<uint64_t>(signExtend(x, static_cast<int>(element * 8))) : x;
      }
    });
  }

  void store(const Instr &in, uint32_t m, Warp &w, uint32_t wi, uint32_t pc) {
    uint64_t element = static_cast<uint64_t>(std::max(bitsOf(in.type), 8) / 8);
    uint64_t bytes = element * in.vec;
    const uint64_t *a = row(w, in.src[0]);
    forLanes(m, [&](int l) {
      uint64_t address = a[l] + static_cast<uint64_t>(in.offset);
      std::array<uint8_t, 32> data{};
      for (uint32_t v = 0; v < in.vec; ++v) {
        uint64_t x = row(w, in.src[1 + v])[l];
        std::memcpy(data.data() + v * element, &x, element);
      }
      if (check(address, bytes, in.space, true, wi, l, pc) == Space::Shared)
        sharedWrite(address, data.data(), bytes, wi, l, pc);
      std::memcpy(reinterpret_cast<void *>(address), data.data(), bytes);
    });
  }

  const Kernel &k_;
  const LaunchConfig &c_;
  const std::vector<Region> &regions_;
  const Region *last_ = nullptr;
  uint32_t threads_, warpCount_;
  uint64_t dynamicOffset_, sharedTotal_, localStride_;
  const uint8_t *params_;
  std::vector<uint64_t> files_;
  AlignedBuffer shared_, local_;
  std::vector<Shadow> shadow_;
  std::vector<Warp> warps_;
  uint64_t sharedBase_ = 0, localBase_ = 0;
  std::array<uint32_t, 3> ctaid_{};
  std::vector<const SpecialRegister *> blockSpecials_; // the block ids: set per block
  uint32_t tag_ = 0, epoch_ = 0;
  uint64_t steps_ = 0;
};

} // namespace

void runKernel(const Kernel &kernel, const LaunchConfig &config,
               const std::vector<Region> &regions, unsigned threads) {
  uint64_t blockThreads = uint64_t(config.block[0]) * config.block[1] * config.block[2];
  uint64_t blocks = uint64_t(config.grid[0]) * config.grid[1] * config.grid[2];
  if (blocks == 0 || blockThreads == 0)
    return;
  // The kernel's parameters, laid out as its .param declarations say.
  std::vector<uint8_t> params(kernel.paramBytes + 16, 0);
  for (size_t i = 0; i < kernel.paramSizes.size(); ++i)
    std::memcpy(params.data() + kernel.paramOffsets[i], config.params[i], kernel.paramSizes[i]);
  if (threads == 0)
    threads = std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<unsigned>(std::min<uint64_t>(threads, blocks));
  // Blocks are taken in order; the report is the lowest faulting block's, whatever the
  // number of threads, and blocks after it are not started.
  std::atomic<uint64_t> next{0}, stopAt{blocks};
  std::mutex faultMutex;
  uint64_t faultBlock = blocks;
  std::string firstFault;
  auto work = [&] {
    uint64_t b = 0;
    try {
      BlockRunner runner(kernel, config, regions, params.data());
      while ((b = next++) < stopAt)
        runner.run(static_cast<uint32_t>(b));
    } catch (const Fault &f) {
      std::lock_guard<std::mutex> lock(faultMutex);
      if (b < faultBlock) {
        faultBlock = b;
        firstFault = f.what();
        stopAt = b;
      }
    }
  };
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (unsigned i = 1; i < threads; ++i)
      pool.emplace_back(work);
    work();
    for (std::thread &t : pool)
      t.join();
  }
  if (faultBlock < blocks)
    throw Fault(firstFault);
}

} // namespace sotc::runtime::emulator
