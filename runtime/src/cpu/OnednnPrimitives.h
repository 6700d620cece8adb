//===- OnednnPrimitives.h - float32 GEMM steps as oneDNN primitives -----------------------===//
//
// oneDNN's matmul primitive picks and generates kernels for the one shape it is created for
// (its brgemm kernels): on the models' batched attention products it runs 1.5-1.9x faster
// than dnnl_sgemm called per product, and on their projections 1.2-1.3x, while dnnl_sgemm stays
// ahead on GEMMs of more than a GFLOP, on products whose left operand is shared by the batch
// (a convolution's filters: oneDNN 2 has only its reference kernel for those) and on
// matrix-vector products (docs/benchmarks.md#gemm). A step's activation is the matmul
// primitive's post-op, applied to each tile before it is stored; after dnnl_sgemm, it is an
// eltwise primitive over C. A step's primitives are created when the step first runs and kept
// for the process, keyed by the step's shape.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_RUNTIME_CPU_ONEDNNPRIMITIVES_H
#define SOTC_RUNTIME_CPU_ONEDNNPRIMITIVES_H

#include "runtime/src/ConvPlan.h"
#include "runtime/src/GemmPlan.h"
#include "runtime/src/cpu/GemmLibraries.h"

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace sotc::runtime::cpu {

/// Whether a validated float32 step is one the matmul primitive runs faster than dnnl_sgemm:
/// products of at most a GFLOP each and of at least 16 rows, A not shared by the batch, C
/// overwritten (beta 0, or 1 over the bias), alpha 1 where there is a bias.
bool prefersMatmulPrimitive(const GemmPlan &plan);

/// Runs a float32 step that prefersMatmulPrimitive() takes, or a bfloat16 step whose C is
/// overwritten (beta 0, or 1 over the bias with alpha 1), as one matmul primitive of `onednn`
/// (bfloat16: float32 accumulation, AMX or AVX-512 BF16 kernels where the CPU has them), its
/// activation included; false, with nothing written, where that oneDNN has no primitive API
/// of oneDNN 2's, or only its reference kernel for the shape (then dnnl_sgemm runs it, or the
/// bfloat16 operands widened). Safe to call from several threads at once; E8003 where a
/// primitive fails to run.
bool runMatmulPrimitive(const Onednn &onednn, const GemmPlan &plan, void *c, const void *a,
                        const void *b, const void *bias);

/// Applies a float32 step's activation to its C in place, as an eltwise primitive (vectorized
/// and threaded by oneDNN); false, with nothing written, where there is none.
bool runActivationPrimitive(const Onednn &onednn, const GemmPlan &plan, float *c);

/// Convolution weights in the layouts their primitives read, each packed on its first use: a
/// backend's, for the weights of the model it runs (clear() when they change).
class PackedWeights {
public:
  PackedWeights();
  ~PackedWeights();
  void clear();
  /// The packed copy of `weight` for the primitive layout `layout`, or null.
  const void *find(const void *weight, const void *layout);
  /// Keeps `data` (aligned_alloc'ed; freed here) as that copy and returns it (or the copy
  /// another thread kept first).
  const void *keep(const void *weight, const void *layout, void *data);

private:
  struct Packed;
  std::mutex mutex_;
  std::map<std::pair<const void *, const void *>, std::unique_ptr<Packed>> packed_;
};

/// Runs a validated float32 convolution step as one oneDNN convolution primitive with its
/// epilogue as post-ops (bias, the residual as a sum, the activation), on the layouts oneDNN
/// picks for it: x and the result reordered from and to NCHW on the way, the weight packed
/// once into `packed` where the plan says it is constant. False, with nothing written, where
/// that oneDNN has no primitive API of oneDNN 2's or only its reference kernel. Safe to call
/// from several threads at once.
bool runConvPrimitive(const Onednn &onednn, const ConvPlan &plan, float *out, const float *x,
                      const float *weight, const float *bias, const float *residual,
                      PackedWeights &packed);

/// Copies an NCHW tensor of `dims` into `layout` (or back, `toChained` false), with a reorder
/// primitive; E8003 where oneDNN has none.
void relayout(const Onednn &onednn, const std::array<int64_t, 4> &dims, ChainLayout layout,
              bool toChained, const float *in, float *out);

/// Why `onednn` (its handle set) has no primitives (its API is not oneDNN 2's, a function is
/// missing), or "" where it has.
std::string whyNoPrimitives(const Onednn &onednn);

} // namespace sotc::runtime::cpu

#endif // SOTC_RUNTIME_CPU_ONEDNNPRIMITIVES_H
