// Kernel numerics on the CPU path: for every testdata program that translates, every fusion
// group is lowered for the CPU exactly as `sotc compile --target cpu` lowers it (loops, the
// kernel ABI, the LLVM dialect), run by MLIR's JIT on random inputs through that ABI, and
// compared element by element with the operator library's reference evaluator (ops::ref,
// double precision) running the same group's primitives.
#include "compiler/driver/Driver.h"
#include "compiler/ops/unittests/Reference.h"
#include "compiler/pipelines/Pipelines.h"
#include "compiler/support/Diagnostics.h"
#include "dialects/mapexpr/IR/MapExprDialect.h"
#include "dialects/sir/IR/SirDialect.h"
#include "dialects/sir/IR/SirTypes.h"

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
  int kernels = 0, programs = 0;
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
    // The reference: every group's primitives on random inputs.
    struct Case {
      std::vector<ops::ref::Buffer> inputs, expected;
      ops::PrimGraph graph;
    };
    std::vector<Case> cases;
    module->walk([&](sir::GroupOp group) {
      Case c;
      c.graph = graphOf(group);
      for (const ops::TensorMeta &meta : c.graph.inputs)
        c.inputs.push_back(ops::ref::random(meta, rng, 0.25, 2)); // log, sqrt, pow: positive
      c.expected = ops::ref::evaluate(c.graph, c.inputs);
      cases.push_back(std::move(c));
    });
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
      for (size_t o = 0; o < outs.size(); ++o) {
        const ops::ref::Buffer &want = c.expected[o];
        for (size_t i = 0; i < want.data.size(); ++i) {
          double got = outs[o].get(i), expected = want.data[i];
          INFO("output " << o << " element " << i << ": " << got << " vs " << expected);
          if (std::isnan(expected))
            CHECK(std::isnan(got));
          else if (outs[o].dtype == ops::DType::Float32 || outs[o].dtype == ops::DType::Float64)
            // f32 rounding through a chain of transcendental functions: 1e-5 relative.
            CHECK(std::fabs(got - expected) <= 1e-5 * std::max(1.0, std::fabs(expected)));
          else
            CHECK(got == expected);
        }
      }
    }
  }
  CHECK(programs >= 30);
  CHECK(kernels >= 30);
  WARN(programs << " programs, " << kernels << " kernels checked");
}
