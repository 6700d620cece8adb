// The machine's float32 FMA peak for 1..N threads, one JSON object per line:
//   {"threads": 2, "gflops": 371.2, "isa": "AVX-512"}
#include "tools/sotc/FmaPeak.h"

#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char **argv) {
  unsigned most = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1]))
                           : std::thread::hardware_concurrency();
  for (unsigned threads = 1; threads <= most; ++threads) {
    sotc::bench::FmaPeak peak = sotc::bench::measureFmaPeak(threads, 0.4);
    std::printf("{\"threads\": %u, \"gflops\": %.1f, \"isa\": \"%s\"}\n", peak.threads,
                peak.gflops, peak.isa.c_str());
  }
  return 0;
}
