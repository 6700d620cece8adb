"""sotc_compile: a trace compiled by sotc as a Bazel build action.

The action is hermetic: its only inputs are the trace and the sotc binary (declared), its only
outputs the binary and its manifest, it uses no absolute paths and no network, so a model zoo
compiles with Bazel's caching and remote execution like any other build step.

    load("//tools/bazel:sotc.bzl", "sotc_compile")
    sotc_compile(name = "softmax_cpu", trace = "traces/23_softmax.pb", target = "cpu")
    # -> softmax_cpu.so and softmax_cpu.manifest.json
"""

_EXTENSIONS = {"cpu": ".so", "cuda": ".fatbin"}

def _sotc_compile_impl(ctx):
    extension = _EXTENSIONS[ctx.attr.target]
    binary = ctx.actions.declare_file(ctx.label.name + extension)
    manifest = ctx.actions.declare_file(ctx.label.name + ".manifest.json")
    args = ctx.actions.args()
    args.add("compile", ctx.file.trace)
    args.add("--target", ctx.attr.target)
    if ctx.attr.cpu:
        args.add("--cpu", ctx.attr.cpu)
    args.add("-o", binary)
    ctx.actions.run(
        executable = ctx.executable._sotc,
        arguments = [args],
        inputs = [ctx.file.trace],
        outputs = [binary, manifest],
        mnemonic = "SotcCompile",
        progress_message = "sotc compile %s (%s)" % (ctx.file.trace.short_path, ctx.attr.target),
        execution_requirements = {"requires-network": "0"},
    )
    return [DefaultInfo(
        files = depset([binary, manifest]),
        runfiles = ctx.runfiles(files = [binary, manifest]),
    )]

sotc_compile = rule(
    implementation = _sotc_compile_impl,
    doc = "Compiles a sotc trace into a binary and its manifest (<name>.so or .fatbin, <name>.manifest.json).",
    attrs = {
        "trace": attr.label(allow_single_file = [".pb", ".pbtxt"], mandatory = True),
        "target": attr.string(values = ["cpu", "cuda"], default = "cuda"),
        "cpu": attr.string(doc = "CPU target: an LLVM x86 CPU name (default x86-64-v3)"),
        "_sotc": attr.label(default = "//tools/sotc", executable = True, cfg = "exec"),
    },
)
