// Every entry of the operator table called with generated arguments: random tensors (ranks 0
// to 4, sizes 0 to 4, float/int/bool dtypes), scalars, dims, lists, strings and indices for its
// signatures' parameters, positional or by keyword, some of the wrong type. Each call lowers
// to a graph whose outputs match the entry's inference, or fails with a CodedError; anything
// else (another exception, a crash, a graph with a dangling value) is a defect. Each entry
// runs in a child process, so one run reports every entry's first defect.
#include "compiler/ops/OpTable.h"
#include "compiler/support/Diagnostics.h"

#include <catch2/catch.hpp>

#include <random>
#include <sstream>

#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

using namespace sotc::ops;

namespace {

class ArgGenerator {
public:
  explicit ArgGenerator(uint32_t seed) : rng_(seed) {}

  int64_t between(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool chance(int percent) { return between(1, 100) <= percent; }

  TensorMeta tensor() {
    static const DType dtypes[] = {DType::Float32, DType::Float32, DType::Float64,
                                   DType::Int64,   DType::Int32,   DType::Bool};
    TensorMeta m;
    int64_t rank = between(0, 4);
    for (int64_t i = 0; i < rank; ++i)
      m.shape.push_back(chance(5) ? 0 : between(1, 4));
    m.dtype = dtypes[between(0, 5)];
    return m;
  }

  Arg intArg() { return Arg::ofInt(between(-3, 5)); }

  Arg intList(bool single) {
    if (single && chance(40))
      return intArg();
    std::vector<Arg> items;
    for (int64_t i = between(0, 4); i > 0; --i)
      items.push_back(intArg());
    return chance(50) ? Arg::list(items) : Arg::tuple(items);
  }

  Arg floatList(bool single) {
    if (single && chance(40))
      return Arg::ofFloat(between(1, 8) / 2.0);
    std::vector<Arg> items;
    for (int64_t i = between(0, 3); i > 0; --i)
      items.push_back(Arg::ofFloat(between(1, 8) / 2.0));
    return Arg::list(items);
  }

  Arg string() {
    static const char *words[] = {"mean",      "sum",      "none",    "constant", "reflect",
                                  "replicate", "circular", "nearest", "bilinear", "bicubic",
                                  "area",      "NCHW",     "NHWC",    "NCL",      "tanh",
                                  "float32",   "int64",    "ij",      "bad",      ""};
    return Arg::ofString(words[between(0, 19)]);
  }

  Arg index() {
    auto one = [&]() -> Arg {
      switch (between(0, 3)) {
      case 0:
        return intArg();
      case 1:
        return Arg::none();
      case 2:
        return Arg::slice(chance(50) ? intArg() : Arg::none(), chance(50) ? intArg() : Arg::none(),
                          chance(70) ? Arg::none() : Arg::ofInt(between(1, 2)));
      default:
        return Arg::ellipsis();
      }
    };
    if (chance(50))
      return one();
    std::vector<Arg> items;
    for (int64_t i = between(1, 3); i > 0; --i)
      items.push_back(one());
    return Arg::tuple(items);
  }

  /// A value for `p`: mostly of its type, sometimes None or of another type.
  Arg value(const Param &p) {
    if (p.optional && chance(25))
      return Arg::none();
    if (chance(5))
      return chance(50) ? Arg::ofTensor(tensor()) : Arg::ofFloat(1.5);
    switch (p.type) {
    case ParamType::Tensor:
      return Arg::ofTensor(tensor());
    case ParamType::TensorList: {
      std::vector<Arg> items;
      TensorMeta shared = tensor();
      for (int64_t i = between(1, 3); i > 0; --i)
        items.push_back(Arg::ofTensor(chance(70) ? shared : tensor()));
      return Arg::list(items);
    }
    case ParamType::Scalar:
      return chance(40)   ? intArg()
             : chance(50) ? Arg::ofFloat(between(-4, 4) / 2.0)
                          : Arg::ofBool(chance(50));
    case ParamType::Int:
      return intArg();
    case ParamType::Float:
      return Arg::ofFloat(between(-4, 8) / 4.0);
    case ParamType::Bool:
      return Arg::ofBool(chance(50));
    case ParamType::IntList:
      return intList(p.acceptsSingle);
    case ParamType::FloatList:
      return floatList(p.acceptsSingle);
    case ParamType::DataType:
      return chance(80) ? Arg::ofDType(chance(50) ? DType::Float32 : DType::Int64) : string();
    case ParamType::String:
      return string();
    case ParamType::Index:
      return index();
    }
    return Arg::none();
  }

  /// A call of `sig`: the required parameters and some optional ones, positional or keyword.
  CallArgs call(const Signature &sig) {
    CallArgs args;
    bool keywords = false;
    for (const Param &p : sig.params) {
      bool give = p.required() || chance(40);
      if (!give) {
        keywords = true; // a skipped parameter: the rest go by keyword
        continue;
      }
      if (p.variadic) {
        for (int64_t i = between(1, 3); i > 0; --i)
          args.positional.push_back(Arg::ofTensor(tensor()));
        continue;
      }
      keywords |= p.keywordOnly || chance(20);
      if (keywords)
        args.keywords.push_back({p.name, value(p)});
      else
        args.positional.push_back(value(p));
    }
    return args;
  }

private:
  std::mt19937 rng_;
};

std::string describe(const CallArgs &args) {
  std::ostringstream s;
  for (const Arg &a : args.positional)
    s << a.repr() << ", ";
  for (const auto &[k, v] : args.keywords)
    s << k << "=" << v.repr() << ", ";
  return s.str();
}

/// Runs `rounds` generated calls of `entry` in a child process (a crash there is reported,
/// not fatal): the defects, each with its call, and the counts of calls lowered and refused.
struct EntryOutcome {
  std::vector<std::string> defects;
  int lowered = 0, refused = 0;
};

EntryOutcome fuzzEntry(const OpTable &table, const OpEntry &entry, uint32_t seed, int rounds) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) { // the child: one line per call, then one per outcome
    close(fds[0]);
    auto say = [&](const std::string &line) {
      std::string l = line + "\n";
      (void)!write(fds[1], l.data(), l.size());
    };
    ArgGenerator gen(seed);
    for (const Signature &sig : entry.signatures)
      for (int round = 0; round < rounds; ++round) {
        CallArgs args = gen.call(sig);
        std::string call = entry.name + "(" + describe(args) + ")";
        say("CALL " + call);
        try {
          LoweredCall lowered = table.lower(entry.name, args);
          int values = static_cast<int>(lowered.graph.inputs.size() + lowered.graph.ops.size());
          bool dangling = lowered.outputs().size() != lowered.graph.outputs.size();
          for (int out : lowered.graph.outputs)
            dangling |= out < 0 || out >= values;
          say(dangling ? "DEFECT " + call + ": an output that is not a value of the graph"
                       : "LOWERED");
        } catch (const sotc::CodedError &) {
          say("REFUSED");
        } catch (const std::exception &e) {
          say("DEFECT " + call + ": not a coded error: " + e.what());
        }
      }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EntryOutcome out;
  std::string line, last;
  for (std::istringstream lines(text); std::getline(lines, line);) {
    if (line.rfind("CALL ", 0) == 0)
      last = line.substr(5);
    else if (line == "LOWERED")
      ++out.lowered;
    else if (line == "REFUSED")
      ++out.refused;
    else if (line.rfind("DEFECT ", 0) == 0)
      out.defects.push_back(line.substr(7));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    out.defects.push_back(last + ": crashed (" +
                          (WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exit status") +
                          ")");
  return out;
}

} // namespace

TEST_CASE("generated calls of every entry lower or fail with a coded error", "[fuzz]") {
  const OpTable &table = OpTable::get();
  int lowered = 0, refused = 0;
  std::string defects;
  uint32_t seed = 20261202;
  for (const auto &entry : table.entries()) {
    EntryOutcome o = fuzzEntry(table, *entry, seed++, 40);
    lowered += o.lowered;
    refused += o.refused;
    if (!o.defects.empty()) // the first of each entry
      defects += "\n  " + o.defects.front();
  }
  INFO("calls that failed with no coded error:" << defects);
  CHECK(defects.empty());
  // The generator reaches the lowerings, not only argument checks.
  CHECK(lowered > 5000);
  CHECK(refused > 0);
}
