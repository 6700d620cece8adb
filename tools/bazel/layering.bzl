"""Each C++ package hands its sources to the layering test (//tools/scripts:layering_test)."""

def layering_sources():
    native.filegroup(
        name = "layering_sources",
        srcs = native.glob(["**/*.h", "**/*.cpp"]),
        visibility = ["//tools/scripts:__pkg__"],
    )
