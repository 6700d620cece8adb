"""sotc_compile: a trace compiled by sotc as a Bazel build action.

The action is hermetic: its only inputs are the trace, the sotc binary and, for CUDA, the
toolkit's ptxas, fatbinary and libdevice (declared, from @cuda; CUDA_PATH points at them), its
only outputs the binary and its manifest, it uses no absolute paths and no network, so a model
zoo compiles with Bazel's caching and remote execution like any other build step.

    load("//tools/bazel:sotc.bzl", "sotc_compile")
    sotc_compile(name = "softmax_cpu", trace = "traces/23_softmax.pb", target = "cpu")
    # -> softmax_cpu.so and softmax_cpu.manifest.json
    sotc_compile(name = "softmax", trace = "traces/23_softmax.pb", gpu_archs = ["sm_90"])
    # -> softmax.fatbin and softmax.cuda.manifest.json
    sotc_compile(name = "mlp", trace = "traces/models/mlp.pb",
                 weights = "traces/models/mlp.safetensors", target = "cpu")
    # a model: also mlp.weights.safetensors
"""

_EXTENSIONS = {"cpu": ".so", "cuda": ".fatbin"}

def _sotc_compile_impl(ctx):
    extension = _EXTENSIONS[ctx.attr.target]
    binary = ctx.actions.declare_file(ctx.label.name + extension)
    # Beside k.so: k.manifest.json; beside k.fatbin: k.cuda.manifest.json (and the weights).
    stem = ctx.label.name + (".cuda" if ctx.attr.target == "cuda" else "")
    manifest = ctx.actions.declare_file(stem + ".manifest.json")
    args = ctx.actions.args()
    args.add("compile", ctx.file.trace)
    args.add("--target", ctx.attr.target)
    if ctx.attr.cpu:
        args.add("--cpu", ctx.attr.cpu)
    inputs = [ctx.file.trace]
    outputs = [binary, manifest]
    if ctx.file.weights:  # a model's: read beside its trace, written beside the binary
        inputs.append(ctx.file.weights)
        outputs.append(ctx.actions.declare_file(stem + ".weights.safetensors"))
    env = {}
    if ctx.attr.target == "cuda":
        if ctx.attr.gpu_archs:
            args.add("--gpu-arch", ",".join(ctx.attr.gpu_archs))
        inputs += [ctx.file._ptxas, ctx.file._fatbinary, ctx.file._libdevice]
        env["CUDA_PATH"] = ctx.file._ptxas.dirname.rsplit("/", 1)[0]  # <toolkit>/bin/ptxas
    args.add("-o", binary)
    ctx.actions.run(
        executable = ctx.executable._sotc,
        arguments = [args],
        env = env,
        inputs = inputs,
        outputs = outputs,
        mnemonic = "SotcCompile",
        progress_message = "sotc compile %s (%s)" % (ctx.file.trace.short_path, ctx.attr.target),
        execution_requirements = {"requires-network": "0"},
    )
    return [DefaultInfo(
        files = depset(outputs),
        runfiles = ctx.runfiles(files = outputs),
    )]

sotc_compile = rule(
    implementation = _sotc_compile_impl,
    doc = "Compiles a sotc trace into a binary and its manifest (<name>.so and <name>.manifest.json, or <name>.fatbin and <name>.cuda.manifest.json).",
    attrs = {
        "trace": attr.label(allow_single_file = [".pb", ".pbtxt"], mandatory = True),
        "weights": attr.label(
            allow_single_file = [".safetensors"],
            doc = "A model trace's weights file (the one the trace names, beside it)",
        ),
        "target": attr.string(values = ["cpu", "cuda"], default = "cuda"),
        "cpu": attr.string(doc = "CPU target: an LLVM x86 CPU name (default x86-64-v3)"),
        "gpu_archs": attr.string_list(doc = "CUDA target: architectures (default sm_80, sm_90)"),
        "_ptxas": attr.label(default = "@cuda//:bin/ptxas", allow_single_file = True),
        "_fatbinary": attr.label(default = "@cuda//:bin/fatbinary", allow_single_file = True),
        "_libdevice": attr.label(
            default = "@cuda//:nvvm/libdevice/libdevice.10.bc",
            allow_single_file = True,
        ),
        "_sotc": attr.label(default = "//tools/sotc", executable = True, cfg = "exec"),
    },
)
