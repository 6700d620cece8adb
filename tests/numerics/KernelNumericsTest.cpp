// Kernel numerics on the CPU path: for every testdata program that translates, every fusion
// group is lowered for the CPU exactly as `sotc compile --target cpu` lowers it (loops, the
// kernel ABI, the LLVM dialect), run by MLIR's JIT on random inputs through that ABI, and
// compared element by element with the operator library's reference evaluator (ops::ref,
// double precision) running the same group's primitives. Every GEMM step runs through the
// CPU runtime's OpenBLAS call with the manifest's plan and is compared with ops::ref's naive
// matmul (plus the bias row).
#include "compiler/conversion/SirToMapExpr/BuildKernel.h"
#include "compiler/conversion/SirToMapExpr/Passes.h"
#include "compiler/driver/Driver.h"
#include "compiler/ops/Lowerings.h"
#include "compiler/ops/unittests/Reference.h"
#include "compiler/pipelines/Pipelines.h"
#include "compiler/support/Diagnostics.h"
#include "dialects/mapexpr/IR/MapExprDialect.h"
#include "dialects/sir/IR/SirDialect.h"
#include "dialects/sir/IR/SirTypes.h"
#include "runtime/src/cpu/Gemm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <dirent.h>

using namespace sotc;

namespace {

/// A fusion group as the reference evaluator's graph: its block arguments are the inputs.
ops::PrimGraph graphOf(sir::GroupOp group) {
  ops::PrimGraph g;
  std::map<const void *, int> ids;
  mlir::Block &body = group.getBody().front();
  for (mlir::BlockArgument arg : body.getArguments()) {
    ids[arg.getAsOpaquePointer()] = static_cast<int>(g.inputs.size());
    g.inputs.push_back(*sir::metaOf(mlir::cast<mlir::RankedTensorType>(arg.getType())));
  }
  for (mlir::Operation &op : body.without_terminator()) {
    auto prim = mlir::cast<sir::PrimOp>(op);
    ops::PrimOp p;
    p.prim = sir::toOpsPrim(prim.getPrim());
    for (mlir::Value v : prim->getOperands())
      p.operands.push_back(ids.at(v.getAsOpaquePointer()));
    p.attrs = sir::primAttrsOf(prim);
    p.result = *sir::metaOf(mlir::cast<mlir::RankedTensorType>(prim.getType()));
    ids[prim.getResult().getAsOpaquePointer()] = static_cast<int>(g.inputs.size() + g.ops.size());
    g.ops.push_back(p);
  }
  for (mlir::Value v : body.getTerminator()->getOperands())
    g.outputs.push_back(ids.at(v.getAsOpaquePointer()));
  return g;
}

ops::TensorMeta metaOf(mlir::Value v) {
  return *sir::metaOf(mlir::cast<mlir::RankedTensorType>(v.getType()));
}

/// What a GEMM step computes, as primitives: matmul, the bias row added to every row, then
/// the activation.
ops::PrimGraph graphOf(mapexpr::GemmOp gemm) {
  ops::PrimBuilder b("gemm");
  int x = b.input(metaOf(gemm.getA())), y = b.input(metaOf(gemm.getB()));
  int bias = gemm.getBias() ? b.input(metaOf(gemm.getBias())) : -1; // inputs come first
  int out = b.matmul(x, y, gemm.getTransposeA(), gemm.getTransposeB());
  if (bias >= 0)
    out = b.binary(ops::Prim::Add, out, bias);
  if (gemm.getActivation() == "relu")
    out = b.binary(ops::Prim::Max, out, b.fill(0, {}, metaOf(gemm.getResult()).dtype));
  if (gemm.getActivation() == "gelu_tanh")
    out = ops::lowering::gelu(b, out, /*tanhForm=*/true);
  b.output(out);
  return b.take();
}

/// The runtime's step for a GEMM op, as the manifest describes it.
runtime::GemmPlan stepOf(mapexpr::GemmOp gemm) {
  mapexpr::GemmPlan p = gemm.getPlan();
  runtime::GemmPlan s;
  s.type = metaOf(gemm.getResult()).dtype == ops::DType::Float64
               ? runtime::GemmPlan::Type::F64
               : runtime::GemmPlan::Type::F32;
  s.m = p.m, s.n = p.n, s.k = p.k, s.transposeA = p.transposeA, s.transposeB = p.transposeB;
  s.lda = p.lda, s.ldb = p.ldb, s.ldc = p.ldc, s.beta = gemm.getBias() ? 1 : 0;
  s.bias = static_cast<bool>(gemm.getBias());
  s.batch = p.batch, s.strideA = p.strideA, s.strideB = p.strideB, s.strideC = p.strideC;
  return s;
}

/// Element storage the JIT-compiled kernel reads and writes (bool is one byte).
struct Memory {
  ops::DType dtype;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;

  static size_t width(ops::DType d) {
    switch (d) {
    case ops::DType::Float64:
    case ops::DType::Int64:
      return 8;
    case ops::DType::Float32:
    case ops::DType::Int32:
      return 4;
    default:
      return 1; // Bool
    }
  }
  static bool supported(ops::DType d) {
    return d == ops::DType::Float32 || d == ops::DType::Float64 || d == ops::DType::Int32 ||
           d == ops::DType::Int64 || d == ops::DType::Bool;
  }

  explicit Memory(const ops::TensorMeta &meta) : dtype(meta.dtype), shape(meta.shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    bytes.assign(static_cast<size_t>(n) * width(dtype) + 64, 0);
  }

  void write(const ops::ref::Buffer &b) {
    for (size_t i = 0; i < b.data.size(); ++i)
      set(i, b.data[i]);
  }
  void set(size_t i, double v) {
    unsigned char *p = bytes.data() + i * width(dtype);
    switch (dtype) {
    case ops::DType::Float64:
      std::memcpy(p, &v, 8);
      break;
    case ops::DType::Float32: {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case ops::DType::Int64: {
      int64_t x = static_cast<int64_t>(v);
      std::memcpy(p, &x, 8);
      break;
    }
    case ops::DType::Int32: {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(p, &x, 4);
      break;
    }
    default:
      *p = v != 0;
    }
  }
  double get(size_t i) const {
    const unsigned char *p = bytes.data() + i * width(dtype);
    switch (dtype) {
    case ops::DType::Float64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case ops::DType::Float32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case ops::DType::Int64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case ops::DType::Int32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default:
      return *p & 1;
    }
  }
};

/// Every element of `got` against the reference: NaN where it is NaN, floats within
/// `tolerance` relative (absolute below 1), integers and bools exactly.
void compare(const Memory &got, const ops::ref::Buffer &want, double tolerance) {
  bool floating = got.dtype == ops::DType::Float32 || got.dtype == ops::DType::Float64;
  for (size_t i = 0; i < want.data.size(); ++i) {
    double value = got.get(i), expected = want.data[i];
    INFO("element " << i << ": " << value << " vs " << expected);
    if (std::isnan(expected))
      CHECK(std::isnan(value));
    else if (floating)
      CHECK(std::fabs(value - expected) <= tolerance * std::max(1.0, std::fabs(expected)));
    else
      CHECK(value == expected);
  }
}

std::vector<std::string> traces() {
  std::vector<std::string> out;
  DIR *dir = opendir("testdata/traces");
  REQUIRE(dir);
  while (dirent *e = readdir(dir)) {
    std::string name = e->d_name;
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".pb") == 0)
      out.push_back("testdata/traces/" + name);
  }
  closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

TEST_CASE("every CPU kernel of every testdata program computes what its primitives mean",
          "[numerics][cpu]") {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  pipelines::PipelineOptions cpu;
  cpu.target = pipelines::Target::Cpu;
  std::mt19937 rng(20261129);
  int kernels = 0, programs = 0, gemmSteps = 0;
  for (const std::string &path : traces()) {
    INFO(path);
    auto context = driver::createContext();
    mlir::registerBuiltinDialectTranslation(*context);
    mlir::registerLLVMDialectTranslation(*context);
    mlir::OwningOpRef<mlir::ModuleOp> module;
    try {
      module = driver::compileTrace(*context, path, cpu, pipelines::Phase::Fused);
    } catch (const CodedError &) {
      continue; // the programs whose documented errors the frontend tests pin
    }
    ++programs;
    // Convolution, index_copy and matmul groups the library or the runtime runs become steps
    // first, as the pipeline does next (convolution and index_copy steps are not kernels: the
    // runtime's tests check them).
    mlir::PassManager gemmPm(context.get());
    gemmPm.nest<sir::SubgraphOp>().addPass(createConvertConvToStep());
    gemmPm.nest<sir::SubgraphOp>().addPass(createConvertIndexCopyToStep());
    gemmPm.nest<sir::SubgraphOp>().addPass(createConvertMatmulToGemm());
    REQUIRE(mlir::succeeded(gemmPm.run(*module)));
    // The reference: every group's (and GEMM step's) primitives on random inputs.
    struct Case {
      std::vector<ops::ref::Buffer> inputs, expected;
      ops::PrimGraph graph;
    };
    auto makeCase = [&](ops::PrimGraph graph) {
      Case c;
      c.graph = std::move(graph);
      for (const ops::TensorMeta &meta : c.graph.inputs)
        c.inputs.push_back(ops::ref::random(meta, rng, 0.25, 2)); // log, sqrt, pow: positive
      c.expected = ops::ref::evaluate(c.graph, c.inputs);
      return c;
    };
    std::vector<Case> cases;
    // Each group as its kernel reads it: building the kernel first gives a value the kernel
    // reads at two places its own copy (a second input: cat((x, x))), as the pass does.
    module->walk([&](sir::GroupOp group) {
      (void)mapexpr::buildKernel(group);
      cases.push_back(makeCase(graphOf(group)));
    });
    std::vector<std::pair<runtime::GemmPlan, Case>> gemms;
    module->walk(
        [&](mapexpr::GemmOp gemm) { gemms.emplace_back(stepOf(gemm), makeCase(graphOf(gemm))); });
    // The kernels: the rest of the CPU pipeline, then the JIT. The grid size of each kernel
    // is read off its loops (the runtime reads it from the manifest).
    mlir::PassManager pm(context.get());
    pipelines::buildPipeline(pm, cpu, pipelines::Phase::Loops, pipelines::Phase::Fused);
    REQUIRE(mlir::succeeded(pm.run(*module)));
    std::map<std::string, int64_t> blocks;
    module->walk([&](mlir::scf::ForallOp grid) {
      auto func = grid->getParentOfType<mlir::func::FuncOp>();
      blocks[func.getSymName().str()] = grid.getStaticUpperBound()[0];
    });
    std::vector<std::string> launched;
    llvm::SmallVector<mlir::Operation *> plans;
    for (auto subgraph : module->getOps<sir::SubgraphOp>()) {
      subgraph.walk([&](mapexpr::LaunchOp l) { launched.push_back(l.getKernel().str()); });
      plans.push_back(subgraph);
    }
    for (mlir::Operation *op : plans) // the host plan is not the JIT's business
      op->erase();
    mlir::PassManager llvmPm(context.get());
    pipelines::buildPipeline(llvmPm, cpu, pipelines::Phase::Llvm, pipelines::Phase::Loops);
    REQUIRE(mlir::succeeded(llvmPm.run(*module)));
    auto engine = mlir::ExecutionEngine::create(*module);
    REQUIRE(static_cast<bool>(engine));
    REQUIRE(launched.size() == cases.size());
    for (size_t k = 0; k < cases.size(); ++k) {
      const Case &c = cases[k];
      INFO("kernel " << launched[k]);
      bool supported = true;
      for (const ops::TensorMeta &m : c.graph.inputs)
        supported &= Memory::supported(m.dtype);
      for (int o : c.graph.outputs)
        supported &= Memory::supported(c.graph.meta(o).dtype);
      if (!supported)
        continue; // float16 and friends: no host arithmetic here to compare in
      std::vector<Memory> outs, ins;
      for (int o : c.graph.outputs)
        outs.emplace_back(c.graph.meta(o));
      for (size_t i = 0; i < c.inputs.size(); ++i) {
        ins.emplace_back(c.graph.inputs[i]);
        ins.back().write(c.inputs[i]);
      }
      // The CPU ABI: the grid range [0, blocks), then the outputs' and inputs' data.
      int64_t begin = 0, end = blocks.at(launched[k]);
      std::vector<void *> pointers, args = {&begin, &end};
      for (Memory &m : outs)
        pointers.push_back(m.bytes.data());
      for (Memory &m : ins)
        pointers.push_back(m.bytes.data());
      for (void *&p : pointers)
        args.push_back(&p);
      llvm::Error error = (*engine)->invokePacked(launched[k], args);
      REQUIRE(!error);
      ++kernels;
      for (size_t o = 0; o < outs.size(); ++o)
        // f32 rounding through a chain of transcendental functions: 1e-5 relative.
        compare(outs[o], c.expected[o], 1e-5);
    }
    // GEMM steps: the runtime's OpenBLAS call on the same kind of inputs.
    for (auto &[step, c] : gemms) {
      INFO("GEMM step of " << step.m << "x" << step.k << " by " << step.k << "x" << step.n);
      REQUIRE(runtime::validate(step).empty());
      std::vector<Memory> ins;
      for (size_t i = 0; i < c.inputs.size(); ++i) {
        ins.emplace_back(c.graph.inputs[i]);
        ins.back().write(c.inputs[i]);
      }
      Memory out(c.graph.meta(c.graph.outputs[0]));
      runtime::cpu::runGemm(step, out.bytes.data(), ins[0].bytes.data(), ins[1].bytes.data(),
                            ins.size() > 2 ? ins[2].bytes.data() : nullptr);
      ++gemmSteps;
      // A k-term dot product of positive terms in f32: k * 2^-24 relative, at worst.
      compare(out, c.expected[0], std::max(1e-6, step.k * std::ldexp(1.0, -24)));
    }
  }
  CHECK(programs >= 30);
  CHECK(kernels >= 30);
  CHECK(gemmSteps >= 4);
  WARN(programs << " programs, " << kernels << " kernels and " << gemmSteps
                << " GEMM steps checked");
}
