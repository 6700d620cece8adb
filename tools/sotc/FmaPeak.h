//===- FmaPeak.h - the machine's float32 FMA peak, measured -------------------------------===//
//
// What a GEMM step's GFLOP/s is measured against: every thread running independent
// fused multiply-adds of the widest vectors the CPU has, at the clock the CPU then keeps
// (AVX-512 code runs at a lower one on some CPUs, which a datasheet figure would hide).
//
//===----------------------------------------------------------------------------------------===//
#ifndef SOTC_TOOLS_SOTC_FMAPEAK_H
#define SOTC_TOOLS_SOTC_FMAPEAK_H

#include <string>

namespace sotc::bench {

struct FmaPeak {
  double gflops = 0;   // float32, all threads together; 0 where the CPU has no FMA
  unsigned threads = 0;
  std::string isa;     // "AVX-512" or "AVX2"
};

/// Runs `threads` threads of FMA loops for about `seconds` (the best of a few rounds).
FmaPeak measureFmaPeak(unsigned threads, double seconds = 0.1);

} // namespace sotc::bench

#endif // SOTC_TOOLS_SOTC_FMAPEAK_H
