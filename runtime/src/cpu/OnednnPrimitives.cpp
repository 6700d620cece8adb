#include "runtime/src/cpu/OnednnPrimitives.h"

#include "runtime/src/Error.h"

#include <oneapi/dnnl/dnnl.h> // oneDNN 2's C API: the types only, the functions come from dlsym

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace sotc::runtime::cpu {
namespace {

/// Above this, a product runs faster on dnnl_sgemm (measured: ResNet-18's convolution GEMMs and
/// a BERT-base MLP's, 1.8-4.8 GFLOP, ran 10-35% slower as primitives; the transformers'
/// projections, 0.1-0.5 GFLOP, 20-30% faster).
constexpr double kPrimitiveMaxFlops = 1e9;
/// Below this many rows, dnnl_sgemm's matrix-vector kernels win (1 x 512 x 1000: 2.4x).
constexpr int64_t kPrimitiveMinRows = 16;
/// The distinct shapes a process keeps primitives for: a dynamic batch makes one per batch size
/// it meets; past this, steps run on dnnl_sgemm.
constexpr size_t kMaxPrimitives = 512;

/// oneDNN 2's primitive API (matmul, eltwise), looked up in the loaded oneDNN.
struct Api {
  decltype(&dnnl_engine_create) engineCreate = nullptr;
  decltype(&dnnl_stream_create) streamCreate = nullptr;
  decltype(&dnnl_stream_destroy) streamDestroy = nullptr;
  decltype(&dnnl_stream_wait) streamWait = nullptr;
  decltype(&dnnl_memory_desc_init_by_strides) describe = nullptr;
  decltype(&dnnl_memory_desc_get_size) describedSize = nullptr;
  decltype(&dnnl_memory_create) memoryCreate = nullptr;
  decltype(&dnnl_memory_destroy) memoryDestroy = nullptr;
  decltype(&dnnl_matmul_desc_init) matmulInit = nullptr;
  decltype(&dnnl_primitive_attr_create) attrCreate = nullptr;
  decltype(&dnnl_primitive_attr_destroy) attrDestroy = nullptr;
  decltype(&dnnl_primitive_attr_set_scratchpad_mode) attrScratchpad = nullptr;
  decltype(&dnnl_primitive_attr_set_output_scales) attrScales = nullptr;
  decltype(&dnnl_primitive_attr_set_post_ops) attrPostOps = nullptr;
  decltype(&dnnl_post_ops_create) postOpsCreate = nullptr;
  decltype(&dnnl_post_ops_destroy) postOpsDestroy = nullptr;
  decltype(&dnnl_post_ops_append_eltwise) postOpsEltwise = nullptr;
  decltype(&dnnl_eltwise_forward_desc_init) eltwiseInit = nullptr;
  decltype(&dnnl_primitive_desc_create) descCreate = nullptr;
  decltype(&dnnl_primitive_desc_destroy) descDestroy = nullptr;
  decltype(&dnnl_primitive_desc_query) descQuery = nullptr;
  decltype(&dnnl_primitive_desc_query_md) descQueryMd = nullptr;
  decltype(&dnnl_primitive_create) primitiveCreate = nullptr;
  decltype(&dnnl_primitive_execute) execute = nullptr;
  dnnl_engine_t engine = nullptr;
  std::string failure; // why there are no primitives, or ""
};

template <typename F> void lookUp(void *handle, F &f, const char *name, std::string &missing) {
  f = reinterpret_cast<F>(dlsym(handle, name));
  if (!f)
    missing += (missing.empty() ? "" : ", ") + std::string(name);
}

Api loadApi(void *handle) {
  Api api;
  struct Version {
    int major, minor, patch;
  };
  auto version = reinterpret_cast<const Version *(*)()>(dlsym(handle, "dnnl_version"));
  // oneDNN 3 replaced the operation descriptors (dnnl_matmul_desc_init) and made memory
  // descriptors opaque: its matmul API is another one.
  if (!version || version()->major != 2) {
    api.failure = "no matmul primitives: oneDNN 2's API is the one sotc calls";
    return api;
  }
  std::string missing;
  lookUp(handle, api.engineCreate, "dnnl_engine_create", missing);
  lookUp(handle, api.streamCreate, "dnnl_stream_create", missing);
  lookUp(handle, api.streamDestroy, "dnnl_stream_destroy", missing);
  lookUp(handle, api.streamWait, "dnnl_stream_wait", missing);
  lookUp(handle, api.describe, "dnnl_memory_desc_init_by_strides", missing);
  lookUp(handle, api.describedSize, "dnnl_memory_desc_get_size", missing);
  lookUp(handle, api.memoryCreate, "dnnl_memory_create", missing);
  lookUp(handle, api.memoryDestroy, "dnnl_memory_destroy", missing);
  lookUp(handle, api.matmulInit, "dnnl_matmul_desc_init", missing);
  lookUp(handle, api.attrCreate, "dnnl_primitive_attr_create", missing);
  lookUp(handle, api.attrDestroy, "dnnl_primitive_attr_destroy", missing);
  lookUp(handle, api.attrScratchpad, "dnnl_primitive_attr_set_scratchpad_mode", missing);
  lookUp(handle, api.attrScales, "dnnl_primitive_attr_set_output_scales", missing);
  lookUp(handle, api.attrPostOps, "dnnl_primitive_attr_set_post_ops", missing);
  lookUp(handle, api.postOpsCreate, "dnnl_post_ops_create", missing);
  lookUp(handle, api.postOpsDestroy, "dnnl_post_ops_destroy", missing);
  lookUp(handle, api.postOpsEltwise, "dnnl_post_ops_append_eltwise", missing);
  lookUp(handle, api.eltwiseInit, "dnnl_eltwise_forward_desc_init", missing);
  lookUp(handle, api.descCreate, "dnnl_primitive_desc_create", missing);
  lookUp(handle, api.descDestroy, "dnnl_primitive_desc_destroy", missing);
  lookUp(handle, api.descQuery, "dnnl_primitive_desc_query", missing);
  lookUp(handle, api.descQueryMd, "dnnl_primitive_desc_query_md", missing);
  lookUp(handle, api.primitiveCreate, "dnnl_primitive_create", missing);
  lookUp(handle, api.execute, "dnnl_primitive_execute", missing);
  if (!missing.empty())
    api.failure = "no matmul primitives: the oneDNN loaded lacks " + missing;
  else if (api.engineCreate(&api.engine, dnnl_cpu, 0) != dnnl_success)
    api.failure = "no matmul primitives: oneDNN creates no CPU engine";
  return api;
}

/// The API of the one oneDNN a process loads (GemmLibraries.h opens it once).
const Api &apiOf(void *handle) {
  static const Api api = loadApi(handle);
  return api;
}

/// A step's primitive and the memory descriptors it runs on; `primitive` null where oneDNN
/// has only its reference kernel for the shape.
struct Primitive {
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_desc_t a{}, b{}, c{}, bias{}, scratchpad{};
  size_t scratchpadBytes = 0;
};

/// The memory descriptor of one operand: the batch dims (size 1 where `strides` is 0: the
/// operand is broadcast there), then its two matrix dims with their strides.
bool describe(const Api &api, dnnl_memory_desc_t &md, const GemmPlan &s,
              const std::vector<int64_t> &strides, int64_t rows, int64_t cols, int64_t rowStride,
              int64_t colStride) {
  dnnl_dims_t dims{}, steps{};
  int n = 0;
  for (size_t d = 0; d < s.batch.size(); ++d, ++n) {
    bool broadcast = strides[d] == 0;
    dims[n] = broadcast ? 1 : s.batch[d];
    steps[n] = broadcast ? 1 : strides[d];
  }
  dims[n] = rows, steps[n++] = rowStride;
  dims[n] = cols, steps[n++] = colStride;
  return api.describe(&md, n, dims, dnnl_f32, steps) == dnnl_success;
}

/// oneDNN's algorithm for an activation.
dnnl_alg_kind_t algorithmOf(GemmPlan::Activation activation) {
  switch (activation) {
  case GemmPlan::Activation::Relu:
    return dnnl_eltwise_relu;
  case GemmPlan::Activation::GeluTanh:
    return dnnl_eltwise_gelu_tanh;
  case GemmPlan::Activation::GeluErf:
    return dnnl_eltwise_gelu_erf;
  case GemmPlan::Activation::None:
    break;
  }
  return dnnl_alg_kind_undef;
}

/// The primitive of an operation descriptor with the caller's scratchpad (a primitive on the
/// library's shared one could not run on two threads at once: one artifact called from several
/// threads), alpha as its output scale and the activation as its post-op; `p.primitive` stays
/// null where oneDNN offers only its reference kernel or refuses the operation.
void finish(const Api &api, Primitive &p, const_dnnl_op_desc_t op, float alpha,
            GemmPlan::Activation activation) {
  dnnl_primitive_attr_t attr = nullptr;
  if (api.attrCreate(&attr) != dnnl_success)
    return;
  std::unique_ptr<dnnl_primitive_attr, decltype(api.attrDestroy)> attrOwner(attr, api.attrDestroy);
  if (api.attrScratchpad(attr, dnnl_scratchpad_mode_user) != dnnl_success ||
      (alpha != 1 && api.attrScales(attr, 1, 0, &alpha) != dnnl_success))
    return;
  if (activation != GemmPlan::Activation::None) {
    dnnl_post_ops_t postOps = nullptr;
    if (api.postOpsCreate(&postOps) != dnnl_success)
      return;
    std::unique_ptr<dnnl_post_ops, decltype(api.postOpsDestroy)> postOpsOwner(postOps,
                                                                              api.postOpsDestroy);
    if (api.postOpsEltwise(postOps, 1, algorithmOf(activation), 0, 0) != dnnl_success ||
        api.attrPostOps(attr, postOps) != dnnl_success)
      return;
  }
  dnnl_primitive_desc_t desc = nullptr;
  if (api.descCreate(&desc, op, attr, api.engine, nullptr) != dnnl_success)
    return;
  std::unique_ptr<dnnl_primitive_desc, decltype(api.descDestroy)> descOwner(desc, api.descDestroy);
  const char *implementation = nullptr;
  if (api.descQuery(desc, dnnl_query_impl_info_str, 0, &implementation) != dnnl_success ||
      !implementation || std::string(implementation).rfind("ref", 0) == 0)
    return; // a scalar loop: far slower than dnnl_sgemm
  if (const dnnl_memory_desc_t *scratch = api.descQueryMd(desc, dnnl_query_scratchpad_md, 0)) {
    p.scratchpad = *scratch;
    p.scratchpadBytes = api.describedSize(scratch);
  }
  if (api.primitiveCreate(&p.primitive, desc) != dnnl_success)
    p.primitive = nullptr;
}

/// The matmul primitive of a step, its activation included.
Primitive createMatmul(const Api &api, const GemmPlan &s) {
  Primitive p;
  bool described = describe(api, p.a, s, s.strideA, s.m, s.k, s.transposeA ? 1 : s.lda,
                            s.transposeA ? s.lda : 1) &&
                   describe(api, p.b, s, s.strideB, s.k, s.n, s.transposeB ? 1 : s.ldb,
                            s.transposeB ? s.ldb : 1) &&
                   describe(api, p.c, s, s.strideC, s.m, s.n, s.ldc, 1);
  if (s.bias) {
    // n elements, broadcast over the batch and the rows.
    std::vector<int64_t> none(s.batch.size(), 0);
    described &= describe(api, p.bias, s, none, 1, s.n, s.n, 1);
  }
  dnnl_matmul_desc_t op;
  if (described &&
      api.matmulInit(&op, &p.a, &p.b, s.bias ? &p.bias : nullptr, &p.c) == dnnl_success)
    finish(api, p, &op, static_cast<float>(s.alpha), s.activation);
  return p;
}

/// The eltwise primitive that applies a step's activation to its C in place.
Primitive createActivation(const Api &api, const GemmPlan &s) {
  Primitive p;
  dnnl_eltwise_desc_t op;
  if (describe(api, p.c, s, s.strideC, s.m, s.n, s.ldc, 1) &&
      api.eltwiseInit(&op, dnnl_forward_inference, algorithmOf(s.activation), &p.c, 0, 0) ==
          dnnl_success)
    finish(api, p, &op, 1, GemmPlan::Activation::None);
  return p;
}

/// The two kinds of primitive a step may have.
enum class Kind { Matmul, Activation };

/// What a primitive is created for: its kind, every count of the step, its flags, alpha (its
/// output scale), its activation and the OpenMP team size (oneDNN splits the work when it
/// creates the primitive).
std::vector<int64_t> keyOf(Kind kind, GemmPlan s, int threads) {
  int64_t alphaBits;
  static_assert(sizeof alphaBits == sizeof s.alpha);
  std::memcpy(&alphaBits, &s.alpha, sizeof alphaBits);
  std::vector<int64_t> key{static_cast<int64_t>(kind),
                           s.transposeA,
                           s.transposeB,
                           s.bias,
                           alphaBits,
                           static_cast<int64_t>(s.activation),
                           threads,
                           static_cast<int64_t>(s.batch.size())};
  s.forEachCount([&](int64_t &count) { key.push_back(count); });
  return key;
}

/// The process's primitives: created on a step's first run, never destroyed (a primitive holds
/// generated code; the steps of every artifact loaded may run again).
class Primitives {
public:
  /// The primitive of `kind` for `s`, or null where there is none (or the cache is full).
  const Primitive *get(const Api &api, Kind kind, const GemmPlan &s, int threads) {
    std::vector<int64_t> key = keyOf(kind, s, threads);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = made_.find(key);
    if (it == made_.end()) {
      if (made_.size() >= kMaxPrimitives)
        return nullptr;
      it = made_
               .emplace(std::move(key), std::make_unique<Primitive>(kind == Kind::Matmul
                                                                        ? createMatmul(api, s)
                                                                        : createActivation(api, s)))
               .first;
    }
    return it->second->primitive ? it->second.get() : nullptr;
  }

private:
  std::mutex mutex_;
  std::map<std::vector<int64_t>, std::unique_ptr<Primitive>> made_;
};

/// A calling thread's stream and scratchpad.
struct ThreadState {
  const Api *api = nullptr;
  dnnl_stream_t stream = nullptr;
  std::unique_ptr<char, decltype(&std::free)> scratchpad{nullptr, std::free};
  size_t scratchpadBytes = 0;
  ~ThreadState() {
    if (stream)
      api->streamDestroy(stream);
  }
};

/// Runs one primitive; memory objects wrap the step's buffers for the call. An activation's
/// eltwise primitive reads and writes C (`a` and `b` null).
void execute(const Api &api, const Primitive &p, float *c, const float *a, const float *b,
             const float *bias) {
  thread_local ThreadState local;
  if (!local.stream) {
    if (api.streamCreate(&local.stream, api.engine, dnnl_stream_default_flags) != dnnl_success)
      throw Error("E8003", "oneDNN creates no stream for its primitives");
    local.api = &api;
  }
  if (local.scratchpadBytes < p.scratchpadBytes) {
    local.scratchpad.reset(
        static_cast<char *>(std::aligned_alloc(64, (p.scratchpadBytes + 63) / 64 * 64)));
    if (!local.scratchpad)
      throw Error("E8005", "cannot allocate a GEMM's scratchpad of " +
                               std::to_string(p.scratchpadBytes) + " bytes");
    local.scratchpadBytes = p.scratchpadBytes;
  }
  struct Operand {
    int arg;
    const dnnl_memory_desc_t *md;
    const void *data;
  };
  std::vector<Operand> operands = {{DNNL_ARG_DST, &p.c, c}};
  if (a)
    operands.insert(operands.end(), {{DNNL_ARG_SRC, &p.a, a}, {DNNL_ARG_WEIGHTS, &p.b, b}});
  else
    operands.push_back({DNNL_ARG_SRC, &p.c, c});
  if (bias)
    operands.push_back({DNNL_ARG_BIAS, &p.bias, bias});
  if (p.scratchpadBytes)
    operands.push_back({DNNL_ARG_SCRATCHPAD, &p.scratchpad, local.scratchpad.get()});
  std::vector<dnnl_exec_arg_t> args;
  auto release = [&] {
    for (dnnl_exec_arg_t &arg : args)
      api.memoryDestroy(arg.memory);
  };
  for (const Operand &o : operands) {
    dnnl_memory_t memory = nullptr;
    if (api.memoryCreate(&memory, o.md, api.engine, const_cast<void *>(o.data)) != dnnl_success) {
      release();
      throw Error("E8003", "oneDNN refused a primitive's operand");
    }
    args.push_back({o.arg, memory});
  }
  dnnl_status_t ran =
      api.execute(p.primitive, local.stream, static_cast<int>(args.size()), args.data());
  if (ran == dnnl_success)
    ran = api.streamWait(local.stream);
  release();
  if (ran != dnnl_success)
    throw Error("E8003", "oneDNN failed to run a primitive (status " +
                             std::to_string(static_cast<int>(ran)) + ")");
}

/// Runs the process's primitive of `kind` for `s` (created on its first run, for the calling
/// thread's OpenMP team size: oneDNN splits the work when it creates a primitive); false where
/// there is none.
bool run(const Onednn &onednn, Kind kind, const GemmPlan &s, float *c, const float *a,
         const float *b, const float *bias) {
  const Api &api = apiOf(onednn.handle);
  if (!api.failure.empty())
    return false;
  static Primitives primitives;
  const Primitive *p = primitives.get(api, kind, s, onednn.maxThreads ? onednn.maxThreads() : 1);
  if (!p)
    return false;
  execute(api, *p, c, a, b, bias);
  return true;
}

} // namespace

bool prefersMatmulPrimitive(const GemmPlan &s) {
  if (s.type != GemmPlan::Type::F32 || s.m < kPrimitiveMinRows ||
      2.0 * s.m * s.n * s.k > kPrimitiveMaxFlops || s.batch.size() > DNNL_MAX_NDIMS - 2)
    return false;
  for (size_t d = 0; d < s.batch.size(); ++d)
    if (s.strideA[d] == 0 && s.batch[d] > 1)
      return false; // oneDNN 2 runs a shared left operand on its reference kernel only
  if (s.bias)
    return s.beta == 1 && s.alpha == 1;
  return s.beta == 0;
}

bool runMatmulPrimitive(const Onednn &onednn, const GemmPlan &s, float *c, const float *a,
                        const float *b, const float *bias) {
  return run(onednn, Kind::Matmul, s, c, a, b, bias);
}

bool runActivationPrimitive(const Onednn &onednn, const GemmPlan &s, float *c) {
  return s.type == GemmPlan::Type::F32 &&
         run(onednn, Kind::Activation, s, c, nullptr, nullptr, nullptr);
}

std::string whyNoMatmulPrimitives(const Onednn &onednn) { return apiOf(onednn.handle).failure; }

} // namespace sotc::runtime::cpu
