"""C++ code generation from a .proto with the system protoc (no @com_google_protobuf)."""

def cc_proto(name, src):
    """Declares cc_library `name` holding the generated <src>.pb.{h,cc}."""
    base = src[:-len(".proto")]
    pkg = native.package_name()
    native.genrule(
        name = name + "_gen",
        srcs = [src],
        outs = [base + ".pb.h", base + ".pb.cc"],
        # protoc runs from the execroot; outputs keep the package path so includes read
        # "compiler/frontend/trace.pb.h".
        tools = ["@system//:bin/protoc"],
        cmd = "$(location @system//:bin/protoc) --cpp_out=$(GENDIR) $(location %s)" % src,
    )
    native.cc_library(
        name = name,
        srcs = [base + ".pb.cc"],
        hdrs = [base + ".pb.h"],
        deps = ["@system//:protobuf"],
    )
