# lit configuration for every FileCheck test in the repository (every test/ folder under
# tools/, dialects/ and compiler/, and tests/e2e). Tools come from bazel-bin, or from the runfiles
# tree when Bazel runs a test (tools/bazel/lit.bzl); FileCheck and `not` from LLVM 22.
import os

import lit.formats

config.name = "sotc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test", ".mlir"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.environ.get("SOTC_LIT_EXEC_ROOT",
                                      os.path.join(config.test_source_root, "build", "lit"))

root = config.test_source_root
bazel_bin = os.environ.get("SOTC_BAZEL_BIN", os.path.join(root, "bazel-bin"))
tool_dirs = [os.path.join(bazel_bin, "tools", "sotc"), os.path.join(bazel_bin, "tools", "sotc-opt"),
             "/usr/lib/llvm-22/bin"]
config.environment["PATH"] = os.pathsep.join(tool_dirs + [config.environment.get("PATH", os.environ["PATH"])])
for var in ("HOME", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.environment.pop("SOTC_LOG_LEVEL", None)

config.substitutions.append(("%testdata", os.path.join(root, "testdata")))
config.substitutions.append(("%python", "python3"))
