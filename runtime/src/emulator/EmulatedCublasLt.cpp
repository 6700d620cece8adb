// The emulated cuBLASLt: the descriptors, layouts and heuristic calls the CUDA backend makes,
// and cublasLtMatmul's column-major semantics computed with float (double for double)
// accumulation: D = epilogue(alpha * op(A) * op(B) + beta * C), the bias a vector over D's
// rows. Products are summed in double and rounded once. Every operand is checked against the
// emulated device's allocations.
#include "runtime/src/Error.h"
#include "runtime/src/emulator/EmulatedCuda.h"
#include "runtime/src/emulator/Half.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace sotc::runtime::emulator {
namespace {

using namespace cuda::lt;

struct HandleState {
  int magic = 0x4c54;
};
struct DescState {
  int compute = 0, scale = 0;
  int32_t transA = 0, transB = 0;
  uint32_t epilogue = EpilogueDefault;
  const void *bias = nullptr;
};
struct LayoutState {
  int type = 0;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch = 1;
  int64_t stride = 0;
};
struct PreferenceState {
  uint64_t workspace = 0;
};

template <typename T> bool readAttribute(T &out, const void *buf, size_t size) {
  if (!buf || size != sizeof(T))
    return false;
  std::memcpy(&out, buf, sizeof(T));
  return true;
}

size_t bytesOf(int type) { return type == R64F ? 8 : type == R32F ? 4 : 2; }
bool knownType(int type) { return type == R32F || type == R64F || type == R16F || type == R16BF; }

double load(const uint8_t *base, int type, uint64_t index) {
  const uint8_t *p = base + index * bytesOf(type);
  switch (type) {
  case R64F: {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  case R32F: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case R16BF: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return bfloatToFloat(h);
  }
  default: { // R16F
    uint16_t h;
    std::memcpy(&h, p, 2);
    return halfToFloat(h);
  }
  }
}

void store(uint8_t *base, int type, uint64_t index, double value) {
  uint8_t *p = base + index * bytesOf(type);
  if (type == R64F) {
    std::memcpy(p, &value, 8);
    return;
  }
  float f = static_cast<float>(value);
  if (type == R32F) {
    std::memcpy(p, &f, 4);
    return;
  }
  uint16_t h = type == R16BF ? floatToBfloat(f) : floatToHalf(f);
  std::memcpy(p, &h, 2);
}

/// The bytes a layout spans from its first element, all batches included.
uint64_t extent(const LayoutState &l) {
  uint64_t one = (l.cols - 1) * static_cast<uint64_t>(l.ld) + l.rows;
  return (static_cast<uint64_t>(l.batch - 1) * static_cast<uint64_t>(l.stride) + one) *
         bytesOf(l.type);
}

void checkOperand(const void *p, uint64_t bytes, const char *name) {
  std::string why;
  if (!deviceRange(reinterpret_cast<uint64_t>(p), bytes, &why))
    throw Error(ErrorCode::EmulatorFault, std::string("CUDA emulator: cublasLtMatmul's ") + name + " (" +
                             std::to_string(bytes) + " bytes at " +
                             std::to_string(reinterpret_cast<uint64_t>(p)) + "): " + why);
}

Status create(Handle *h) {
  if (!h)
    return StatusInvalidValue;
  *h = reinterpret_cast<Handle>(new HandleState);
  return StatusSuccess;
}
Status destroy(Handle h) {
  delete reinterpret_cast<HandleState *>(h);
  return StatusSuccess;
}

Status descCreate(Desc *d, int compute, int scale) {
  if (!d || !((compute == Compute32F && scale == R32F) || (compute == Compute64F && scale == R64F)))
    return StatusNotSupported;
  auto *s = new DescState;
  s->compute = compute;
  s->scale = scale;
  *d = reinterpret_cast<Desc>(s);
  return StatusSuccess;
}
Status descDestroy(Desc d) {
  delete reinterpret_cast<DescState *>(d);
  return StatusSuccess;
}
Status descSet(Desc d, int attribute, const void *buf, size_t size) {
  auto *s = reinterpret_cast<DescState *>(d);
  if (!s)
    return StatusNotInitialized;
  switch (attribute) {
  case DescTransA:
    return readAttribute(s->transA, buf, size) && s->transA <= 1 ? StatusSuccess : StatusInvalidValue;
  case DescTransB:
    return readAttribute(s->transB, buf, size) && s->transB <= 1 ? StatusSuccess : StatusInvalidValue;
  case DescEpilogue:
    if (!readAttribute(s->epilogue, buf, size))
      return StatusInvalidValue;
    return (s->epilogue & ~(EpilogueRelu | EpilogueBias | EpilogueGelu | EpilogueDefault)) ||
                   ((s->epilogue & EpilogueRelu) && (s->epilogue & EpilogueGelu))
               ? StatusNotSupported
               : StatusSuccess;
  case DescBiasPointer:
    return readAttribute(s->bias, buf, size) ? StatusSuccess : StatusInvalidValue;
  }
  return StatusNotSupported;
}

Status layoutCreate(Layout *l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  if (!l || !knownType(type))
    return StatusNotSupported;
  if (rows == 0 || cols == 0 || ld < static_cast<int64_t>(rows))
    return StatusInvalidValue;
  auto *s = new LayoutState;
  s->type = type;
  s->rows = rows;
  s->cols = cols;
  s->ld = ld;
  *l = reinterpret_cast<Layout>(s);
  return StatusSuccess;
}
Status layoutDestroy(Layout l) {
  delete reinterpret_cast<LayoutState *>(l);
  return StatusSuccess;
}
Status layoutSet(Layout l, int attribute, const void *buf, size_t size) {
  auto *s = reinterpret_cast<LayoutState *>(l);
  if (!s)
    return StatusNotInitialized;
  if (attribute == LayoutBatchCount)
    return readAttribute(s->batch, buf, size) && s->batch >= 1 ? StatusSuccess : StatusInvalidValue;
  if (attribute == LayoutBatchOffset)
    return readAttribute(s->stride, buf, size) && s->stride >= 0 ? StatusSuccess : StatusInvalidValue;
  return StatusNotSupported;
}

Status preferenceCreate(Preference *p) {
  if (!p)
    return StatusInvalidValue;
  *p = reinterpret_cast<Preference>(new PreferenceState);
  return StatusSuccess;
}
Status preferenceDestroy(Preference p) {
  delete reinterpret_cast<PreferenceState *>(p);
  return StatusSuccess;
}
Status preferenceSet(Preference p, int attribute, const void *buf, size_t size) {
  auto *s = reinterpret_cast<PreferenceState *>(p);
  if (!s)
    return StatusNotInitialized;
  if (attribute != PreferenceMaxWorkspace)
    return StatusNotSupported;
  return readAttribute(s->workspace, buf, size) ? StatusSuccess : StatusInvalidValue;
}

/// Whether the operands make one product: op(A) m x k, op(B) k x n, C and D m x n.
bool consistent(const DescState &d, const LayoutState &a, const LayoutState &b,
                const LayoutState &c, const LayoutState &out) {
  uint64_t m = d.transA ? a.cols : a.rows, k = d.transA ? a.rows : a.cols;
  uint64_t kb = d.transB ? b.cols : b.rows, n = d.transB ? b.rows : b.cols;
  bool f64 = d.compute == Compute64F;
  auto typeOk = [&](const LayoutState &l) { return (l.type == R64F) == f64; };
  return k == kb && c.rows == m && c.cols == n && out.rows == m && out.cols == n &&
         typeOk(a) && typeOk(b) && typeOk(c) && typeOk(out) && a.batch == b.batch &&
         a.batch == c.batch && c.batch == out.batch;
}

Status heuristic(Handle h, Desc desc, Layout a, Layout b, Layout c, Layout d, Preference p,
                 int requested, Heuristic *results, int *returned) {
  auto *ds = reinterpret_cast<DescState *>(desc);
  auto *as = reinterpret_cast<LayoutState *>(a), *bs = reinterpret_cast<LayoutState *>(b),
       *cs = reinterpret_cast<LayoutState *>(c), *os = reinterpret_cast<LayoutState *>(d);
  if (!h || !ds || !as || !bs || !cs || !os || !p || requested < 1 || !results || !returned)
    return StatusInvalidValue;
  *returned = 0;
  if (!consistent(*ds, *as, *bs, *cs, *os))
    return StatusNotSupported;
  std::memset(&results[0], 0, sizeof(Heuristic));
  results[0].algo.data[0] = 0x454d55; // "EMU": the one algorithm
  results[0].wavesCount = 1;
  *returned = 1;
  return StatusSuccess;
}

Status matmul(Handle h, Desc desc, const void *alpha, const void *A, Layout a, const void *B,
              Layout b, const void *beta, const void *C, Layout c, void *D, Layout d,
              const Algo *algo, void *workspace, size_t workspaceBytes, cuda::CUstream) {
  auto *ds = reinterpret_cast<DescState *>(desc);
  auto *as = reinterpret_cast<LayoutState *>(a), *bs = reinterpret_cast<LayoutState *>(b),
       *cs = reinterpret_cast<LayoutState *>(c), *os = reinterpret_cast<LayoutState *>(d);
  if (!h || !ds || !as || !bs || !cs || !os || !alpha || !beta || !algo || !A || !B || !D)
    return StatusInvalidValue;
  if (!consistent(*ds, *as, *bs, *cs, *os) || algo->data[0] != 0x454d55)
    return StatusInvalidValue;
  bool f64 = ds->compute == Compute64F;
  double al = f64 ? *static_cast<const double *>(alpha) : *static_cast<const float *>(alpha);
  double be = f64 ? *static_cast<const double *>(beta) : *static_cast<const float *>(beta);
  uint64_t m = os->rows, n = os->cols, k = ds->transA ? as->rows : as->cols;
  checkOperand(A, extent(*as), "A");
  checkOperand(B, extent(*bs), "B");
  if (be != 0)
    checkOperand(C, extent(*cs), "C");
  checkOperand(D, extent(*os), "D");
  bool bias = ds->epilogue & EpilogueBias;
  if (bias) {
    if (!ds->bias)
      return StatusInvalidValue;
    checkOperand(ds->bias, m * bytesOf(os->type), "bias");
  }
  if (workspace && workspaceBytes)
    checkOperand(workspace, workspaceBytes, "workspace");
  const auto *pa = static_cast<const uint8_t *>(A), *pb = static_cast<const uint8_t *>(B),
             *pc = static_cast<const uint8_t *>(C);
  auto *pd = static_cast<uint8_t *>(D);
  // op(A) as column-major m x k and op(B) as k x n. Products are summed in double and the
  // result rounded once: cuBLASLt's order of summation is its algorithm's own, and a result
  // nearer the exact one measures sotc's kernels rather than a guess at that order.
  std::vector<double> opA(m * k), opB(k * n), acc(m);
  for (int32_t batch = 0; batch < os->batch; ++batch) {
    uint64_t offA = static_cast<uint64_t>(batch) * static_cast<uint64_t>(as->stride),
             offB = static_cast<uint64_t>(batch) * static_cast<uint64_t>(bs->stride),
             offC = static_cast<uint64_t>(batch) * static_cast<uint64_t>(cs->stride),
             offD = static_cast<uint64_t>(batch) * static_cast<uint64_t>(os->stride);
    for (uint64_t p = 0; p < k; ++p)
      for (uint64_t i = 0; i < m; ++i)
        opA[i + p * m] = load(pa, as->type, offA + (ds->transA ? p + i * as->ld : i + p * as->ld));
    for (uint64_t j = 0; j < n; ++j)
      for (uint64_t p = 0; p < k; ++p)
        opB[p + j * k] = load(pb, bs->type, offB + (ds->transB ? j + p * bs->ld : p + j * bs->ld));
    for (uint64_t j = 0; j < n; ++j) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (uint64_t p = 0; p < k; ++p) {
        double x = opB[p + j * k];
        const double *column = opA.data() + p * m;
        for (uint64_t i = 0; i < m; ++i)
          acc[i] += column[i] * x;
      }
      for (uint64_t i = 0; i < m; ++i) {
        double v = al * acc[i];
        if (be != 0)
          v += be * load(pc, cs->type, offC + i + j * cs->ld);
        if (bias)
          v += load(static_cast<const uint8_t *>(ds->bias), os->type, i);
        if (!f64)
          v = static_cast<float>(v);
        if (ds->epilogue & EpilogueRelu)
          v = v > 0 ? v : 0;
        if (ds->epilogue & EpilogueGelu) // cuBLASLt's GELU: the tanh approximation
          v = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        store(pd, os->type, offD + i + j * os->ld, v);
      }
    }
  }
  return StatusSuccess;
}

} // namespace

const cuda::lt::Api &emulatedCublasLt() {
  static const cuda::lt::Api table{create,      destroy,        descCreate,       descDestroy,
                                   descSet,     layoutCreate,   layoutDestroy,    layoutSet,
                                   preferenceCreate, preferenceDestroy, preferenceSet,
                                   heuristic,   matmul};
  return table;
}

} // namespace sotc::runtime::emulator
