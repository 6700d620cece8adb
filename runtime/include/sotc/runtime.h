/*===- sotc/runtime.h - Running what `sotc compile` built, from C ---------------------------===*
 *
 * An artifact is a binary (CPU shared library; CUDA fatbin) and the manifest beside it. Open
 * it, pass the traced function's parameters, run; every call checks the parameters against
 * what the trace was compiled for before any kernel runs. Errors are values: a failing call
 * returns non-zero and fills a sotc_error (a stable code "E8xxx" and one line of text); nothing
 * throws across this boundary and nothing aborts.
 *
 * A CUDA artifact runs on a device's primary context (the one torch and other frameworks
 * use) through the driver API, which is loaded at run time: on a machine without a driver,
 * opening one fails with E8003. Its tensors may be device pointers (device SOTC_DEVICE_CUDA,
 * no copies) or host memory (copied over for the run); its results are device pointers.
 *
 *   sotc_artifact *a;
 *   sotc_error err;
 *   if (sotc_open("k.so", &a, &err)) { fprintf(stderr, "%s: %s\n", err.code, err.message); }
 *   sotc_value in[1] = {{.is_tensor = 1, .data = x, .dtype = SOTC_FLOAT32, .rank = 2,
 *                        .shape = {32, 128}}};
 *   sotc_value out[4]; size_t n = 4;
 *   sotc_run(a, in, 1, out, &n, &err);   // outputs: this thread's until its next run
 *   sotc_close(a);
 *
 * Threads: any number of threads may call sotc_run, sotc_run_into, sotc_copy_out,
 * sotc_set_weight and sotc_synchronize on one artifact at once; each run has its own memory
 * (the calling thread's run context, reused by its later runs) and gets its own correct
 * result. sotc_set_stream is the calling thread's (its stream); sotc_set_host_handler and
 * sotc_set_profiling are the artifact's settings: make them before the threads start.
 * sotc_close waits for the calls in flight; a call that starts once it has begun fails with
 * E8005, and the handle must not be used after it.
 *
 * Trust: an artifact is code (its library is loaded, its kernels run) and is to be opened
 * only from a trusted source. What sotc_open checks makes a corrupt or edited one a coded
 * error, never a crash or a wrong answer: the binary's sha256, the manifest's digest the
 * binary carries, the binary's headers, and the plan against itself (docs/runtime.md).
 *
 *===---------------------------------------------------------------------------------------===*/
#ifndef SOTC_RUNTIME_H
#define SOTC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sotc_error {
  char code[8];       /* "E8001" ... (docs/diagnostics.md) */
  char message[1024]; /* one line */
} sotc_error;

typedef enum sotc_dtype {
  SOTC_BOOL,
  SOTC_INT8,
  SOTC_UINT8,
  SOTC_INT16,
  SOTC_INT32,
  SOTC_INT64,
  SOTC_FLOAT16,
  SOTC_BFLOAT16,
  SOTC_FLOAT32,
  SOTC_FLOAT64,
  SOTC_COMPLEX64,
  SOTC_COMPLEX128
} sotc_dtype;

enum { SOTC_MAX_RANK = 8 };

/* Where a tensor's data lives: host memory, or the CUDA device the artifact runs on. */
typedef enum sotc_device { SOTC_DEVICE_CPU = 0, SOTC_DEVICE_CUDA = 1 } sotc_device;

/* "float32", and the bytes of one element (bool: 1); NULL and 0 for no dtype. */
const char *sotc_dtype_name(int dtype);
size_t sotc_dtype_size(int dtype);

/* A parameter or a result: a dense row-major tensor, or another Python value given as the
 * repr it was traced with ("3", "'scale'", "None"). */
typedef struct sotc_value {
  const char *name; /* results: the tensor's name in the manifest */
  int is_tensor;
  void *data;
  sotc_dtype dtype;
  int32_t rank;
  int64_t shape[SOTC_MAX_RANK];
  const char *repr;
  sotc_device device; /* tensors: data is dense, row-major, element-aligned (CUDA: 16 bytes) */
} sotc_value;

typedef struct sotc_artifact sotc_artifact;

/* `path`: the binary or its manifest (k.so or k.manifest.json, k.fatbin or
 * k.cuda.manifest.json). A CPU artifact runs on a pool of SOTC_NUM_THREADS threads
 * (default: every core); a CUDA one on device 0, or
 * on `device` ("cpu", "cuda", "cuda:N"; NULL: the artifact's own) with sotc_open_device,
 * which fails with E8003 when the artifact is not for that kind of device. "emulator" runs
 * a CUDA artifact on the CUDA emulator (docs/emulator.md): the CUDA backend on an emulated
 * driver and cuBLASLt, on any machine; its tensors are then that emulated device's. */
int sotc_open(const char *path, sotc_artifact **artifact, sotc_error *error);
int sotc_open_device(const char *path, const char *device, sotc_artifact **artifact,
                     sotc_error *error);
/* Waits for the calls in flight on other threads, then frees the artifact; NULL, or an
 * artifact closed already, is nothing. */
void sotc_close(sotc_artifact *artifact);
/* The manifest sotc_open reads for `path` (k.so -> k.manifest.json, k.fatbin ->
 * k.cuda.manifest.json; a manifest's own path stays), into `out` of `size` bytes with its NUL
 * (nothing written when it does not fit). Returns its length without the NUL. */
size_t sotc_manifest_path(const char *path, char *out, size_t size);

/* A size that holds dynamic sizes in the manifest's one text form ("64*s0*s1^2",
 * docs/manifest.md): its factor and the power of each size s0..s7. Returns 0, or 1 (nothing
 * written) for text that is no such size. The runtime's own parser, for bindings that read
 * sotc_manifest. */
int sotc_parse_size(const char *text, int64_t *factor, int32_t powers[8]);

/* "cpu" or "cuda". */
const char *sotc_target(const sotc_artifact *artifact);

/* The manifest the artifact was opened from (JSON, docs/manifest.md), as the runtime read and
 * checked it when it opened the artifact: what a binding describes the artifact by (its
 * entries, parameters, guards, results, host callbacks, weights) without opening the file
 * again, which may have been replaced or removed since. Valid until sotc_close. */
const char *sotc_manifest(const sotc_artifact *artifact);

/* What the artifact's GEMM steps run on, "" when it has none: on the CPU the CBLAS library (the
 * file loaded) and, for OpenBLAS, its build and the kernel family it runs on this CPU
 * ("OpenBLAS 0.3.34 DYNAMIC_ARCH ... (/usr/local/lib/libscipy_openblas.so), SkylakeX
 * kernels"); " (corrected from its generic Prescott kernels)" when the runtime loaded it again
 * told the CPU's family, "; warning: generic kernels ..." when a family that does not use the
 * CPU's AVX2 stays (GEMMs several times slower), or "none: why" when no CBLAS loads;
 * "cuBLASLt" on CUDA. */
const char *sotc_gemm_implementation(const sotc_artifact *artifact);

/* What CPU artifacts' GEMM steps run on in this process, as sotc_gemm_implementation says it
 * (the libraries are loaded on the first call if no artifact has loaded them): what
 * `sotc doctor` reports before anything is compiled. */
const char *sotc_cpu_gemm_implementation(void);

/* CPU: the CPU the kernels that run here were compiled for: the last of the artifact's variant
 * CPUs (`sotc compile --cpu x86-64-v3,x86-64-v4`) whose extensions this machine has, else its
 * base CPU, or the one SOTC_KERNEL_CPU names; "" on CUDA. */
const char *sotc_kernel_cpu(const sotc_artifact *artifact);

/* CUDA: the stream (a CUstream) the calling thread's later runs on this artifact are issued
 * on (each thread its own, as TensorRT gives each stream an execution context); NULL, the
 * default, is the legacy default stream. Changing it first waits for the thread's work on the
 * old one. Results are ready once the stream's work is. */
void sotc_set_stream(sotc_artifact *artifact, void *stream);

/* The traced function's parameters, in order: their names, and what each was compiled for
 * (a tensor's dtype and shape, without data; another value's traced repr); of an artifact of
 * several traces (a bundle), what its first entry was compiled for. */
size_t sotc_num_parameters(const sotc_artifact *artifact);
const char *sotc_parameter_name(const sotc_artifact *artifact, size_t i);
int sotc_parameter_spec(const sotc_artifact *artifact, size_t i, sotc_value *spec);

/* Entries: an artifact compiled from several traces of one function (`sotc compile a.pb b.pb`)
 * holds one entry per trace, in order, each with the same parameters compiled for other
 * shapes, dtypes or constants. A run takes the first entry its parameters match (the others'
 * mismatches are reported only when none does). sotc_entry_trace is an entry's trace file;
 * sotc_entry_parameter_spec what entry `entry` was compiled for. A caller that checks guards of
 * its own (on module globals, on objects' attributes: the Python binding) tells which entries
 * they hold for with sotc_allow_entries (the calling thread's later runs; NULL: every entry);
 * sotc_last_entry is the entry the calling thread's last run took, -1 when it failed. */
size_t sotc_num_entries(const sotc_artifact *artifact);
const char *sotc_entry_trace(const sotc_artifact *artifact, size_t entry);
int sotc_entry_parameter_spec(const sotc_artifact *artifact, size_t entry, size_t i,
                              sotc_value *spec);
void sotc_allow_entries(sotc_artifact *artifact, const int *allowed, size_t num_allowed);
int32_t sotc_last_entry(const sotc_artifact *artifact);

/* A compiled model's weights (parameters and buffers, by state-dict name): loaded from the
 * weights file the manifest names when the artifact opens (E8003 when that file is not the
 * manifest's), and never among the inputs of a run. sotc_set_weight replaces one with a copy
 * of `value`, which must have its dtype and shape (E8004): new weights of the same model
 * without recompiling. */
size_t sotc_num_weights(const sotc_artifact *artifact);
int sotc_weight_spec(const sotc_artifact *artifact, size_t i, sotc_value *spec);
int sotc_set_weight(sotc_artifact *artifact, const char *name, const sotc_value *value,
                    sotc_error *error);

/* Sequence state: a model that writes some of its weights in place (a static KV cache's
 * buffers, its position counter: the manifest marks them "state") keeps their values between
 * runs, per sequence. An artifact opens with a state of its own; sotc_state_new makes another
 * (each state weight at its initial value: the weights file's, or the last sotc_set_weight's),
 * so that one artifact runs many sequences. sotc_use_state: the state the calling thread's
 * later runs read and update (NULL: the artifact's own); runs on one state take turns.
 * sotc_state_reset sets a state (NULL: the artifact's own) back to the initial values.
 * sotc_state_free unbinds the state from every thread that uses it and frees it (not while a
 * run uses it); a state still held when its artifact closes is freed with it, all but the
 * handle, which sotc_state_free then frees. On an artifact without state weights,
 * sotc_state_new and sotc_state_reset fail with E8005. */
typedef struct sotc_state sotc_state;
/* The positions a KV cache of the artifact holds: the smallest length along its positions
 * axis (the manifest's `cache_axis`) of the state weights an in-place index_copy writes; 0
 * when it keeps none. A run that writes a position past them fails with E8004. */
int64_t sotc_cache_positions(const sotc_artifact *artifact);
int sotc_state_new(sotc_artifact *artifact, sotc_state **state, sotc_error *error);
int sotc_state_reset(sotc_artifact *artifact, sotc_state *state, sotc_error *error);
int sotc_use_state(sotc_artifact *artifact, sotc_state *state, sotc_error *error);
void sotc_state_free(sotc_state *state);

/* Runs the artifact on `num_inputs` parameters (in the traced order). On success `outputs`
 * (room for *num_outputs values) holds the tensors of the returned value in the order the
 * manifest's result lists them, and *num_outputs their count; their data belongs to the
 * artifact until the calling thread's next run on it, or sotc_close. A parameter that does
 * not match what the trace was compiled for fails with E8004 and says which, expected and
 * got. A run whose values reach the program's own `raise` (a failed `assert x.max().item() <
 * n`) fails with E8008: the exception's class, message and Python line. */
int sotc_run(sotc_artifact *artifact, const sotc_value *inputs, size_t num_inputs,
             sotc_value *outputs, size_t *num_outputs, sotc_error *error);

/* Like sotc_run, but the results are written into the caller's buffers: outputs[i] (dtype,
 * rank, shape, device and data set by the caller, num_outputs of them) receives result i,
 * which must have that dtype and shape (E8005 otherwise), so that a loop of runs allocates
 * nothing. */
int sotc_run_into(sotc_artifact *artifact, const sotc_value *inputs, size_t num_inputs,
                  const sotc_value *outputs, size_t num_outputs, sotc_error *error);

/* Copies the tensor `value` (a result of the last run) to `dest` (its dtype's size times its
 * element count bytes) in host memory or, for a CUDA artifact, on its device: how a caller
 * reads a CUDA artifact's results, or keeps them past the next run. */
int sotc_copy_out(sotc_artifact *artifact, const sotc_value *value, void *dest,
                  sotc_device dest_device, sotc_error *error);

/* Waits until the work of the calling thread's runs is done (CUDA: its stream; the CPU runs
 * synchronously). */
int sotc_synchronize(sotc_artifact *artifact, sotc_error *error);

/* Host callbacks: a segment may end in a call that only the host can make (print(x),
 * x.numpy(), an API named by --break-on), after which the next segment runs. The runtime then
 * calls the embedder's handler with the tensors the call reads (`args`, named as the
 * manifest's host_callback end names them, which also says how to rebuild the call with its
 * constants and keywords) and the tensors its result holds (`results`: dtype, shape and a
 * buffer the runtime owns, which the handler fills). The handler returns 0, or non-zero to end
 * the run with E8006 and, if it wrote one, its message in `error`. Without a handler such a run
 * fails with E8005. */
typedef struct sotc_host_call {
  int32_t segment; /* the manifest's segment whose end this is */
  const char *callee, *source;
  size_t num_args;
  const sotc_value *args;
  size_t num_results;
  sotc_value *results;
} sotc_host_call;
typedef int (*sotc_host_handler)(void *user, const sotc_host_call *call, sotc_error *error);
void sotc_set_host_handler(sotc_artifact *artifact, sotc_host_handler handler, void *user);

/* Profiling (sotc bench): while on, every run times each step. A step's profile: its name
 * (kernel symbol, GEMM or convolution), kind ("kernel", "gemm", "conv"), how often it ran, its
 * fastest and median time, the bytes it reads and writes once, and a GEMM's or convolution's
 * floating-point operations. */
typedef struct sotc_step_profile {
  const char *name;
  const char *kind;
  uint64_t calls;
  double min_seconds, median_seconds;
  int64_t bytes;
  double flops; /* GEMM steps: 2 m n k per product, every batch; convolutions: 2 per
                  multiply-add; kernels: 0 */
} sotc_step_profile;
void sotc_set_profiling(sotc_artifact *artifact, int on);
size_t sotc_num_profiled_steps(const sotc_artifact *artifact);
int sotc_profiled_step(const sotc_artifact *artifact, size_t i, sotc_step_profile *profile);

/* After the calling thread's last run, when it failed with E8004: each parameter that does
 * not match, with what was compiled for it, what it got, the guard that made the program
 * depend on it ("g0 (prog.py:6)", or "" when none did), and the entry it was checked for
 * (entry by entry for a bundle). */
typedef struct sotc_parameter_mismatch {
  const char *parameter, *expected, *got, *guard;
  int32_t entry;
} sotc_parameter_mismatch;
size_t sotc_num_mismatches(const sotc_artifact *artifact);
int sotc_mismatch(const sotc_artifact *artifact, size_t i, sotc_parameter_mismatch *mismatch);

/* The segment whose return ended the calling thread's last run, when it succeeded (its
 * place in the manifest's segments, whose end says how the results rebuild the Python return
 * value); when it failed with E8008, the segment whose `raise` end it reached; else -1. */
int32_t sotc_last_segment(const sotc_artifact *artifact);

#ifdef __cplusplus
}
#endif

#endif /* SOTC_RUNTIME_H */
