#include "dialects/sched/Utils/Mesh.h"

#include "compiler/support/Format.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <iterator>
#include <numeric>

namespace sotc::sched {
namespace {

std::string ints(const std::vector<int64_t> &v) { return formatInts(v); }

int64_t product(const std::vector<int64_t> &v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<int64_t>());
}

int64_t roundUp(int64_t v, int64_t align) { return (v + align - 1) / align * align; }

} // namespace

std::string ScheduleDim::str() const {
  return std::string(reduced ? "R(" : "I(") + std::to_string(size) + ")";
}

ScheduleMesh::ScheduleMesh(std::vector<ScheduleDim> dims) : input_(std::move(dims)) {
  text_ = "[";
  for (size_t i = 0; i < input_.size(); ++i) {
    if (input_[i].size < 0) // 0 is fine: an empty space, no iterations
      throw MeshError("schedule dim " + std::to_string(i) + " has size " +
                      std::to_string(input_[i].size) + "; meshes need static sizes");
    shape_.push_back(input_[i].size);
    reduced_.push_back(input_[i].reduced);
    text_ += (i ? ", " : "") + input_[i].str();
  }
  text_ += "]";
}

bool ScheduleMesh::keepsLastDim() const {
  if (input_.empty())
    return false;
  for (const Step &step : steps_)
    if (step.after.empty() || step.before.back() != step.after.back() ||
        (step.kind == Step::Kind::Transpose &&
         step.perm.back() != static_cast<int64_t>(step.perm.size()) - 1))
      return false;
  return true;
}

int64_t ScheduleMesh::inputNumElements() const {
  int64_t n = 1;
  for (const ScheduleDim &d : input_)
    n *= d.size;
  return n;
}

int64_t ScheduleMesh::outputNumElements() const { return product(shape_); }

std::string ScheduleMesh::str() const { return text_; }

std::optional<std::vector<int64_t>> ScheduleMesh::inputIndex(std::vector<int64_t> index) const {
  for (size_t s = steps_.size(); s-- > 0;) {
    const Step &step = steps_[s];
    std::vector<int64_t> before(step.before.size());
    switch (step.kind) {
    case Step::Kind::Padding:
      for (size_t i = 0; i < index.size(); ++i)
        if (index[i] >= step.before[i])
          return std::nullopt;
      before = index;
      break;
    case Step::Kind::Transpose:
      for (size_t i = 0; i < index.size(); ++i)
        before[step.perm[i]] = index[i];
      break;
    case Step::Kind::Reshape: {
      // The row-major flat position, read back over the earlier shape.
      const std::vector<int64_t> &after = step.after;
      int64_t flat = 0;
      for (size_t i = 0; i < index.size(); ++i)
        flat = flat * after[i] + index[i];
      for (size_t i = before.size(); i-- > 0;) {
        before[i] = flat % step.before[i];
        flat /= step.before[i];
      }
      break;
    }
    }
    index = std::move(before);
  }
  return index;
}

ScheduleMesh ScheduleMesh::reshape(const std::vector<int64_t> &shape) const {
  std::vector<int64_t> out = shape;
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (inferred >= 0)
        throw MeshError("reshape " + ints(shape) + ": only one dimension can be -1");
      inferred = static_cast<int>(i);
    } else if (out[i] < 0) {
      throw MeshError("reshape " + ints(shape) + ": sizes must be non-negative or -1");
    } else {
      known *= out[i];
    }
  }
  int64_t total = outputNumElements();
  if (inferred >= 0 && known == 0) {
    if (total != 0)
      throw MeshError("reshape " + ints(shape) + " has no elements, the mesh " + ints(shape_) +
                      " has " + std::to_string(total));
    out[inferred] = 0; // an empty mesh stays empty
  } else if (inferred >= 0) {
    if (total % known != 0)
      throw MeshError("reshape " + ints(shape) + ": " + std::to_string(total) +
                      " elements do not divide into it");
    out[inferred] = total / known;
  } else if (known != total) {
    throw MeshError("reshape " + ints(shape) + " has " + std::to_string(known) +
                    " elements, the mesh " + ints(shape_) + " has " + std::to_string(total));
  }
  // Old and new dims split into contiguous groups of equal element count (from the
  // innermost side); a new dim holds reduced elements if any old dim of its group does.
  ScheduleMesh m = *this;
  m.shape_ = out;
  m.reduced_.assign(out.size(), false);
  size_t oi = shape_.size(), ni = out.size();
  while (ni > 0 || oi > 0) {
    int64_t po = 1, pn = 1;
    bool reduced = false;
    std::vector<size_t> group;
    do {
      if (ni > 0 && (oi == 0 || pn < po || (pn == po && group.empty()))) {
        pn *= out[--ni];
        group.push_back(ni);
      } else {
        po *= shape_[--oi];
        reduced = reduced || (reduced_[oi] && shape_[oi] != 1); // size 1 carries nothing
      }
    } while (po != pn && (ni > 0 || oi > 0));
    for (size_t g : group)
      m.reduced_[g] = reduced && out[g] != 1; // a size-1 loop iterates nothing
  }
  m.steps_.push_back({Step::Kind::Reshape, shape_, {}, out});
  m.text_ = text_ + ".reshape(" + ints(shape) + ")";
  return m;
}

ScheduleMesh ScheduleMesh::transpose(const std::vector<int64_t> &perm) const {
  if (perm.size() != shape_.size())
    throw MeshError("transpose " + ints(perm) + " does not fit a rank-" +
                    std::to_string(shape_.size()) + " mesh");
  std::vector<bool> seen(perm.size(), false);
  ScheduleMesh m = *this;
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(perm.size()) || seen[perm[i]])
      throw MeshError("transpose " + ints(perm) + " is not a permutation");
    seen[perm[i]] = true;
    m.shape_[i] = shape_[perm[i]];
    m.reduced_[i] = reduced_[perm[i]];
  }
  m.steps_.push_back({Step::Kind::Transpose, shape_, perm, m.shape_});
  m.text_ = text_ + ".transpose(" + ints(perm) + ")";
  return m;
}

ScheduleMesh ScheduleMesh::padding(const std::vector<int64_t> &paddingTo) const {
  if (paddingTo.size() != shape_.size())
    throw MeshError("padding " + ints(paddingTo) + " does not fit a rank-" +
                    std::to_string(shape_.size()) + " mesh");
  for (size_t i = 0; i < shape_.size(); ++i)
    if (paddingTo[i] < shape_[i])
      throw MeshError("padding " + ints(paddingTo) + " would shrink dim " + std::to_string(i) +
                      " from " + std::to_string(shape_[i]) + " to " + std::to_string(paddingTo[i]));
  ScheduleMesh m = *this;
  m.shape_ = paddingTo;
  m.steps_.push_back({Step::Kind::Padding, shape_, {}, paddingTo});
  m.text_ = text_ + ".padding(" + ints(paddingTo) + ")";
  return m;
}

ScheduleMesh ScheduleMesh::roundUpPadding(const std::vector<std::optional<int64_t>> &align) const {
  if (align.size() != shape_.size())
    throw MeshError("round-up padding of rank " + std::to_string(align.size()) +
                    " does not fit a rank-" + std::to_string(shape_.size()) + " mesh");
  std::vector<int64_t> to = shape_;
  for (size_t i = 0; i < align.size(); ++i) {
    if (align[i] && *align[i] <= 0)
      throw MeshError("round-up alignment must be positive");
    if (align[i])
      to[i] = roundUp(to[i], *align[i]);
  }
  if (to == shape_)
    return *this; // nothing to pad: the mesh is unchanged
  return padding(to);
}

namespace {
constexpr const char *kLoopTypeNames[] = {"S0x", "S0y",      "S0z",       "S1x",   "S1y",
                                          "S1z", "Temporal", "Vectorize", "Unroll"};
} // namespace

const char *loopTypeName(LoopType type) { return kLoopTypeNames[static_cast<int>(type)]; }

std::optional<LoopType> loopTypeByName(const std::string &name) {
  for (int i = 0; i < 9; ++i)
    if (name == kLoopTypeNames[i])
      return static_cast<LoopType>(i);
  return std::nullopt;
}

bool anyHoldsBatch(const std::vector<ScheduleDim> &dims, const SizeStandIns &sizes) {
  return std::any_of(dims.begin(), dims.end(),
                     [&](const ScheduleDim &d) { return sizes.holdsBatch(d.size); });
}

namespace {
constexpr int64_t kFirstStandIn = 4099;

bool isPrime(int64_t n) {
  if (n < 2)
    return false;
  for (int64_t d = 2; d * d <= n; ++d)
    if (n % d == 0)
      return false;
  return true;
}

/// The first prime after `n`.
int64_t nextPrime(int64_t n) {
  while (!isPrime(++n)) {
  }
  return n;
}
} // namespace

SizeStandIns::SizeStandIns() {
  // Every module without sched.stand_ins reads these: searched for once.
  static const contract::SizeValues first = avoiding({}).values_;
  values_ = first;
}

SizeStandIns SizeStandIns::avoiding(const std::vector<int64_t> &staticSizes) {
  contract::SizeValues values{};
  int64_t p = kFirstStandIn - 1;
  for (int64_t &v : values) {
    // A static size has at most a few prime factors this large: the search ends soon.
    do
      p = nextPrime(p);
    while (std::any_of(staticSizes.begin(), staticSizes.end(),
                       [&](int64_t size) { return size != 0 && size % p == 0; }));
    v = p;
  }
  return SizeStandIns(values);
}

std::optional<SizeStandIns> SizeStandIns::of(const std::vector<int64_t> &values) {
  if (values.size() != static_cast<size_t>(kSizeSymbols))
    return std::nullopt;
  contract::SizeValues out{};
  for (int k = 0; k < kSizeSymbols; ++k) {
    if (values[k] < kFirstStandIn || !isPrime(values[k]) || (k && values[k] <= values[k - 1]))
      return std::nullopt;
    out[k] = values[k];
  }
  return SizeStandIns(out);
}

contract::SizeProduct SizeStandIns::sizeProduct(int64_t size) const {
  contract::SizeProduct p{size, {}};
  for (int k = 0; k < kSizeSymbols && p.factor > 0; ++k)
    while (p.factor % values_[k] == 0) {
      p.factor /= values_[k];
      ++p.powers[k];
    }
  return p;
}

int64_t SizeStandIns::standInSize(const contract::SizeProduct &p) const {
  // Wrapping, as the model's arithmetic on sizes does (sotc-sir-check-batch-dims keeps the
  // powers to a cube, so a size that wraps would need a static part past 2^27 as well).
  uint64_t size = static_cast<uint64_t>(p.factor);
  for (int k = 0; k < kSizeSymbols; ++k)
    for (int i = 0; i < p.powers[k]; ++i)
      size *= static_cast<uint64_t>(values_[k]);
  return static_cast<int64_t>(size);
}

std::vector<int> SizeStandIns::sizePowers(int64_t size) const {
  contract::SizeProduct p = sizeProduct(size);
  std::vector<int> powers(p.powers.begin(), p.powers.end());
  while (!powers.empty() && powers.back() == 0)
    powers.pop_back();
  return powers;
}

std::string SizeStandIns::sizeText(int64_t size, bool batch) const {
  return batch ? sizeProduct(size).text() : std::to_string(size);
}

std::optional<int64_t> SizeStandIns::sizeOfText(const std::string &text) const {
  std::optional<contract::SizeProduct> p = contract::SizeProduct::parse(text);
  return p ? std::optional<int64_t>(standInSize(*p)) : std::nullopt;
}

std::string perRowText(int64_t count, const std::string &symbol, int degree) {
  std::string power = symbol + (degree > 1 ? "^" + std::to_string(degree) : "");
  return degree == 0  ? std::to_string(count)
         : count == 1 ? power
                      : std::to_string(count) + "*" + power;
}

std::string LoopDescriptor::str(const SizeStandIns *sizes) const {
  static const char *names[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  std::string var = spatial() ? names[static_cast<int>(type)] : iterator;
  return var + "=0.." + (sizes ? sizes->sizeText(size, true) : std::to_string(size));
}

std::vector<LoopDescriptor> loopDescriptors(const ScheduleMesh &mesh,
                                            const std::vector<LoopType> &types) {
  if (types.size() != mesh.outputRank())
    throw MeshError(std::to_string(types.size()) + " loop types for a mesh with " +
                    std::to_string(mesh.outputRank()) + " output dims");
  std::vector<LoopDescriptor> loops;
  std::vector<bool> used(6, false);
  int temporal = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    LoopDescriptor d{types[i], mesh.outputShape()[i], ""};
    if (d.spatial()) {
      if (used[static_cast<int>(d.type)])
        throw MeshError("loop type " + d.str() + " is bound twice");
      used[static_cast<int>(d.type)] = true;
      if (d.type <= LoopType::S0z && mesh.outputReduced(i))
        throw MeshError("a reduced dim cannot be bound to blocks (" + d.str() + ")");
    } else {
      d.iterator = (d.type == LoopType::Temporal    ? "t"
                    : d.type == LoopType::Vectorize ? "v"
                                                    : "u") +
                   std::to_string(temporal++);
    }
    loops.push_back(d);
  }
  return loops;
}

int64_t gpuVectorElements(int64_t widestBytes) {
  return std::clamp<int64_t>(16 / std::max<int64_t>(widestBytes, 1), 4, 8);
}

Schedule gpuInjectiveSchedule(const std::vector<ScheduleDim> &dims, int64_t vector) {
  ScheduleMesh base(dims);
  for (const ScheduleDim &d : dims)
    if (d.reduced)
      throw MeshError("the injective policy got a reduced dim");
  int64_t n = base.inputNumElements();
  int64_t threads = n <= 1024 ? std::max<int64_t>(roundUp(n, 32), 32) : 256;
  ScheduleMesh flat = base.reshape({n}).roundUpPadding({threads});
  int64_t padded = flat.outputNumElements();
  // Vectorize when every block's share splits evenly into `vector`-wide vectors.
  if (n > 1024 && padded % (threads * vector) == 0) {
    ScheduleMesh m = flat.reshape({-1, threads, vector});
    return {m, loopDescriptors(m, {LoopType::S0x, LoopType::S1x, LoopType::Vectorize})};
  }
  ScheduleMesh m = flat.reshape({-1, threads});
  return {m, loopDescriptors(m, {LoopType::S0x, LoopType::S1x})};
}

namespace {
/// The space, permuted, as [rows, the rest].
ScheduleMesh asRows(const std::vector<ScheduleDim> &dims, const std::vector<int64_t> &perm,
                    int64_t rows) {
  ScheduleMesh base(dims);
  int64_t n = base.inputNumElements();
  if (rows <= 0 || n % rows != 0)
    throw MeshError("a space of " + std::to_string(n) + " elements does not split into " +
                    std::to_string(rows) + " rows");
  return base.transpose(perm).reshape({rows, n / rows});
}
} // namespace

RowSplit rowSplit(const std::vector<ScheduleDim> &dims, const SizeStandIns &sizes) {
  RowSplit split;
  for (bool reduced : {false, true})
    for (int64_t i : batchFirst(dims, sizes))
      if (dims[i].reduced == reduced) {
        split.perm.push_back(static_cast<int64_t>(i));
        (reduced ? split.reduce : split.rows) *= dims[i].size;
      }
  return split;
}

int64_t gpuRowThreads(int64_t reduce) {
  // A power of two: gpu.all_reduce's lowering over 3, 5, 6 or 7 warps races on its shared
  // buffer between two reductions of one kernel (the CUDA emulator reports it).
  int64_t threads = 32;
  while (threads < reduce && threads < 256)
    threads *= 2;
  return threads;
}

Schedule gpuRowSchedule(const std::vector<ScheduleDim> &dims, const std::vector<int64_t> &perm,
                        int64_t rows, int64_t threads) {
  ScheduleMesh m = asRows(dims, perm, rows)
                       .roundUpPadding({std::nullopt, threads})
                       .reshape({rows, -1, threads})
                       .transpose({0, 2, 1});
  return {m, loopDescriptors(m, {LoopType::S0x, LoopType::S1x, LoopType::Temporal})};
}

Schedule gpuReductionSchedule(const std::vector<ScheduleDim> &dims, const SizeStandIns &sizes) {
  if (std::none_of(dims.begin(), dims.end(), [](const ScheduleDim &d) { return d.reduced; }))
    throw MeshError("the reduction policy got no reduced dim");
  RowSplit split = rowSplit(dims, sizes);
  return gpuRowSchedule(dims, split.perm, split.rows, gpuRowThreads(split.reduce));
}

Schedule cpuRowSchedule(const std::vector<ScheduleDim> &dims, const std::vector<int64_t> &perm,
                        int64_t rows) {
  bool reduction =
      std::any_of(dims.begin(), dims.end(), [](const ScheduleDim &d) { return d.reduced; });
  ScheduleMesh m = asRows(dims, perm, rows);
  // A row's reduction is a serial loop; its elementwise work a vector loop.
  return {
      m, loopDescriptors(m, {LoopType::S0x, reduction ? LoopType::Temporal : LoopType::Vectorize})};
}

std::vector<int64_t> batchFirst(const std::vector<ScheduleDim> &dims, const SizeStandIns &sizes) {
  std::vector<int64_t> perm;
  for (bool batch : {true, false})
    for (size_t i = 0; i < dims.size(); ++i)
      if (sizes.holdsBatch(dims[i].size) == batch)
        perm.push_back(static_cast<int64_t>(i));
  return perm;
}

Schedule cpuSchedule(const std::vector<ScheduleDim> &dims, const SizeStandIns &sizes,
                     const CpuHints &hints) {
  ScheduleMesh base(dims);
  constexpr int64_t kVector = 8;
  bool reduction =
      std::any_of(dims.begin(), dims.end(), [](const ScheduleDim &d) { return d.reduced; });
  if (reduction) { // rows in parallel, each row's reduction a serial loop
    RowSplit split = rowSplit(dims, sizes);
    return cpuRowSchedule(dims, split.perm, split.rows);
  }
  int64_t n = base.inputNumElements();
  // A batch is not padded: its rows keep their own blocks, however short. It leads the grid
  // (a block's batch coordinate is then a quotient by static sizes, never one by the call's
  // rows), so the innermost of the other dims is the vector loop. A tensor whose last dim is
  // s0 ([H, D, T]: a transposed key) keeps its order: the vector loop runs over T, up to the
  // call's, and stores contiguous elements.
  bool batch = anyHoldsBatch(dims, sizes);
  std::vector<int64_t> order = batchFirst(dims, sizes);
  if (dims.size() > 1 && sizes.holdsBatch(dims.back().size))
    std::iota(order.begin(), order.end(), int64_t{0});
  if (!batch && hints.order.size() == dims.size())
    order = hints.order;
  if (!std::is_sorted(order.begin(), order.end()))
    base = base.transpose(order);
  // Rows of the innermost dimension when it fills a vector: the inner loop then walks
  // contiguous elements, which LLVM vectorizes; otherwise flat chunks of one vector.
  int64_t inner = dims.empty() ? 1 : dims[order.back()].size;
  if (dims.size() > 1 && (sizes.holdsBatch(inner) || inner >= hints.minRow || batch)) {
    ScheduleMesh m = base.reshape({n / inner, inner});
    return {m, loopDescriptors(m, {LoopType::S0x, LoopType::Vectorize})};
  }
  ScheduleMesh m = batch ? base.reshape({n, 1})
                         : base.reshape({n}).roundUpPadding({kVector}).reshape({-1, kVector});
  return {m, loopDescriptors(m, {LoopType::S0x, LoopType::Vectorize})};
}

std::optional<Schedule> cpuLaneReductionSchedule(const std::vector<ScheduleDim> &dims,
                                                 const SizeStandIns &sizes) {
  // Shorter rows (a 7x7 feature map's) gain too: the lanes' loop holds the unrolled taps.
  constexpr int64_t kMinLanes = 4;
  if (dims.empty() || dims.back().reduced || dims.back().size < kMinLanes ||
      sizes.holdsBatch(dims.back().size))
    return std::nullopt;
  std::vector<int64_t> perm;
  int64_t rows = 1, reduce = 1;
  for (bool reduced : {false, true})
    for (int64_t i : batchFirst(dims, sizes))
      if (dims[i].reduced == reduced && i + 1 != static_cast<int64_t>(dims.size())) {
        if (reduced && sizes.holdsBatch(dims[i].size))
          return std::nullopt;
        perm.push_back(i);
        (reduced ? reduce : rows) *= dims[i].size;
      }
  if (reduce == 1)
    return std::nullopt;
  perm.push_back(static_cast<int64_t>(dims.size()) - 1);
  ScheduleMesh m(dims);
  if (!std::is_sorted(perm.begin(), perm.end()))
    m = m.transpose(perm);
  m = m.reshape({rows, reduce, dims.back().size});
  return Schedule{m, loopDescriptors(m, {LoopType::S0x, LoopType::Temporal, LoopType::Vectorize})};
}

bool padsBatch(const ScheduleMesh &mesh, const SizeStandIns &sizes) {
  for (const ScheduleMesh::Step &step : mesh.steps())
    if (step.kind == ScheduleMesh::Step::Kind::Padding)
      for (size_t d = 0; d < step.before.size(); ++d)
        if (sizes.holdsBatch(step.before[d]) && step.after[d] != step.before[d])
          return true;
  return false;
}

std::optional<PaddedRow> paddedBatchRow(const Schedule &schedule, const SizeStandIns &sizes) {
  int64_t trips = 1, threads = 1;
  for (const LoopDescriptor &l : schedule.loops) {
    if (l.type == LoopType::Temporal)
      trips = l.size;
    if (l.type == LoopType::S1x)
      threads = l.size;
  }
  std::optional<PaddedRow> row;
  for (const ScheduleMesh::Step &step : schedule.mesh.steps())
    if (step.kind == ScheduleMesh::Step::Kind::Padding)
      for (size_t d = 0; d < step.before.size(); ++d)
        if (sizes.holdsBatch(step.before[d]) && step.after[d] != step.before[d]) {
          if (row || step.after[d] != trips * threads)
            return std::nullopt;
          row = PaddedRow{step.before[d], threads};
        }
  return row;
}

std::string loopText(const Schedule &schedule, size_t loop, const SizeStandIns *sizes) {
  const LoopDescriptor &l = schedule.loops[loop];
  std::optional<PaddedRow> row;
  if (sizes && l.type == LoopType::Temporal && (row = paddedBatchRow(schedule, *sizes)))
    return l.iterator + "=0..ceil(" + sizes->sizeText(row->size, true) + "/" +
           std::to_string(row->threads) + ")";
  return l.str(sizes);
}

} // namespace sotc::sched
