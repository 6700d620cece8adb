//===- TraceFuzzer.cpp - libFuzzer target for the trace reader ---------------------------===//
//
// Any byte string, read as a binary or (first byte odd) text trace, must either be rejected
// with a CodedError or validate, print with `sotc dump --bytecode`, translate (or fail to
// translate with a CodedError), and go through decompose, fuse, MapExpr and schedule, and for
// the CPU on to loops and the LLVM dialect (where a failure is a diagnostic), without crashing.
// Built and run by tools/fuzz/run.sh with clang-22's -fsanitize=fuzzer,address.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/frontend/BytecodeDump.h"
#include "compiler/frontend/SirEmitter.h"
#include "compiler/frontend/TraceReader.h"
#include "compiler/frontend/Translation.h"
#include "compiler/pipelines/Pipelines.h"
#include "dialects/mapexpr/IR/MapExprDialect.h"

#include "compiler/support/Diagnostics.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <cstddef>
#include <cstdint>
#include <sstream>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  using namespace sotc::frontend;
  TraceEncoding encoding = (data[0] & 1) ? TraceEncoding::Text : TraceEncoding::Binary;
  std::string_view bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  try {
    sotc::trace::Trace trace = parseTrace(bytes, encoding, "fuzz");
    validateTrace(trace, "fuzz");
    std::ostringstream out;
    dumpBytecode(trace, out);
    Translation t = translate(trace);
    static mlir::MLIRContext *ctx = [] {
      mlir::DialectRegistry registry;
      sotc::pipelines::registerAllDialects(registry);
      auto *c = new mlir::MLIRContext(registry);
      c->loadAllAvailableDialects();
      c->getDiagEngine().registerHandler([](mlir::Diagnostic &) { return mlir::success(); });
      return c;
    }();
    auto module = emitSir(t, *ctx);
    mlir::PassManager pm(ctx);
    sotc::pipelines::buildPipeline(pm, {}, sotc::pipelines::Phase::Scheduled);
    if (mlir::succeeded(pm.run(*module)))
      module->walk(
          [](sotc::mapexpr::KernelOp k) { (void)sotc::mapexpr::kernelFromIR(k).str(true); });
    // The CPU pipeline down to the LLVM dialect: a failure must be a diagnostic.
    auto cpuModule = emitSir(t, *ctx);
    mlir::PassManager cpuPm(ctx);
    sotc::pipelines::PipelineOptions cpu;
    cpu.target = sotc::pipelines::Target::Cpu;
    sotc::pipelines::buildPipeline(cpuPm, cpu, sotc::pipelines::Phase::Llvm);
    (void)cpuPm.run(*cpuModule);
  } catch (const sotc::CodedError &) {
  }
  return 0;
}
