"""lit/FileCheck tests as Bazel tests: one sh_test per test file (IREE's iree_lit_test_suite)."""

def lit_test_suite(name, srcs, data = [], tools = ["//tools/sotc", "//tools/sotc-opt"]):
    """Runs each file of `srcs` through lit with the repository's lit.cfg.py.

    `data` lists what the tests read besides themselves (Inputs/, traces); `tools` the
    binaries their RUN lines call. FileCheck, not and lit come from LLVM 22.
    """
    tests = []
    for src in srcs:
        test = "%s_%s" % (name, src.replace("/", "_").replace(".", "_"))
        native.sh_test(
            name = test,
            size = "small",
            srcs = ["//tools/bazel:lit_runner.sh"],
            args = ["$(location %s)" % src],
            data = [src, "//:lit.cfg.py"] + data + tools,
            tags = ["lit"],
        )
        tests.append(test)
    native.test_suite(name = name, tests = tests, tags = ["lit"])
