//===- Half.h - IEEE bits: float, double, and half and bfloat16 to and from float ----------===//
#ifndef SOTC_RUNTIME_EMULATOR_HALF_H
#define SOTC_RUNTIME_EMULATOR_HALF_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace sotc::runtime::emulator {

/// The same bits as another type of the same size.
template <typename To, typename From> inline To bitCast(From v) {
  static_assert(sizeof(To) == sizeof(From), "bit casts keep the size");
  To out;
  std::memcpy(&out, &v, sizeof out);
  return out;
}

inline float bitsToFloat(uint32_t b) { return bitCast<float>(b); }
inline uint32_t floatToBits(float f) { return bitCast<uint32_t>(f); }
inline double bitsToDouble(uint64_t b) { return bitCast<double>(b); }
inline uint64_t doubleToBits(double d) { return bitCast<uint64_t>(d); }

inline float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f,
           mant = h & 0x3ff;
  if (exp == 0) {
    float f = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -f : f;
  }
  if (exp == 31)
    return bitsToFloat(sign | 0x7f800000u | (mant << 13));
  return bitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

/// float to IEEE half, rounded to nearest even.
inline uint16_t floatToHalf(float f) {
  uint32_t x = floatToBits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u)
    return sign | (x > 0x7f800000u ? 0x7e00 : 0x7c00);
  if (x >= 0x477ff000u) // 65520 and above round to infinity
    return sign | 0x7c00;
  if (x < 0x38800000u) // below 2^-14: a subnormal half, in units of 2^-24
    return sign | static_cast<uint16_t>(std::nearbyint(bitsToFloat(x) * 16777216.0f));
  uint32_t r = x - 0x38000000u, h = r >> 13, rest = r & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
    ++h;
  return static_cast<uint16_t>(sign | h);
}

inline float bfloatToFloat(uint16_t h) { return bitsToFloat(static_cast<uint32_t>(h) << 16); }

/// float to bfloat16, rounded to nearest even (NaN stays NaN).
inline uint16_t floatToBfloat(float f) {
  uint32_t x = floatToBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40);
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

} // namespace sotc::runtime::emulator

#endif // SOTC_RUNTIME_EMULATOR_HALF_H
