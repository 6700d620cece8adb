//===- Indices.cpp - Index expressions and mesh coordinates as index values --------------===//
#include "compiler/conversion/MapExprToLoops/Indices.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace sotc::mapexpr::loops {

bool Indices::dynamic() const {
  return llvm::any_of(sizes, [](mlir::Value v) { return static_cast<bool>(v); });
}

mlir::Value Indices::size(int64_t k) {
  if (!dynamic() || !standIns.holdsBatch(k))
    return c(k);
  mlir::Value v;
  std::vector<int> powers = standIns.sizePowers(k);
  for (size_t symbol = 0; symbol < powers.size(); ++symbol)
    for (int p = 0; p < powers[symbol]; ++p)
      v = v ? mlir::arith::MulIOp::create(b, loc, v, sizes[symbol]).getResult() : sizes[symbol];
  int64_t factor = standIns.staticFactor(k);
  return factor == 1 ? v : mlir::arith::MulIOp::create(b, loc, v, c(factor)).getResult();
}

mlir::Value Indices::add(mlir::Value x, mlir::Value y) {
  return mlir::arith::AddIOp::create(b, loc, x, y);
}

mlir::Value Indices::mul(mlir::Value x, int64_t k) {
  return k == 1 ? x : mlir::arith::MulIOp::create(b, loc, x, size(k)).getResult();
}

mlir::Value Indices::div(mlir::Value x, int64_t k) {
  return k == 1 ? x : mlir::arith::DivUIOp::create(b, loc, x, size(k)).getResult();
}

mlir::Value Indices::rem(mlir::Value x, int64_t k) {
  return mlir::arith::RemUIOp::create(b, loc, x, size(k));
}

mlir::Value Indices::flat(llvm::ArrayRef<mlir::Value> coords, llvm::ArrayRef<int64_t> dims) {
  mlir::Value f = c(0);
  for (size_t d = 0; d < coords.size(); ++d)
    f = add(mul(f, dims[d]), coords[d]);
  return f;
}

mlir::Value Indices::unflat(mlir::Value f, llvm::ArrayRef<int64_t> dims, size_t k) {
  int64_t inner = 1;
  for (size_t d = k + 1; d < dims.size(); ++d)
    inner *= dims[d];
  if (dynamic() && k == 0 && standIns.holdsBatch(dims[0]))
    return div(f, inner);
  return rem(div(f, inner), dims[k]);
}

std::vector<mlir::Value> Indices::unmerge(llvm::ArrayRef<mlir::Value> coords,
                                          llvm::ArrayRef<int64_t> after,
                                          llvm::ArrayRef<int64_t> before) {
  std::vector<mlir::Value> out;
  for (size_t i = 0, j = 0; j < after.size(); ++j) {
    size_t first = i;
    int64_t size = 1;
    while (i < before.size() && (size < after[j] || (i > first && before[i] == 1)))
      size *= before[i++];
    if (i == first + 1 && size > after[j]) { // a split: after[j..] make up before[first]
      size_t last = j;
      for (int64_t parts = after[j]; parts < size && last + 1 < after.size();)
        parts *= after[++last];
      int64_t parts = 1;
      for (size_t k = j; k <= last; ++k)
        parts *= after[k];
      if (parts == size) {
        out.push_back(flat(coords.slice(j, last - j + 1), after.slice(j, last - j + 1)));
        j = last;
        continue;
      }
    }
    if (size != after[j]) { // not a merge: through the flat index
      mlir::Value f = flat(coords, after);
      out.clear();
      for (size_t k = 0; k < before.size(); ++k)
        out.push_back(before.size() == 1 ? f : unflat(f, before, k));
      return out;
    }
    for (size_t k = first; k < i; ++k)
      out.push_back(i - first == 1 ? coords[j]
                                   : unflat(coords[j], before.slice(first, i - first), k - first));
  }
  while (out.size() < before.size()) // trailing dims of size 1
    out.push_back(c(0));
  return out;
}

mlir::Value Indices::expr(const Expr &e, llvm::ArrayRef<mlir::Value> iters) {
  switch (e->kind()) {
  case IndexExpr::Kind::Iter:
    return iters[e->id()];
  // Offsets may be sizes too (where a concatenation's part after a part of T starts).
  case IndexExpr::Kind::Const:
    return e->value() >= 0 ? size(e->value())
                           : mlir::arith::SubIOp::create(b, loc, c(0), size(-e->value()));
  case IndexExpr::Kind::Affine: {
    mlir::Value v = mul(expr(e->items()[0], iters), e->mul());
    return e->value() >= 0 ? add(v, size(e->value()))
                           : mlir::arith::SubIOp::create(b, loc, v, size(-e->value()));
  }
  case IndexExpr::Kind::Dot: {
    llvm::SmallVector<mlir::Value> items;
    for (const Expr &item : e->items())
      items.push_back(expr(item, iters));
    return flat(items, e->dims());
  }
  case IndexExpr::Kind::UnDot:
    return unflat(expr(e->items()[0], iters), e->dims(), e->item());
  case IndexExpr::Kind::Sum:
    return add(expr(e->items()[0], iters), expr(e->items()[1], iters));
  }
  return c(0);
}

std::vector<mlir::Value> Indices::anchor(const sched::ScheduleMesh &mesh,
                                         llvm::ArrayRef<mlir::Value> loopCoords,
                                         mlir::Value &inBounds) {
  std::vector<mlir::Value> coords(loopCoords.begin(), loopCoords.end());
  const auto &steps = mesh.steps();
  for (auto step = steps.rbegin(); step != steps.rend(); ++step) {
    switch (step->kind) {
    case sched::ScheduleMesh::Step::Kind::Reshape: {
      if (step->before == step->after)
        break;
      coords = unmerge(coords, step->after, step->before);
      break;
    }
    case sched::ScheduleMesh::Step::Kind::Transpose: {
      std::vector<mlir::Value> before(coords.size());
      for (size_t d = 0; d < coords.size(); ++d)
        before[step->perm[d]] = coords[d];
      coords = before;
      break;
    }
    case sched::ScheduleMesh::Step::Kind::Padding:
      for (size_t d = 0; d < coords.size(); ++d)
        if (step->before[d] < step->after[d]) {
          mlir::Value ok = mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::ult,
                                                       coords[d], size(step->before[d]));
          inBounds = inBounds ? mlir::arith::AndIOp::create(b, loc, inBounds, ok).getResult() : ok;
        }
      break;
    }
  }
  return coords;
}

} // namespace sotc::mapexpr::loops
