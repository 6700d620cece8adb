#include "runtime/src/cpu/OnednnPrimitives.h"

#include "runtime/src/Error.h"

#include <oneapi/dnnl/dnnl.h> // oneDNN 2's C API: the types only, the functions come from dlsym

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <functional>
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
  // Convolutions: their descriptors, the layouts they pick and the reorders into those.
  decltype(&dnnl_memory_desc_init_by_tag) describeByTag = nullptr;
  decltype(&dnnl_memory_desc_equal) sameDescription = nullptr;
  decltype(&dnnl_dilated_convolution_forward_desc_init) convolutionInit = nullptr;
  decltype(&dnnl_reorder_primitive_desc_create) reorderCreate = nullptr;
  decltype(&dnnl_post_ops_append_sum) postOpsSum = nullptr;
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
    api.failure = "no primitives: oneDNN 2's API is the one sotc calls";
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
  lookUp(handle, api.describeByTag, "dnnl_memory_desc_init_by_tag", missing);
  lookUp(handle, api.sameDescription, "dnnl_memory_desc_equal", missing);
  lookUp(handle, api.convolutionInit, "dnnl_dilated_convolution_forward_desc_init", missing);
  lookUp(handle, api.reorderCreate, "dnnl_reorder_primitive_desc_create", missing);
  lookUp(handle, api.postOpsSum, "dnnl_post_ops_append_sum", missing);
  if (!missing.empty())
    api.failure = "no primitives: the oneDNN loaded lacks " + missing;
  else if (api.engineCreate(&api.engine, dnnl_cpu, 0) != dnnl_success)
    api.failure = "no primitives: oneDNN creates no CPU engine";
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

  bool usable() const { return primitive != nullptr; }
};

/// The memory descriptor of one operand: the batch dims (size 1 where `strides` is 0: the
/// operand is broadcast there), then its two matrix dims with their strides.
bool describe(const Api &api, dnnl_memory_desc_t &md, const GemmPlan &s,
              const std::vector<int64_t> &strides, int64_t rows, int64_t cols, int64_t rowStride,
              int64_t colStride, GemmPlan::Type element) {
  dnnl_data_type_t type = element == GemmPlan::Type::BF16 ? dnnl_bf16 : dnnl_f32;
  dnnl_dims_t dims{}, steps{};
  int n = 0;
  for (size_t d = 0; d < s.batch.size(); ++d, ++n) {
    bool broadcast = strides[d] == 0;
    dims[n] = broadcast ? 1 : s.batch[d];
    steps[n] = broadcast ? 1 : strides[d];
  }
  dims[n] = rows, steps[n++] = rowStride;
  dims[n] = cols, steps[n++] = colStride;
  return api.describe(&md, n, dims, type, steps) == dnnl_success;
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

/// What a primitive does to its result before storing it: add what the destination held
/// (`sum`: a convolution's residual), then an eltwise function.
struct PostOps {
  bool sum = false;
  dnnl_alg_kind_t eltwise = dnnl_alg_kind_undef;
  float alpha = 0, beta = 0; // the eltwise function's parameters (clip's bounds)
};

using Desc = std::unique_ptr<dnnl_primitive_desc, dnnl_status_t (*)(dnnl_primitive_desc_t)>;

/// The attributes every primitive is created with: the caller's scratchpad (a primitive on the
/// library's shared one could not run on two threads at once: one artifact called from
/// several threads), `scale` as the output scale, and the post-ops; null where oneDNN refuses.
std::unique_ptr<dnnl_primitive_attr, dnnl_status_t (*)(dnnl_primitive_attr_t)>
attributes(const Api &api, float scale, const PostOps &post) {
  dnnl_primitive_attr_t attr = nullptr;
  std::unique_ptr<dnnl_primitive_attr, dnnl_status_t (*)(dnnl_primitive_attr_t)> none(
      nullptr, api.attrDestroy);
  if (api.attrCreate(&attr) != dnnl_success)
    return none;
  std::unique_ptr<dnnl_primitive_attr, dnnl_status_t (*)(dnnl_primitive_attr_t)> owner(
      attr, api.attrDestroy);
  if (api.attrScratchpad(attr, dnnl_scratchpad_mode_user) != dnnl_success ||
      (scale != 1 && api.attrScales(attr, 1, 0, &scale) != dnnl_success))
    return none;
  if (post.sum || post.eltwise != dnnl_alg_kind_undef) {
    dnnl_post_ops_t postOps = nullptr;
    if (api.postOpsCreate(&postOps) != dnnl_success)
      return none;
    std::unique_ptr<dnnl_post_ops, decltype(api.postOpsDestroy)> postOpsOwner(postOps,
                                                                              api.postOpsDestroy);
    if ((post.sum && api.postOpsSum(postOps, 1) != dnnl_success) ||
        (post.eltwise != dnnl_alg_kind_undef &&
         api.postOpsEltwise(postOps, 1, post.eltwise, post.alpha, post.beta) != dnnl_success) ||
        api.attrPostOps(attr, postOps) != dnnl_success)
      return none;
  }
  return owner;
}

/// The primitive descriptor of an operation with attributes(); null where oneDNN refuses the
/// operation or offers only its reference kernel (a scalar loop, far slower than the other
/// paths).
Desc describeOperation(const Api &api, const_dnnl_op_desc_t op, float scale, const PostOps &post) {
  Desc none(nullptr, api.descDestroy);
  auto attr = attributes(api, scale, post);
  dnnl_primitive_desc_t desc = nullptr;
  if (!attr || api.descCreate(&desc, op, attr.get(), api.engine, nullptr) != dnnl_success)
    return none;
  Desc owner(desc, api.descDestroy);
  const char *implementation = nullptr;
  if (api.descQuery(desc, dnnl_query_impl_info_str, 0, &implementation) != dnnl_success ||
      !implementation || std::string(implementation).rfind("ref", 0) == 0)
    return none;
  return owner;
}

/// Creates the primitive of `desc` into `primitive`, with its scratchpad's size; false where
/// oneDNN fails to.
bool create(const Api &api, const_dnnl_primitive_desc_t desc, dnnl_primitive_t &primitive,
            dnnl_memory_desc_t &scratchpad, size_t &scratchpadBytes) {
  if (const dnnl_memory_desc_t *scratch = api.descQueryMd(desc, dnnl_query_scratchpad_md, 0)) {
    scratchpad = *scratch;
    scratchpadBytes = api.describedSize(scratch);
  }
  if (api.primitiveCreate(&primitive, desc) == dnnl_success)
    return true;
  primitive = nullptr;
  return false;
}

/// The primitive of an operation descriptor with `alpha` as its output scale and the
/// activation as its post-op; `p.primitive` stays null where there is none (describeOperation).
void finish(const Api &api, Primitive &p, const_dnnl_op_desc_t op, float alpha,
            GemmPlan::Activation activation) {
  PostOps post;
  post.eltwise = algorithmOf(activation);
  if (Desc desc = describeOperation(api, op, alpha, post))
    create(api, desc.get(), p.primitive, p.scratchpad, p.scratchpadBytes);
}

/// The matmul primitive of a step, its activation included.
Primitive createMatmul(const Api &api, const GemmPlan &s) {
  Primitive p;
  GemmPlan::Type operands = s.bf16Operands() ? GemmPlan::Type::BF16 : s.type;
  bool described = describe(api, p.a, s, s.strideA, s.m, s.k, s.transposeA ? 1 : s.lda,
                            s.transposeA ? s.lda : 1, operands) &&
                   describe(api, p.b, s, s.strideB, s.k, s.n, s.transposeB ? 1 : s.ldb,
                            s.transposeB ? s.ldb : 1, operands) &&
                   describe(api, p.c, s, s.strideC, s.m, s.n, s.ldc, 1, s.type);
  if (s.bias) {
    // n elements, broadcast over the batch and the rows.
    std::vector<int64_t> none(s.batch.size(), 0);
    described &= describe(api, p.bias, s, none, 1, s.n, s.n, 1, s.type);
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
  if (describe(api, p.c, s, s.strideC, s.m, s.n, s.ldc, 1, s.type) &&
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
                           static_cast<int64_t>(s.type),
                           static_cast<int64_t>(s.bf16Operands()),
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

/// The process's primitives of one kind: created on a step's first run, never destroyed (a
/// primitive holds generated code; the steps of every artifact loaded may run again).
template <class P> class Cache {
public:
  /// The primitive for `key`, made by `make` the first time; null where there is none (or the
  /// cache is full).
  const P *get(std::vector<int64_t> key, const std::function<P()> &make) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = made_.find(key);
    if (it == made_.end()) {
      if (made_.size() >= kMaxPrimitives)
        return nullptr;
      it = made_.emplace(std::move(key), std::make_unique<P>(make())).first;
    }
    return it->second->usable() ? it->second.get() : nullptr;
  }

private:
  std::mutex mutex_;
  std::map<std::vector<int64_t>, std::unique_ptr<P>> made_;
};

/// Memory a calling thread keeps between its calls, grown as needed.
struct Scratch {
  std::unique_ptr<char, decltype(&std::free)> data{nullptr, std::free};
  size_t bytes = 0;

  char *reserve(size_t wanted, const char *what) {
    if (bytes < wanted) {
      data.reset(static_cast<char *>(std::aligned_alloc(64, (wanted + 63) / 64 * 64)));
      if (!data)
        throw Error(ErrorCode::RunFailed, "cannot allocate " + std::string(what) + " of " +
                                 std::to_string(wanted) + " bytes");
      bytes = wanted;
    }
    return data.get();
  }
};

/// A calling thread's stream and scratchpad.
struct ThreadState {
  const Api *api = nullptr;
  dnnl_stream_t stream = nullptr;
  Scratch scratchpad;
  ~ThreadState() {
    if (stream)
      api->streamDestroy(stream);
  }
};

ThreadState &threadState(const Api &api) {
  thread_local ThreadState local;
  if (!local.stream) {
    if (api.streamCreate(&local.stream, api.engine, dnnl_stream_default_flags) != dnnl_success)
      throw Error(ErrorCode::CannotRunHere, "oneDNN creates no stream for its primitives");
    local.api = &api;
  }
  return local;
}

/// One argument of a primitive's run: its role, layout and memory.
struct Operand {
  int arg;
  const dnnl_memory_desc_t *md;
  const void *data;
};

/// Runs `primitive` on the calling thread's stream; memory objects wrap the operands for the
/// call, and the thread's scratchpad serves as the primitive's.
void execute(const Api &api, dnnl_primitive_t primitive, std::vector<Operand> operands,
             const dnnl_memory_desc_t &scratchpad, size_t scratchpadBytes) {
  ThreadState &local = threadState(api);
  if (scratchpadBytes)
    operands.push_back({DNNL_ARG_SCRATCHPAD, &scratchpad,
                        local.scratchpad.reserve(scratchpadBytes, "a primitive's scratchpad")});
  std::vector<dnnl_exec_arg_t> args;
  auto release = [&] {
    for (dnnl_exec_arg_t &arg : args)
      api.memoryDestroy(arg.memory);
  };
  for (const Operand &o : operands) {
    dnnl_memory_t memory = nullptr;
    if (api.memoryCreate(&memory, o.md, api.engine, const_cast<void *>(o.data)) != dnnl_success) {
      release();
      throw Error(ErrorCode::CannotRunHere, "oneDNN refused a primitive's operand");
    }
    args.push_back({o.arg, memory});
  }
  dnnl_status_t ran =
      api.execute(primitive, local.stream, static_cast<int>(args.size()), args.data());
  if (ran == dnnl_success)
    ran = api.streamWait(local.stream);
  release();
  if (ran != dnnl_success)
    throw Error(ErrorCode::CannotRunHere, "oneDNN failed to run a primitive (status " +
                             std::to_string(static_cast<int>(ran)) + ")");
}

/// Runs the process's primitive of `kind` for `s` (created on its first run, for the calling
/// thread's OpenMP team size: oneDNN splits the work when it creates a primitive); false where
/// there is none. An activation's eltwise primitive reads and writes C (`a` and `b` null).
bool run(const Onednn &onednn, Kind kind, const GemmPlan &s, void *c, const void *a, const void *b,
         const void *bias) {
  const Api &api = apiOf(onednn.handle);
  if (!api.failure.empty())
    return false;
  static Cache<Primitive> primitives;
  const Primitive *p =
      primitives.get(keyOf(kind, s, onednn.maxThreads ? onednn.maxThreads() : 1), [&] {
        return kind == Kind::Matmul ? createMatmul(api, s) : createActivation(api, s);
      });
  if (!p)
    return false;
  std::vector<Operand> operands = {{DNNL_ARG_DST, &p->c, c}};
  if (a)
    operands.insert(operands.end(), {{DNNL_ARG_SRC, &p->a, a}, {DNNL_ARG_WEIGHTS, &p->b, b}});
  else
    operands.push_back({DNNL_ARG_SRC, &p->c, c});
  if (bias)
    operands.push_back({DNNL_ARG_BIAS, &p->bias, bias});
  execute(api, p->primitive, operands, p->scratchpad, p->scratchpadBytes);
  return true;
}

//===-- Convolutions ----------------------------------------------------------------------===//

/// A reorder between two layouts of one tensor; null where the layouts are one.
struct Reorder {
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_desc_t from{}, to{}, scratchpad{};
  size_t scratchpadBytes = 0;

  void run(const Api &api, const void *in, void *out) const {
    execute(api, primitive, {{DNNL_ARG_FROM, &from, in}, {DNNL_ARG_TO, &to, out}}, scratchpad,
            scratchpadBytes);
  }
};

/// A convolution step's primitive: on the layouts oneDNN picked for it (blocked channels,
/// where its fastest kernels read and write), with the reorders from and to the step's NCHW
/// tensors and its OIHW weight; `conv` null where oneDNN has no fast kernel for it.
struct ConvPrimitive {
  dnnl_primitive_t conv = nullptr;
  dnnl_memory_desc_t src{}, weights{}, bias{}, dst{}, scratchpad{};
  size_t scratchpadBytes = 0, srcBytes = 0, weightsBytes = 0, dstBytes = 0;
  Reorder srcIn, weightsIn, dstOut, residualIn;

  bool usable() const { return conv != nullptr; }
};

/// oneDNN's algorithm and parameters for a convolution's activation.
PostOps postOpsOf(const ConvPlan &s) {
  PostOps post;
  post.sum = s.residual;
  switch (s.activation) {
  case ConvPlan::Activation::Relu:
    post.eltwise = dnnl_eltwise_relu;
    break;
  case ConvPlan::Activation::Relu6:
    post.eltwise = dnnl_eltwise_clip, post.alpha = 0, post.beta = 6;
    break;
  case ConvPlan::Activation::Hardswish:
    post.eltwise = dnnl_eltwise_hardswish;
    break;
  case ConvPlan::Activation::None:
    break;
  }
  return post;
}

/// The reorder from layout `from` to `to`; false where oneDNN has none. None is needed (and
/// `r.primitive` stays null) where the two are one layout.
bool reorderOf(const Api &api, Reorder &r, const dnnl_memory_desc_t &from,
               const dnnl_memory_desc_t &to) {
  r.from = from, r.to = to;
  if (api.sameDescription(&from, &to))
    return true;
  auto attr = attributes(api, 1, {});
  dnnl_primitive_desc_t desc = nullptr;
  if (!attr ||
      api.reorderCreate(&desc, &from, api.engine, &to, api.engine, attr.get()) != dnnl_success)
    return false;
  Desc owner(desc, api.descDestroy);
  return create(api, desc, r.primitive, r.scratchpad, r.scratchpadBytes);
}

/// oneDNN's tag of `layout` (None: NCHW).
dnnl_format_tag_t tagOf(ChainLayout layout) {
  switch (layout) {
  case ChainLayout::ChannelsLast:
    return dnnl_nhwc;
  case ChainLayout::Blocks8:
    return dnnl_nChw8c;
  case ChainLayout::None:
    break;
  }
  return dnnl_nchw;
}

ConvPrimitive createConvolution(const Api &api, const ConvPlan &s) {
  ConvPrimitive p;
  dnnl_dims_t src{s.n, s.c, s.h, s.w}, bias{s.oc}, dst{s.n, s.oc, s.oh, s.ow};
  // Several groups: oneDNN's weight is [groups, oc / groups, c / groups, kh, kw], the same bytes.
  dnnl_dims_t weights{s.oc, s.c, s.kh, s.kw};
  int weightRank = 4;
  dnnl_format_tag_t weightTag = dnnl_oihw;
  if (s.groups > 1) {
    dnnl_dims_t grouped{s.groups, s.oc / s.groups, s.c / s.groups, s.kh, s.kw};
    std::copy(std::begin(grouped), std::begin(grouped) + 5, std::begin(weights));
    weightRank = 5;
    weightTag = dnnl_goihw;
  }
  // x, the residual and the output as the step holds them: NCHW, or channels in blocks where it
  // passes them between convolutions (the primitive then reads and writes them as they are).
  dnnl_format_tag_t chained = tagOf(s.chain);
  dnnl_format_tag_t srcTag = s.chainedInput ? chained : dnnl_nchw;
  dnnl_format_tag_t dstTag = s.chainedOutput ? chained : dnnl_nchw;
  dnnl_format_tag_t residualTag = s.chainedResidual ? chained : dnnl_nchw;
  // x of few channels (an image's 3) as NCHW: oneDNN's first-layer kernels read it as it is
  // (MobileNetV2's stem at batch 8: 1.2 ms, 2.5 with x reordered); wider, in the layout oneDNN
  // picks.
  dnnl_format_tag_t pickedTag = !s.chainedInput && s.c < 8 ? dnnl_nchw : dnnl_format_tag_any;
  dnnl_memory_desc_t pickedSrc, pickedWeights, pickedDst, heldSrc, heldWeights, heldDst,
      heldResidual;
  // oneDNN counts dilation from 0 (none), the frameworks from 1.
  dnnl_dims_t strides{s.strides[0], s.strides[1]},
      dilations{s.dilations[0] - 1, s.dilations[1] - 1}, before{s.pads[0], s.pads[2]},
      after{s.pads[1], s.pads[3]};
  // In bfloat16 the reorders into the picked layouts also round x and the weight.
  dnnl_data_type_t computed = s.bf16 ? dnnl_bf16 : dnnl_f32;
  dnnl_convolution_desc_t op;
  if (api.describeByTag(&pickedSrc, 4, src, computed, pickedTag) != dnnl_success ||
      api.describeByTag(&pickedWeights, weightRank, weights, computed, dnnl_format_tag_any) !=
          dnnl_success ||
      api.describeByTag(&pickedDst, 4, dst, dnnl_f32, dnnl_format_tag_any) != dnnl_success ||
      api.describeByTag(&p.bias, 1, bias, dnnl_f32, dnnl_x) != dnnl_success ||
      api.describeByTag(&heldSrc, 4, src, dnnl_f32, srcTag) != dnnl_success ||
      api.describeByTag(&heldWeights, weightRank, weights, dnnl_f32, weightTag) != dnnl_success ||
      api.describeByTag(&heldDst, 4, dst, dnnl_f32, dstTag) != dnnl_success ||
      api.describeByTag(&heldResidual, 4, dst, dnnl_f32, residualTag) != dnnl_success ||
      api.convolutionInit(&op, dnnl_forward_inference, dnnl_convolution_direct, &pickedSrc,
                          &pickedWeights, s.bias ? &p.bias : nullptr, &pickedDst, strides,
                          dilations, before, after) != dnnl_success)
    return p;
  Desc desc = describeOperation(api, &op, 1, postOpsOf(s));
  if (!desc)
    return p;
  p.src = *api.descQueryMd(desc.get(), dnnl_query_src_md, 0);
  p.weights = *api.descQueryMd(desc.get(), dnnl_query_weights_md, 0);
  p.dst = *api.descQueryMd(desc.get(), dnnl_query_dst_md, 0);
  p.srcBytes = api.describedSize(&p.src);
  p.weightsBytes = api.describedSize(&p.weights);
  p.dstBytes = api.describedSize(&p.dst);
  if (!reorderOf(api, p.srcIn, heldSrc, p.src) ||
      !reorderOf(api, p.weightsIn, heldWeights, p.weights) ||
      !reorderOf(api, p.dstOut, p.dst, heldDst) ||
      !reorderOf(api, p.residualIn, heldResidual, p.dst) ||
      !create(api, desc.get(), p.conv, p.scratchpad, p.scratchpadBytes))
    p.conv = nullptr;
  return p;
}

/// What a convolution primitive is created for: every size of the step, its epilogue and the
/// OpenMP team size.
std::vector<int64_t> keyOf(const ConvPlan &s, int threads) {
  std::vector<int64_t> key = {s.n,     s.c,     s.h,        s.w,
                              s.oc,    s.kh,    s.kw,       s.oh,
                              s.ow,    s.bias,  s.residual, static_cast<int64_t>(s.activation),
                              threads, s.groups};
  key.insert(key.end(), s.strides.begin(), s.strides.end());
  key.insert(key.end(), s.dilations.begin(), s.dilations.end());
  key.insert(key.end(), s.pads.begin(), s.pads.end());
  key.insert(key.end(), {static_cast<int64_t>(s.chain), s.chainedInput, s.chainedResidual,
                         s.chainedOutput, s.bf16});
  return key;
}

/// A reorder between NCHW and channels in blocks for one shape, kept for the process.
struct LayoutReorder {
  Reorder reorder;
  bool made = false;
  bool usable() const { return made; }
};

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

bool runMatmulPrimitive(const Onednn &onednn, const GemmPlan &s, void *c, const void *a,
                        const void *b, const void *bias) {
  if (s.batch.size() > DNNL_MAX_NDIMS - 2) // more dims than a memory descriptor has
    return false;
  return run(onednn, Kind::Matmul, s, c, a, b, bias);
}

bool runActivationPrimitive(const Onednn &onednn, const GemmPlan &s, float *c) {
  return s.type == GemmPlan::Type::F32 &&
         run(onednn, Kind::Activation, s, c, nullptr, nullptr, nullptr);
}

struct PackedWeights::Packed {
  std::unique_ptr<char, decltype(&std::free)> data{nullptr, std::free};
};

PackedWeights::PackedWeights() = default;
PackedWeights::~PackedWeights() = default;

void PackedWeights::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  packed_.clear();
}

const void *PackedWeights::find(const void *weight, const void *layout) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = packed_.find({weight, layout});
  return it == packed_.end() ? nullptr : it->second->data.get();
}

const void *PackedWeights::keep(const void *weight, const void *layout, void *data) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, added] = packed_.try_emplace({weight, layout}, std::make_unique<Packed>());
  if (added)
    it->second->data.reset(static_cast<char *>(data));
  else
    std::free(data); // another thread packed it first
  return it->second->data.get();
}

bool runConvPrimitive(const Onednn &onednn, const ConvPlan &s, float *out, const float *x,
                      const float *weight, const float *bias, const float *residual,
                      PackedWeights &packed) {
  const Api &api = apiOf(onednn.handle);
  if (!api.failure.empty())
    return false;
  static Cache<ConvPrimitive> primitives;
  const ConvPrimitive *p = primitives.get(keyOf(s, onednn.maxThreads ? onednn.maxThreads() : 1),
                                          [&] { return createConvolution(api, s); });
  if (!p)
    return false;
  // The calling thread's copies of x and of the result in the primitive's layouts.
  thread_local Scratch srcCopy, dstCopy, weightCopy;
  const void *src = x;
  if (p->srcIn.primitive) {
    src = srcCopy.reserve(p->srcBytes, "a convolution's input");
    p->srcIn.run(api, x, const_cast<void *>(src));
  }
  // The weight in the primitive's layout: packed once while the model's weights stay.
  const void *weights = weight;
  if (p->weightsIn.primitive) {
    weights = s.constantWeight ? packed.find(weight, p) : nullptr;
    if (!weights) {
      char *to = s.constantWeight
                     ? static_cast<char *>(std::aligned_alloc(64, (p->weightsBytes + 63) / 64 * 64))
                     : weightCopy.reserve(p->weightsBytes, "a convolution's weight");
      if (!to)
        throw Error(ErrorCode::RunFailed, "cannot allocate a convolution's weight of " +
                                 std::to_string(p->weightsBytes) + " bytes");
      p->weightsIn.run(api, weight, to);
      weights = s.constantWeight ? packed.keep(weight, p, to) : to;
    }
  }
  void *dst = out;
  if (p->dstOut.primitive)
    dst = dstCopy.reserve(p->dstBytes, "a convolution's result");
  // The residual is what the destination holds when the primitive adds its sum post-op.
  if (residual) {
    if (p->residualIn.primitive)
      p->residualIn.run(api, residual, dst);
    else if (dst != residual)
      std::memcpy(dst, residual, static_cast<size_t>(s.outputElements()) * sizeof(float));
  }
  std::vector<Operand> operands = {{DNNL_ARG_SRC, &p->src, src},
                                   {DNNL_ARG_WEIGHTS, &p->weights, weights},
                                   {DNNL_ARG_DST, &p->dst, dst}};
  if (bias)
    operands.push_back({DNNL_ARG_BIAS, &p->bias, bias});
  execute(api, p->conv, operands, p->scratchpad, p->scratchpadBytes);
  if (p->dstOut.primitive)
    p->dstOut.run(api, dst, out);
  return true;
}

void relayout(const Onednn &onednn, const std::array<int64_t, 4> &dims, ChainLayout layout,
              bool toChained, const float *in, float *out) {
  const Api &api = apiOf(onednn.handle);
  if (!api.failure.empty())
    throw Error(ErrorCode::CannotRunHere, "a convolution's layout without oneDNN's primitives: " + api.failure);
  static Cache<LayoutReorder> reorders;
  const LayoutReorder *r = reorders.get(
      {dims[0], dims[1], dims[2], dims[3], static_cast<int64_t>(layout), toChained}, [&] {
        LayoutReorder made;
        dnnl_dims_t d{dims[0], dims[1], dims[2], dims[3]};
        dnnl_memory_desc_t plain, chained;
        made.made =
            api.describeByTag(&plain, 4, d, dnnl_f32, dnnl_nchw) == dnnl_success &&
            api.describeByTag(&chained, 4, d, dnnl_f32, tagOf(layout)) == dnnl_success &&
            reorderOf(api, made.reorder, toChained ? plain : chained, toChained ? chained : plain);
        return made;
      });
  if (!r)
    throw Error(ErrorCode::CannotRunHere, "oneDNN has no reorder between NCHW and a convolution's layout");
  if (r->reorder.primitive)
    r->reorder.run(api, in, out);
  else
    std::memcpy(out, in, static_cast<size_t>(dims[0] * dims[1] * dims[2] * dims[3]) * 4);
}

std::string whyNoPrimitives(const Onednn &onednn) { return apiOf(onednn.handle).failure; }

} // namespace sotc::runtime::cpu
