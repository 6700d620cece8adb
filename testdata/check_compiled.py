#!/usr/bin/env python3
"""Checks what sotc_compile rules built: each binary has its manifest beside it, named after
the rule, whose sha256 is the binary's and whose kernels the ELF library exports, or, for a
fatbin, that holds one SASS image per architecture the manifest names and the PTX; a model's
weights file is the one its manifest names, with every weight it lists (standard library
only: this runs inside Bazel's test sandbox).

    check_compiled.py FILE...   (each rule's binary and manifest, in any order)
"""

import hashlib
import json
import struct
import sys


def exported_functions(data):
    """The defined function symbols of an ELF64 little-endian shared library's .dynsym."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    dynsym = next(s for s in sections if s[1] == 11)  # SHT_DYNSYM
    strtab = sections[dynsym[6]]                      # sh_link
    names = set()
    for off in range(dynsym[4], dynsym[4] + dynsym[5], 24):
        name, info, _, shndx = struct.unpack_from("<IBBH", data, off)
        if info & 0xF == 2 and shndx != 0:  # STT_FUNC, defined
            end = data.index(b"\0", strtab[4] + name)
            names.add(data[strtab[4] + name:end].decode())
    return names


def fatbin_images(data):
    """(kind, arch) of each image of a fatbin: magic 0xBA55ED50, then entries of kind (1 PTX,
    2 ELF), header size, payload size and architecture."""
    magic, _, header, size = struct.unpack_from("<IHHQ", data, 0)
    assert magic == 0xBA55ED50, hex(magic)
    images, offset = [], header
    while offset < header + size:
        kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, offset)
        arch, = struct.unpack_from("<I", data, offset + 28)
        images.append(("sass" if kind == 2 else "ptx", f"sm_{arch}"))
        offset += entry_header + payload
    return sorted(images)


def main(paths):
    manifests = sorted(p for p in paths if p.endswith(".manifest.json"))
    weights = {p.rsplit("/", 1)[-1]: p for p in paths if p.endswith(".weights.safetensors")}
    binaries = sorted(p for p in paths
                      if not p.endswith((".manifest.json", ".weights.safetensors")))
    assert manifests and len(manifests) == len(binaries), paths
    for binary in binaries:  # k.so beside k.manifest.json, k.fatbin beside k.cuda.manifest.json
        stem, ext = binary.rsplit(".", 1)
        manifest_path = stem + (".cuda" if ext == "fatbin" else "") + ".manifest.json"
        assert manifest_path in manifests, (binary, manifests)
        with open(binary, "rb") as f:
            data = f.read()
        with open(manifest_path) as f:
            manifest = json.load(f)
        assert manifest["format"] == "sotc-manifest" and manifest["version"] == 3
        assert manifest["binary"]["file"] == binary.rsplit("/", 1)[-1]
        assert manifest["binary"]["sha256"] == hashlib.sha256(data).hexdigest()
        if "weights" in manifest:
            with open(weights[manifest["weights"]["file"]], "rb") as f:
                data_weights = f.read()
            assert manifest["weights"]["sha256"] == hashlib.sha256(data_weights).hexdigest()
            size, = struct.unpack_from("<Q", data_weights, 0)
            header = json.loads(data_weights[8:8 + size])
            for w in manifest["weights"]["tensors"]:
                assert header[w["name"]]["shape"] == w["shape"], w
        steps = [s for seg in manifest["segments"] for s in seg["steps"]]
        kernels = {s["symbol"] for s in steps if s["kind"] == "kernel"}
        # every step a GEMM (an MLP whose activations are the GEMMs' epilogues) is no kernel
        assert kernels or all(s["kind"] == "gemm" for s in steps), steps
        if manifest["target"]["kind"] == "cuda":
            images = fatbin_images(data)
            target = manifest["target"]
            assert images == sorted([("sass", a) for a in target["archs"]] + [("ptx", target["ptx"])]), images
            print(f"PASSED: {binary}: {len(kernels)} kernels, images {images}")
            continue
        exported = exported_functions(data)
        assert kernels <= exported, (kernels, exported)
        print(f"PASSED: {binary}: {len(kernels)} kernels, cpu {manifest['target']['cpu']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
