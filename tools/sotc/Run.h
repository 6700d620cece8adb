//===- Run.h - sotc run: an artifact on inputs from the command line ----------------------===//
#ifndef SOTC_TOOLS_SOTC_RUN_H
#define SOTC_TOOLS_SOTC_RUN_H

#include <stdexcept>
#include <string>
#include <vector>

namespace sotc::run {

/// An error the runtime returned: its own code (E8xxx) and message; for inputs that do not
/// match (E8004), the table of them too.
class RuntimeFailure : public std::runtime_error {
public:
  RuntimeFailure(std::string code, const std::string &message, std::string table = "")
      : std::runtime_error(message), code(std::move(code)), table(std::move(table)) {}
  std::string code, table;
};

struct RunOptions {
  std::string artifact;
  /// NAME=@file.npy, NAME=random (seeded), or NAME=LITERAL (a value traced as a constant).
  std::vector<std::string> inputs;
  std::string saveDir; // write each result as DIR/<name>.npy
  std::string output;  // write the results as one .npz (numpy.load gives them by name)
  std::string device;  // cpu, cuda or cuda:N ("": the artifact's target, device 0)
  unsigned seed = 0;
  size_t entry = 0; // the entry whose specs NAME=random and constants not given take
  std::vector<int64_t> batch; // NAME=random of dynamic sizes: s0, s1, ... (one: all of them)
  /// sotc bench: timed runs after untimed warm-up runs.
  unsigned repeat = 100, warmup = 3;
};

/// Opens the artifact through the runtime's C API, runs it once and prints each result's
/// name, dtype, shape and leading values. The runtime's errors are RuntimeFailures (E8xxx);
/// an unusable input is E9009 and an unwritable output E9002.
void runArtifact(const RunOptions &options);

struct GenerateOptions {
  std::string artifact, device;
  std::vector<int64_t> prompt; // token ids
  int64_t maxNewTokens = 32;
  std::vector<int64_t> eos; // stop after one of these
  bool timing = false;      // print prefill ms and decode ms/token
};

/// Greedy generation on a language model that keeps its KV cache as state (compiled from a
/// forward(tokens int64[1, T], positions int64[T]) -> logits: docs/runtime.md), on a sequence
/// state of its own: prints the new tokens' ids, comma-separated, and with `timing` the
/// prefill's and each decode step's time. E9009 for a prompt and new tokens past the cache's
/// positions or an artifact of another signature.
void generateTokens(const GenerateOptions &options);

/// Runs the artifact `warmup` times, then `repeat` times timed, and prints the run's and each
/// step's fastest and median time, with the bandwidth of the bytes each step moves.
void benchArtifact(const RunOptions &options);

} // namespace sotc::run

#endif // SOTC_TOOLS_SOTC_RUN_H
