#include "dialects/sched/IR/SchedDialect.h"

#include "compiler/support/Expected.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace sotc::sched;

#include "dialects/sched/IR/SchedDialect.cpp.inc"
#include "dialects/sched/IR/SchedEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/sched/IR/SchedAttrs.cpp.inc"

void SchedDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/sched/IR/SchedAttrs.cpp.inc"
      >();
}

namespace {
/// The stand-ins a sched.stand_ins value names, if it names some.
std::optional<SizeStandIns> standInsIn(Attribute value) {
  auto values = dyn_cast_or_null<DenseI64ArrayAttr>(value);
  if (!values)
    return std::nullopt;
  return SizeStandIns::of(
      std::vector<int64_t>(values.asArrayRef().begin(), values.asArrayRef().end()));
}
} // namespace

LogicalResult SchedDialect::verifyOperationAttribute(Operation *op, NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  if (name == kTargetAttrName) {
    if (!isa<TargetAttr>(attribute.getValue()))
      return op->emitError() << kTargetAttrName << " must be a #sched.target";
    if (!isa<ModuleOp>(op))
      return op->emitError() << kTargetAttrName << " belongs on a module";
    return success();
  }
  if (name == kStandInsAttrName) {
    if (!standInsIn(attribute.getValue()))
      return op->emitError() << kStandInsAttrName << " must be " << kSizeSymbols
                             << " increasing primes from 4099 (array<i64: ...>)";
    if (!isa<ModuleOp>(op))
      return op->emitError() << kStandInsAttrName << " belongs on a module";
    return success();
  }
  if (name != kGridAttrName && name != kSizesAttrName && name != kDynamicSharedAttrName)
    return success();
  if (!isa<FunctionOpInterface>(op))
    return op->emitError() << name << " belongs on a kernel function";
  if (name != kSizesAttrName)
    return isa<SizeAttr>(attribute.getValue())
               ? success()
               : op->emitError() << name << " must be a #sched.size";
  auto sizes = dyn_cast<DenseI64ArrayAttr>(attribute.getValue());
  ArrayRef<int64_t> list = sizes ? sizes.asArrayRef() : ArrayRef<int64_t>();
  bool increasing = !list.empty() && list.front() >= 0 && list.back() < kSizeSymbols;
  for (size_t i = 1; i < list.size(); ++i)
    increasing &= list[i - 1] < list[i];
  if (!increasing)
    return op->emitError() << name << " must list sizes 0 to " << kSizeSymbols - 1
                           << " in increasing order (array<i64: 0, 1>)";
  return success();
}

namespace sotc::sched {

std::optional<Target> moduleTarget(Operation *op) {
  auto module = isa<ModuleOp>(op) ? cast<ModuleOp>(op) : op->getParentOfType<ModuleOp>();
  if (!module)
    return std::nullopt;
  if (auto target = module->getAttrOfType<TargetAttr>(kTargetAttrName))
    return target.getTarget();
  return std::nullopt;
}

SizeStandIns standInsOf(Operation *op) {
  auto module = isa<ModuleOp>(op) ? cast<ModuleOp>(op) : op->getParentOfType<ModuleOp>();
  std::optional<SizeStandIns> named =
      module ? standInsIn(module->getAttr(kStandInsAttrName)) : std::nullopt;
  return named.value_or(SizeStandIns());
}

void setStandIns(Operation *module, const SizeStandIns &sizes) {
  if (sizes.isFirst())
    module->removeAttr(kStandInsAttrName);
  else
    module->setAttr(kStandInsAttrName,
                    DenseI64ArrayAttr::get(module->getContext(), sizes.values()));
}

FailureOr<Target> passTarget(Operation *op, StringRef option, StringRef pass) {
  if (!option.empty()) {
    if (std::optional<Target> target = targetByName(option))
      return *target;
    return op->emitError() << pass << ": target must be cuda or cpu, not '" << option << "'";
  }
  if (std::optional<Target> target = moduleTarget(op))
    return *target;
  return op->emitError() << pass << ": the module says no target (" << kTargetAttrName
                         << " = #sched.target<cuda> or <cpu>) and the pass was given none "
                            "(target=cuda or target=cpu)";
}

std::vector<ScheduleDim> dimsOf(ArrayAttr dims) {
  std::vector<ScheduleDim> out;
  for (Attribute a : dims) {
    if (auto i = dyn_cast<InjectiveDimAttr>(a))
      out.push_back(ScheduleDim::injective(i.getSize()));
    else if (auto r = dyn_cast<ReducedDimAttr>(a))
      out.push_back(ScheduleDim::reducedDim(r.getSize()));
  }
  return out;
}

ArrayAttr dimsAttr(MLIRContext *ctx, const std::vector<ScheduleDim> &dims) {
  SmallVector<Attribute> out;
  for (const ScheduleDim &d : dims)
    out.push_back(d.reduced ? Attribute(ReducedDimAttr::get(ctx, d.size))
                            : Attribute(InjectiveDimAttr::get(ctx, d.size)));
  return ArrayAttr::get(ctx, out);
}

std::vector<LoopDescriptor> loopsOf(ArrayAttr loops) {
  std::vector<LoopDescriptor> out;
  int named = 0;
  for (Attribute a : loops) {
    auto l = cast<LoopAttr>(a);
    LoopDescriptor d{static_cast<LoopType>(l.getKind()), l.getSize(), ""};
    if (!d.spatial())
      d.iterator = (d.type == LoopType::Temporal    ? "t"
                    : d.type == LoopType::Vectorize ? "v"
                                                    : "u") +
                   std::to_string(named++);
    out.push_back(d);
  }
  return out;
}

ArrayAttr loopsAttr(MLIRContext *ctx, const std::vector<LoopDescriptor> &loops) {
  SmallVector<Attribute> out;
  for (const LoopDescriptor &d : loops)
    out.push_back(LoopAttr::get(ctx, static_cast<LoopKind>(d.type), d.size));
  return ArrayAttr::get(ctx, out);
}

} // namespace sotc::sched

/// Replays the mesh steps through the algebra; an algebra error becomes the failure message.
static FailureOr<ScheduleMesh> replay(ArrayAttr dims, ArrayAttr steps, std::string &error) {
  for (Attribute d : dims)
    if (!isa<InjectiveDimAttr, ReducedDimAttr>(d)) {
      error = "mesh dims must be #sched.injective or #sched.reduced";
      return failure();
    }
  for (Attribute s : steps)
    if (!isa<ReshapeAttr, TransposeAttr, PaddingAttr, RoundUpAttr>(s)) {
      error = "mesh steps must be #sched.reshape, #sched.transpose, #sched.padding or "
              "#sched.round_up";
      return failure();
    }
  sotc::Expected<ScheduleMesh> replayed = sotc::catchCodedError([&] {
    ScheduleMesh mesh(dimsOf(dims));
    for (Attribute s : steps) {
      if (auto r = dyn_cast<ReshapeAttr>(s))
        mesh = mesh.reshape({r.getShape().begin(), r.getShape().end()});
      else if (auto t = dyn_cast<TransposeAttr>(s))
        mesh = mesh.transpose({t.getPerm().begin(), t.getPerm().end()});
      else if (auto p = dyn_cast<PaddingAttr>(s))
        mesh = mesh.padding({p.getTo().begin(), p.getTo().end()});
      else if (auto r = dyn_cast<RoundUpAttr>(s)) {
        std::vector<std::optional<int64_t>> align;
        for (int64_t a : r.getAlign())
          align.push_back(a == 0 ? std::nullopt : std::optional<int64_t>(a));
        mesh = mesh.roundUpPadding(align);
      }
    }
    return mesh;
  });
  if (!replayed) {
    error = replayed.error().what();
    return failure();
  }
  return *replayed;
}

LogicalResult MeshAttr::verify(function_ref<InFlightDiagnostic()> emitError, ArrayAttr dims,
                               ArrayAttr steps) {
  std::string error;
  if (failed(replay(dims, steps, error)))
    return emitError() << error;
  return success();
}

ScheduleMesh MeshAttr::mesh() const {
  std::string error;
  return *replay(getDims(), getSteps(), error);
}

MeshAttr MeshAttr::get(MLIRContext *ctx, const ScheduleMesh &mesh) {
  SmallVector<Attribute> steps;
  for (const ScheduleMesh::Step &s : mesh.steps()) {
    switch (s.kind) {
    case ScheduleMesh::Step::Kind::Reshape:
      steps.push_back(ReshapeAttr::get(ctx, s.after));
      break;
    case ScheduleMesh::Step::Kind::Transpose:
      steps.push_back(TransposeAttr::get(ctx, s.perm));
      break;
    case ScheduleMesh::Step::Kind::Padding:
      steps.push_back(PaddingAttr::get(ctx, s.after));
      break;
    }
  }
  return get(ctx, dimsAttr(ctx, mesh.inputDims()), ArrayAttr::get(ctx, steps));
}

LogicalResult LoopAttr::verify(function_ref<InFlightDiagnostic()> emitError, LoopKind,
                               int64_t size) {
  if (size < 0)
    return emitError() << "loop size must not be negative, not " << size;
  return success();
}

#define CHECK_LOOP_KIND(name)                                                                      \
  static_assert(static_cast<int>(LoopKind::name) == static_cast<int>(LoopType::name),              \
                "sched::LoopKind follows sched::LoopType");
CHECK_LOOP_KIND(S0x)
CHECK_LOOP_KIND(S0y)
CHECK_LOOP_KIND(S0z)
CHECK_LOOP_KIND(S1x)
CHECK_LOOP_KIND(S1y)
CHECK_LOOP_KIND(S1z)
CHECK_LOOP_KIND(Temporal)
CHECK_LOOP_KIND(Vectorize)
CHECK_LOOP_KIND(Unroll)
#undef CHECK_LOOP_KIND
