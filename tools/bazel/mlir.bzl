"""ODS generation with the system mlir-tblgen; the dialects use it."""

def mlir_tblgen(name, td_file, gens, deps = []):
    """Runs mlir-tblgen once per (flag, output) pair in `gens` on `td_file`.

    `deps` lists further .td files the input includes. Outputs land next to the .td file.
    """
    for flags, out in gens:
        native.genrule(
            name = "%s_%s_genrule" % (name, out.replace("/", "_").replace(".", "_")),
            srcs = depset([td_file] + deps).to_list() + ["@llvm//:mlir_td_files"],
            outs = [out],
            tools = ["@llvm//:bin/mlir-tblgen"],
            cmd = "$(location @llvm//:bin/mlir-tblgen) %s -I external/llvm/include -I . -I $(GENDIR) $(location %s) -o $@" % (flags, td_file),
        )
    native.filegroup(name = name, srcs = [out for _, out in gens])
