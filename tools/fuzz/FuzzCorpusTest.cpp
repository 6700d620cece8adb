// The libFuzzer corpus (tools/fuzz/corpus) as a regression suite: every input is either
// rejected with a CodedError or validates, prints and translates, as the fuzz target requires;
// every translation then goes through the whole pipeline (sir, decompose, fuse, MapExpr,
// schedule), where a failure must be a diagnostic, never a crash.
#include "compiler/frontend/BytecodeDump.h"
#include "compiler/frontend/SirEmitter.h"
#include "compiler/frontend/TraceReader.h"
#include "compiler/frontend/Translation.h"
#include "compiler/pipelines/Pipelines.h"
#include "dialects/mapexpr/IR/MapExprDialect.h"

#include "compiler/support/Diagnostics.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <catch2/catch.hpp>

#include <dirent.h>
#include <fstream>
#include <map>
#include <sstream>

using namespace sotc::frontend;

namespace {
/// Runs the passes after the frontend (GPU schedules); returns whether they succeeded.
bool compileDownstream(const sotc::frontend::Translation &t, mlir::MLIRContext &ctx) {
  auto module = sotc::frontend::emitSir(t, ctx);
  mlir::PassManager pm(&ctx);
  sotc::pipelines::buildPipeline(pm, {}, sotc::pipelines::Phase::Scheduled);
  if (mlir::failed(pm.run(*module)))
    return false;
  module->walk([](sotc::mapexpr::KernelOp k) { (void)sotc::mapexpr::kernelFromIR(k).str(true); });
  return true;
}

/// The CPU pipeline down to loops, which must verify whenever it succeeds.
bool compileToLoops(const sotc::frontend::Translation &t, mlir::MLIRContext &ctx) {
  auto module = sotc::frontend::emitSir(t, ctx);
  mlir::PassManager pm(&ctx);
  sotc::pipelines::PipelineOptions cpu;
  cpu.target = sotc::pipelines::Target::Cpu;
  sotc::pipelines::buildPipeline(pm, cpu, sotc::pipelines::Phase::Loops);
  return mlir::succeeded(pm.run(*module));
}
} // namespace

TEST_CASE("every fuzz corpus input is handled", "[reader][fuzz]") {
  mlir::DialectRegistry registry;
  sotc::pipelines::registerAllDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  int translated = 0, compiled = 0, loops = 0;
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler quiet(&ctx, [&](mlir::Diagnostic &d) {
    diagnostics = d.str(); // a pass may reject a program, with a diagnostic
    return mlir::success();
  });
  DIR *dir = opendir("tools/fuzz/corpus");
  REQUIRE(dir);
  int inputs = 0, accepted = 0;
  std::map<unsigned, int> acceptedByMinor; // every CPython version's decoder is exercised
  while (dirent *entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name[0] == '.')
      continue;
    std::ifstream in("tools/fuzz/corpus/" + name, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    std::string data = bytes.str();
    if (data.empty())
      continue;
    ++inputs;
    INFO(name);
    // Same convention as TraceFuzzer.cpp: the first byte picks the encoding.
    TraceEncoding encoding = (data[0] & 1) ? TraceEncoding::Text : TraceEncoding::Binary;
    try {
      sotc::trace::Trace trace = parseTrace(std::string_view(data).substr(1), encoding, name);
      validateTrace(trace, name);
      std::ostringstream out;
      dumpBytecode(trace, out);
      ++accepted;
      ++acceptedByMinor[trace.python().minor()];
      sotc::frontend::Translation t = translate(trace);
      ++translated;
      bool ok = compileDownstream(t, ctx);
      compiled += ok;
      if (!ok)
        WARN(name << ": " << diagnostics);
      // What schedules for the GPU lowers to CPU loops too (the pass manager verifies), or
      // is refused with the coded "not lowered yet" error (complex element types, ...).
      if (ok) {
        diagnostics.clear();
        bool lowered = compileToLoops(t, ctx);
        INFO(diagnostics);
        CHECK((lowered || diagnostics.rfind("E4002: ", 0) == 0));
        loops += lowered;
      }
    } catch (const sotc::CodedError &) {
    }
  }
  closedir(dir);
  CHECK(inputs > 100);
  CHECK(accepted > 0); // the seeds are valid traces
  for (unsigned minor : {11u, 12u, 13u}) {
    INFO("CPython 3." << minor);
    CHECK(acceptedByMinor[minor] > 0);
  }
  CHECK(compiled > 0);
  WARN(inputs << " inputs, " << accepted << " valid, " << translated << " translated, " << compiled
              << " compiled to scheduled kernels, " << loops << " to CPU loops");
}
