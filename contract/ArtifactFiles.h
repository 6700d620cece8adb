//===- ArtifactFiles.h - Where an artifact's files lie beside its binary -------------------===//
//
// The artifact contract between the compiler, which writes an artifact, and the runtime, which
// reads it: this folder is below both and includes nothing of either. An artifact is its
// binary and the files named after it (docs/manifest.md):
//   k.so     -> k.manifest.json,      k.weights.safetensors
//   k.fatbin -> k.cuda.manifest.json, k.cuda.weights.safetensors
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_CONTRACT_ARTIFACTFILES_H
#define SOTC_CONTRACT_ARTIFACTFILES_H

#include <string>
#include <string_view>

namespace sotc::contract {

/// The name every file of the artifact of `binary` starts with: "k" for k.so, "k.cuda" for
/// k.fatbin (a CPU library and a fatbin of one trace may lie side by side).
inline std::string artifactStem(std::string_view binary) {
  auto endsWith = [&](std::string_view ext) {
    return binary.size() > ext.size() && binary.substr(binary.size() - ext.size()) == ext;
  };
  if (endsWith(".fatbin"))
    return std::string(binary.substr(0, binary.size() - 7)) + ".cuda";
  if (endsWith(".so"))
    return std::string(binary.substr(0, binary.size() - 3));
  return std::string(binary);
}

/// Whether `path` names a manifest rather than a binary.
inline bool isManifestPath(std::string_view path) {
  return path.size() > 5 && path.substr(path.size() - 5) == ".json";
}

inline std::string manifestPathOf(std::string_view binary) {
  return artifactStem(binary) + ".manifest.json";
}

inline std::string weightsPathOf(std::string_view binary) {
  return artifactStem(binary) + ".weights.safetensors";
}

} // namespace sotc::contract

#endif // SOTC_CONTRACT_ARTIFACTFILES_H
