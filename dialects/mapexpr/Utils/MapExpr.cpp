#include "dialects/mapexpr/Utils/MapExpr.h"

#include "compiler/ops/Types.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <sstream>

namespace sotc::mapexpr {

namespace {
constexpr std::string_view kInitSuffix = "_init", kAccSuffix = "_acc";
} // namespace

std::string OpStmt::name() const {
  std::string name(ops::primName(prim));
  return step == Step::Init  ? name + std::string(kInitSuffix)
         : step == Step::Acc ? name + std::string(kAccSuffix)
                             : name;
}

std::optional<OpStmt> OpStmt::named(std::string_view name) {
  OpStmt s;
  for (auto [suffix, step] : {std::pair{kInitSuffix, Step::Init}, {kAccSuffix, Step::Acc}})
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
      name.remove_suffix(suffix.size());
      s.step = step;
      break;
    }
  std::optional<ops::Prim> p = ops::primByName(std::string(name));
  if (!p)
    return std::nullopt;
  // Only reductions and matmul's accumulation have an _init and an _acc.
  if (s.step != Step::Compute && ops::primKind(*p) != ops::PrimKind::Reduce &&
      ops::primKind(*p) != ops::PrimKind::Matmul)
    return std::nullopt;
  s.prim = *p;
  return s;
}

std::string Kernel::str(bool indexDetail) const {
  auto name = [&](int t) { return "t_" + tensors[t].name; };
  std::ostringstream s;
  s << this->name << "(";
  bool first = true;
  for (int t : outputs) {
    s << (first ? "" : ", ") << "&" << name(t);
    first = false;
  }
  for (int t : inputs) {
    s << (first ? "" : ", ") << name(t);
    first = false;
  }
  s << ") {\n";
  bool scheduled = std::all_of(stmts.begin(), stmts.end(),
                               [](const AnchoredMapStmt &a) { return a.schedule.has_value(); });
  if (indexDetail && scheduled) { // where each intermediate lives
    std::vector<Storage> storage = tensorStorage(*this);
    for (size_t t = 0; t < tensors.size(); ++t) {
      const Storage &st = storage[t];
      if (st.kind == StorageKind::Input || st.kind == StorageKind::Output)
        continue;
      s << "  // " << name(static_cast<int>(t)) << ": " << storageKindName(st.kind);
      if (st.kind != StorageKind::Register)
        s << ", " << standIns.sizeText(st.elementsPerBlock, batch) << " per block";
      s << "\n";
    }
  }
  for (const AnchoredMapStmt &a : stmts) {
    s << "  AnchoredMapStmt(" << name(a.anchor) << ") {\n";
    s << "    MapStmt(";
    if (a.schedule) { // the loop descriptors, as the readme-era CINN prints them
      for (size_t i = 0; i < a.schedule->loops.size(); ++i)
        s << (i ? ", " : "") << sched::loopText(*a.schedule, i, batch ? &standIns : nullptr);
    } else { // not scheduled yet: the anchor iterators
      s << "[";
      for (size_t i = 0; i < a.space.size(); ++i)
        s << (i ? ", " : "") << "i" << i;
      s << "]";
    }
    s << ") {\n";
    for (const OpStmt &op : a.stmts) {
      std::vector<std::string> args;
      auto arg = [&](int t, bool out) {
        std::string text = (out ? "&" : "") + name(t);
        if (indexDetail)
          text += "[" + flatIndexStr(a.index.at(t), tensors[t].shape) + "]";
        args.push_back(text);
      };
      for (int t : op.outs)
        arg(t, true);
      for (int t : op.ins)
        arg(t, false);
      s << "      " << op.name() << "(";
      for (size_t i = 0; i < args.size(); ++i)
        s << (indexDetail ? (i ? ",\n          " : "\n          ") : (i ? ", " : "")) << args[i];
      s << ");\n";
    }
    s << "    }\n  }\n";
  }
  s << "}\n";
  return s.str();
}

Expected<sched::Schedule> scheduleFor(const std::vector<sched::ScheduleDim> &dims, Target target,
                                      const sched::SizeStandIns &sizes, int64_t vector,
                                      const sched::CpuHints &cpu) {
  bool reduction =
      std::any_of(dims.begin(), dims.end(), [](const sched::ScheduleDim &d) { return d.reduced; });
  return catchCodedError([&] {
    if (target == Target::Cpu)
      return sched::cpuSchedule(dims, sizes, cpu);
    if (!reduction && sched::anyHoldsBatch(dims, sizes)) {
      // Rows of the innermost static dim, a block each, the dims that hold s0 first (the
      // flat, padded mesh would read s0 in its mask). A tensor whose last dim holds s0 (the
      // T x T scores) keeps its order: rows of that dim, which its threads loop over, padded.
      // A tensor of s0 alone is a block per element.
      std::vector<int64_t> perm = sched::batchFirst(dims, sizes);
      if (dims.size() > 1 && sizes.holdsBatch(dims.back().size))
        std::iota(perm.begin(), perm.end(), int64_t{0});
      int64_t inner = dims.size() > 1 ? dims[perm.back()].size : 1;
      int64_t rows = sched::ScheduleMesh(dims).inputNumElements() / inner;
      return sched::gpuRowSchedule(dims, perm, rows, sched::gpuRowThreads(inner));
    }
    return reduction ? sched::gpuReductionSchedule(dims, sizes)
                     : sched::gpuInjectiveSchedule(dims, vector);
  });
}

static_assert(sched::kSizeSymbols == ops::kMaxSymbols, "a stand-in for every dynamic size");

int64_t modelDim(int64_t dim, const sched::SizeStandIns &sizes) {
  if (!ops::isDynamicDim(dim))
    return dim;
  return sizes.standInSize(ops::productOf(dim));
}

std::vector<int64_t> modelShape(const std::vector<int64_t> &shape,
                                const sched::SizeStandIns &sizes) {
  std::vector<int64_t> out = shape;
  for (int64_t &d : out)
    d = modelDim(d, sizes);
  return out;
}

std::vector<int64_t> bufferShape(const std::vector<int64_t> &shape,
                                 const sched::SizeStandIns &sizes) {
  std::vector<int64_t> model = modelShape(shape, sizes);
  // Strides hold s0 where a dim after the first is dynamic: then a flat buffer.
  if (shape.size() < 2 ||
      std::none_of(shape.begin() + 1, shape.end(), [](int64_t d) { return d < 0; }))
    return model;
  int64_t n = 1;
  for (int64_t d : model)
    n *= d;
  return {n};
}

std::map<int, size_t> writers(const Kernel &k) {
  std::map<int, size_t> writtenIn;
  for (size_t s = 0; s < k.stmts.size(); ++s)
    for (const OpStmt &op : k.stmts[s].stmts)
      for (int t : op.outs)
        writtenIn.emplace(t, s);
  return writtenIn;
}

std::vector<bool> rowDims(const Kernel &k, const KernelRows &rows, int t) {
  std::vector<bool> rowDim(k.tensors[t].shape.size(), false);
  const std::map<int, size_t> writtenIn = writers(k);
  auto w = writtenIn.find(t);
  if (w == writtenIn.end() || rows.iterators[w->second].empty())
    return rowDim;
  const std::vector<Expr> &index = k.stmts[w->second].index.at(t);
  for (int r : rows.iterators[w->second])
    for (size_t d = 0; d < index.size(); ++d)
      rowDim[d] = rowDim[d] || (index[d]->kind() == IndexExpr::Kind::Iter && index[d]->id() == r);
  return rowDim;
}

const char *storageKindName(StorageKind kind) {
  switch (kind) {
  case StorageKind::Input:
    return "input";
  case StorageKind::Output:
    return "output";
  case StorageKind::Register:
    return "register";
  case StorageKind::Shared:
    return "shared";
  case StorageKind::Scratch:
    return "scratch";
  }
  return "?";
}

std::vector<Storage> tensorStorage(const Kernel &k) {
  std::vector<Storage> storage(k.tensors.size());
  for (int t : k.inputs)
    storage[t].kind = StorageKind::Input;
  for (int t : k.outputs)
    storage[t].kind = StorageKind::Output;
  // Blocks: the product of the grid's block loops (every statement shares them).
  int64_t blocks = 1;
  if (!k.stmts.empty() && k.stmts.front().schedule)
    for (const sched::LoopDescriptor &l : k.stmts.front().schedule->loops)
      if (l.type == sched::LoopType::S0x || l.type == sched::LoopType::S0y ||
          l.type == sched::LoopType::S0z)
        blocks *= l.size;
  const std::map<int, size_t> writtenIn = writers(k);
  const std::optional<KernelRows> rows = kernelRows(k);
  for (size_t s = 0; s < k.stmts.size(); ++s)
    for (const OpStmt &op : k.stmts[s].stmts)
      for (int t : op.ins) {
        auto w = writtenIn.find(t);
        if (w == writtenIn.end() || w->second == s || storage[t].kind != StorageKind::Register)
          continue;
        const std::vector<int64_t> &shape = k.tensors[t].shape;
        int64_t n =
            std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
        int64_t perBlock = (n + blocks - 1) / blocks;
        if (rows) { // one row's part: the dims no row coordinate indexes (a broadcast's too)
          std::vector<bool> rowDim = rowDims(k, *rows, t);
          perBlock = 1;
          for (size_t d = 0; d < shape.size(); ++d)
            perBlock *= rowDim[d] ? 1 : shape[d];
        }
        storage[t] = {perBlock <= kSharedElementsPerBlock ? StorageKind::Shared
                                                          : StorageKind::Scratch,
                      perBlock};
      }
  return storage;
}

namespace {
bool hasReduction(const std::vector<sched::ScheduleDim> &dims) {
  return std::any_of(dims.begin(), dims.end(),
                     [](const sched::ScheduleDim &d) { return d.reduced; });
}

/// The anchor iterators of `dims` that count rows, in row order: the injective ones of size
/// above 1 (size-1 dims are always 0 and count nothing), a dynamic batch first.
std::vector<int> rowIterators(const std::vector<sched::ScheduleDim> &dims,
                              const sched::SizeStandIns &sizes) {
  std::vector<int> iters;
  for (int64_t i : sched::batchFirst(dims, sizes))
    if (!dims[i].reduced && dims[i].size != 1)
      iters.push_back(static_cast<int>(i));
  return iters;
}

std::vector<int64_t> sizesOf(const std::vector<sched::ScheduleDim> &dims,
                             const std::vector<int> &iters) {
  std::vector<int64_t> sizes;
  for (int i : iters)
    sizes.push_back(dims[i].size);
  return sizes;
}

bool isIter(const Expr &e, int id) { return e->kind() == IndexExpr::Kind::Iter && e->id() == id; }

/// Whether iterator `id` appears anywhere in `e`.
bool mentions(const Expr &e, int id) {
  return isIter(e, id) || std::any_of(e->items().begin(), e->items().end(),
                                      [&](const Expr &item) { return mentions(item, id); });
}

/// Whether every statement of `k` runs on its reduction's rows with `rows[s]` the row
/// iterators of statement s: every tensor a statement reads from an earlier statement was
/// written, element by element, by the same row (the same block), because each row
/// coordinate of the writer indexes one tensor dimension that the reader indexes with its
/// own row coordinate of the same rank, or indexes none of them.
bool rowAligned(const Kernel &k, const std::vector<std::vector<int>> &rows) {
  const std::map<int, size_t> writtenIn = writers(k);
  for (size_t b = 0; b < k.stmts.size(); ++b)
    for (const OpStmt &op : k.stmts[b].stmts)
      for (int t : op.ins) {
        auto w = writtenIn.find(t);
        if (w == writtenIn.end() || w->second >= b)
          continue;
        const std::vector<Expr> &written = k.stmts[w->second].index.at(t);
        const std::vector<Expr> &read = k.stmts[b].index.at(t);
        for (size_t r = 0; r < rows[w->second].size(); ++r) {
          int row = rows[w->second][r];
          auto d = std::find_if(written.begin(), written.end(),
                                [&](const Expr &e) { return isIter(e, row); });
          // A tensor this row coordinate does not index (a mask broadcast over heads): every
          // row writes the same elements of it.
          if (d == written.end() && std::none_of(written.begin(), written.end(),
                                                 [&](const Expr &e) { return mentions(e, row); }))
            continue;
          if (d == written.end() || !isIter(read[d - written.begin()], rows[b][r]))
            return false;
        }
      }
  return true;
}

/// The anchor iterators of statement `a` in the order it writes the first kernel output it
/// stores (outermost first): an im2col that writes its columns transposed stores contiguously
/// in that order. Empty where that output's index is not its iterators, in some order, each
/// once (merged runs included: IndexDot of iterators).
std::vector<int64_t> writeOrder(const Kernel &k, const AnchoredMapStmt &a) {
  for (const OpStmt &op : a.stmts) {
    if (std::find(k.outputs.begin(), k.outputs.end(), op.outs[0]) == k.outputs.end())
      continue;
    std::vector<int64_t> order;
    std::function<bool(const Expr &)> walk = [&](const Expr &e) {
      if (e->kind() == IndexExpr::Kind::Iter)
        return order.push_back(e->id()), true;
      if (e->kind() == IndexExpr::Kind::Const)
        return true;
      return e->kind() == IndexExpr::Kind::Dot &&
             std::all_of(e->items().begin(), e->items().end(), walk);
    };
    if (!std::all_of(a.index.at(op.outs[0]).begin(), a.index.at(op.outs[0]).end(), walk))
      return {};
    // The dims the output does not index are size 1 (else it is not written once each): first.
    std::vector<int64_t> full;
    for (size_t d = 0; d < a.dims.size(); ++d)
      if (std::find(order.begin(), order.end(), static_cast<int64_t>(d)) == order.end()) {
        if (a.dims[d].size != 1)
          return {};
        full.push_back(static_cast<int64_t>(d));
      }
    full.insert(full.end(), order.begin(), order.end());
    std::vector<int64_t> sorted = full;
    std::sort(sorted.begin(), sorted.end());
    for (size_t d = 0; d < sorted.size(); ++d)
      if (sorted[d] != static_cast<int64_t>(d))
        return {};
    return full;
  }
  return {};
}

/// Whether every tensor that `k` reduces into is an output of the kernel: a vector of a row's
/// results can then be accumulated where it is stored (cpuLaneReductionSchedule).
bool accumulatesInOutputs(const Kernel &k) {
  for (const AnchoredMapStmt &a : k.stmts)
    for (const OpStmt &op : a.stmts)
      if (op.isInit() &&
          std::find(k.outputs.begin(), k.outputs.end(), op.outs[0]) == k.outputs.end())
        return false;
  return true;
}
} // namespace

bool readsWindows(const AnchoredMapStmt &a) {
  return std::any_of(a.stmts.begin(), a.stmts.end(),
                     [](const OpStmt &op) { return op.prim == ops::Prim::Window; });
}

std::optional<KernelRows> kernelRows(const Kernel &k) {
  auto defining = std::find_if(k.stmts.begin(), k.stmts.end(),
                               [](const AnchoredMapStmt &a) { return hasReduction(a.dims); });
  if (defining == k.stmts.end())
    return std::nullopt;
  // Each statement's row iterators, in the defining reduction's row order.
  const std::vector<int> definingRows = rowIterators(defining->dims, k.standIns);
  const std::vector<int64_t> rowSizes = sizesOf(defining->dims, definingRows);
  std::vector<std::vector<int>> rows;
  bool fits = true;
  for (const AnchoredMapStmt &a : k.stmts) {
    std::vector<int> iters = rowIterators(a.dims, k.standIns);
    if (!hasReduction(a.dims) && a.dims.size() == defining->dims.size() &&
        sizesOf(a.dims, definingRows) == rowSizes)
      iters = definingRows; // the reduction's space: its rows, the rest within a row
    else if (!hasReduction(a.dims) && iters.size() > rowSizes.size() &&
             sizesOf(a.dims, {iters.begin(), iters.begin() + rowSizes.size()}) == rowSizes)
      // A space of other rank (a row result broadcast back over [4, 4] after a reduction of
      // [1, 4, 4]): its leading iterators are the rows where they have their sizes
      // (rowAligned checks what it reads of the reduction's).
      iters.resize(rowSizes.size());
    fits = fits && sizesOf(a.dims, iters) == rowSizes;
    rows.push_back(iters);
  }
  int64_t rowCount =
      std::accumulate(rowSizes.begin(), rowSizes.end(), int64_t{1}, std::multiplies<int64_t>());
  // Statements that cannot run on those rows leave one grid: a single row, the kernel in one
  // block (correct where each reduction has one row: scheduleKernel refuses the others).
  if (!fits || !rowAligned(k, rows)) {
    rowCount = 1;
    for (std::vector<int> &r : rows)
      r.clear();
  }
  return KernelRows{rows, rowCount};
}

Expected<std::monostate> scheduleKernel(Kernel &k, Target target) {
  std::optional<KernelRows> kr = kernelRows(k);
  if (!kr) {            // injective: one statement on its own policy
    int64_t widest = 1; // the widest element the kernel loads or stores
    for (const std::vector<int> *buffers : {&k.inputs, &k.outputs})
      for (int t : *buffers)
        widest = std::max(widest, k.tensors[t].elementBytes);
    for (AnchoredMapStmt &a : k.stmts) {
      Expected<sched::Schedule> s =
          scheduleFor(a.dims, target, k.standIns, sched::gpuVectorElements(widest),
                      {readsWindows(a) ? 4 : 8, writeOrder(k, a)});
      if (!s)
        return s.error();
      a.schedule = *s;
    }
    return std::monostate();
  }
  if (target == Target::Cpu && k.stmts.size() == 1 && accumulatesInOutputs(k)) {
    std::optional<sched::Schedule> lanes =
        sched::cpuLaneReductionSchedule(k.stmts[0].dims, k.standIns);
    if (lanes) {
      k.stmts[0].schedule = *lanes;
      return std::monostate();
    }
  }
  const std::vector<std::vector<int>> &rows = kr->iterators;
  int64_t rowCount = kr->count, threads = 0;
  for (const AnchoredMapStmt &a : k.stmts)
    if (hasReduction(a.dims))
      threads = std::max(threads, sched::gpuRowThreads(sched::rowSplit(a.dims, k.standIns).reduce));
  Expected<std::vector<sched::Schedule>> schedules = catchCodedError([&] {
    // On one row, a reduction of several rows would sum them all into one accumulator.
    for (const AnchoredMapStmt &a : k.stmts)
      if (rowCount == 1 && hasReduction(a.dims) && sched::rowSplit(a.dims, k.standIns).rows > 1)
        throw CodedError(DiagCode::KernelUnsupported,
                         "the statements fused into kernel " + k.name +
                             " do not run on the same rows as its reduction; not supported yet");
    std::vector<sched::Schedule> out;
    for (size_t s = 0; s < k.stmts.size(); ++s) {
      const std::vector<sched::ScheduleDim> &dims = k.stmts[s].dims;
      std::vector<int64_t> perm(rows[s].begin(), rows[s].end()); // rows first, then the rest
      for (size_t i = 0; i < dims.size(); ++i)
        if (std::find(rows[s].begin(), rows[s].end(), static_cast<int>(i)) == rows[s].end())
          perm.push_back(static_cast<int64_t>(i));
      out.push_back(target == Target::Cpu ? sched::cpuRowSchedule(dims, perm, rowCount)
                                          : sched::gpuRowSchedule(dims, perm, rowCount, threads));
    }
    return out;
  });
  if (!schedules)
    return schedules.error();
  for (size_t s = 0; s < k.stmts.size(); ++s)
    k.stmts[s].schedule = (*schedules)[s];
  return std::monostate();
}

} // namespace sotc::mapexpr
