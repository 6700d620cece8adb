#include "compiler/frontend/SirEmitter.h"

#include "compiler/support/MlirDiagnostics.h"

#include "dialects/sir/IR/SirDialect.h"
#include "dialects/sir/IR/SirTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

#include <map>
#include <set>
#include <stdexcept>

namespace sotc::frontend {
namespace {

mlir::RankedTensorType tensorType(mlir::MLIRContext &ctx, const ops::TensorMeta &meta) {
  return sir::tensorType(&ctx, meta);
}

class Emitter {
public:
  Emitter(mlir::MLIRContext &ctx, std::set<std::string> state)
      : ctx_(ctx), b_(&ctx), state_(std::move(state)) {}

  /// A Python value as a call-argument attribute; tensors become #sir.arg<N>.
  mlir::Attribute arg(const VarPtr &v, llvm::SmallVectorImpl<mlir::Value> &operands) {
    using K = Variable::Kind;
    switch (v->kind) {
    case K::Tensor:
      operands.push_back(values_.at(v.get()));
      return sir::OperandRefAttr::get(&ctx_, operands.size() - 1);
    case K::Constant:
      switch (v->constant.kind) {
      case PyConst::Kind::None:
        return sir::NoneAttr::get(&ctx_);
      case PyConst::Kind::Ellipsis:
        return sir::EllipsisAttr::get(&ctx_);
      case PyConst::Kind::Bool:
        return b_.getBoolAttr(v->constant.boolValue);
      case PyConst::Kind::Int: // a dynamic size as the types write it
        if (ops::isSymbolSize(v->constant.intValue))
          return sir::SizeAttr::get(&ctx_,
                                    ops::productOf(ops::dimOfSymbolSize(v->constant.intValue)));
        return b_.getI64IntegerAttr(v->constant.intValue);
      case PyConst::Kind::Float:
        return b_.getF64FloatAttr(v->constant.floatValue);
      case PyConst::Kind::Str:
        return b_.getStringAttr(v->constant.text);
      default:
        return sir::RefAttr::get(&ctx_, v->constant.repr());
      }
    case K::Tuple:
    case K::List: {
      llvm::SmallVector<mlir::Attribute> items;
      for (const VarPtr &i : v->items)
        items.push_back(arg(i, operands));
      mlir::ArrayAttr array = b_.getArrayAttr(items);
      if (v->kind == K::List)
        return array;
      return sir::TupleAttr::get(&ctx_, array);
    }
    case K::Slice:
      return sir::SliceAttr::get(&ctx_, arg(v->items[0], operands), arg(v->items[1], operands),
                                 arg(v->items[2], operands));
    default:
      return sir::RefAttr::get(&ctx_, v->repr());
    }
  }

  void subgraph(mlir::ModuleOp module, const Segment &seg) {
    const StatementIR &ir = seg.sir;
    llvm::SmallVector<mlir::Type> inputs, outputs;
    for (const VarPtr &v : ir.inputs)
      inputs.push_back(tensorType(ctx_, v->meta));
    for (const VarPtr &v : ir.outputs)
      outputs.push_back(tensorType(ctx_, v->meta));
    mlir::OpBuilder ob(&ctx_);
    ob.setInsertionPointToEnd(module.getBody());
    auto op = sir::SubgraphOp::create(ob, ob.getUnknownLoc(), ir.name,
                                      ob.getFunctionType(inputs, outputs),
                                      /*sym_visibility=*/nullptr, /*arg_attrs=*/nullptr,
                                      /*res_attrs=*/nullptr);
    // stop_gradient travels as an argument attribute.
    llvm::SmallVector<mlir::Attribute> argAttrs;
    // Names for readable kernels: an argument of the entry function keeps its Python name.
    for (const VarPtr &v : ir.inputs) {
      llvm::SmallVector<mlir::NamedAttribute> attrs = {
          ob.getNamedAttr("sir.name",
                          ob.getStringAttr(v->parameter.empty() ? v->tensorName : v->parameter)),
          ob.getNamedAttr("sir.stop_gradient", ob.getBoolAttr(v->stopGradient))};
      if (!v->weight.empty())
        attrs.push_back(ob.getNamedAttr(sir::kWeightAttr, ob.getUnitAttr()));
      if (state_.count(v->weight))
        attrs.push_back(ob.getNamedAttr(sir::kStateAttr, ob.getUnitAttr()));
      argAttrs.push_back(ob.getDictionaryAttr(attrs));
    }
    op.setArgAttrsAttr(ob.getArrayAttr(argAttrs));
    mlir::Block *block = ob.createBlock(&op.getBody());
    values_.clear();
    for (const VarPtr &v : ir.inputs)
      values_[v.get()] = block->addArgument(tensorType(ctx_, v->meta), ob.getUnknownLoc());
    for (const Statement &st : ir.statements) {
      llvm::SmallVector<mlir::Value> operands;
      llvm::SmallVector<mlir::Attribute> args, kwargs;
      for (const VarPtr &a : st.args)
        args.push_back(arg(a, operands));
      for (const auto &[name, value] : st.kwargs)
        kwargs.push_back(sir::KeywordAttr::get(&ctx_, name, arg(value, operands)));
      llvm::SmallVector<mlir::Type> results;
      for (const VarPtr &o : st.outputs)
        results.push_back(tensorType(ctx_, o->meta));
      mlir::Location loc = mlir::FileLineColLoc::get(&ctx_, st.loc.file, st.loc.line, 0);
      auto call = sir::CallOp::create(ob, loc, results, ob.getStringAttr(st.kind),
                                      ob.getStringAttr(st.callee), ob.getStringAttr(st.opName),
                                      ob.getArrayAttr(args), ob.getArrayAttr(kwargs), operands,
                                      /*names=*/nullptr);
      llvm::SmallVector<mlir::Attribute> names;
      for (size_t i = 0; i < st.outputs.size(); ++i) {
        values_[st.outputs[i].get()] = call.getResult(i);
        names.push_back(ob.getStringAttr(st.outputs[i]->tensorName));
      }
      call.setNamesAttr(ob.getArrayAttr(names));
    }
    llvm::SmallVector<mlir::Value> results;
    for (const VarPtr &v : ir.outputs)
      results.push_back(values_.at(v.get()));
    sir::OutputOp::create(ob, ob.getUnknownLoc(), results);
  }

private:
  mlir::MLIRContext &ctx_;
  mlir::Builder b_;
  std::set<std::string> state_; // the weights the program writes in place
  std::map<const Variable *, mlir::Value> values_;
};

} // namespace

mlir::OwningOpRef<mlir::ModuleOp> emitSir(const Translation &translation,
                                          mlir::MLIRContext &context) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  if (!translation.derivedSizes.empty()) {
    std::vector<mlir::Attribute> sizes;
    for (const ops::SizeOffset &d : translation.derivedSizes)
      sizes.push_back(mlir::StringAttr::get(&context, d.definition()));
    (*module)->setAttr(sir::kDerivedSizesAttr, mlir::ArrayAttr::get(&context, sizes));
  }
  Emitter emitter(context, translation.stateWeights());
  for (const Segment &seg : translation.segments)
    emitter.subgraph(*module, seg);
  // The translator only records what the operator table accepted; sir that does not verify
  // is a frontend bug, reported as one coded line with the Python line, not a crash.
  CodedDiagnosticCapture capture(&context, DiagCode::CliPassFailed);
  if (mlir::failed(mlir::verify(*module)))
    throw CodedError(DiagCode::CliPassFailed,
                     "internal error: the emitted sir does not verify: " +
                         std::string(capture.error() ? capture.error()->what() : "?"));
  return module;
}

} // namespace sotc::frontend
