#include "Run.h"

#include "FmaPeak.h"

#include "compiler/ops/Types.h"
#include "compiler/support/Diagnostics.h"
#include "compiler/support/OutputFile.h"
#include "sotc/runtime.h"

#include <nlohmann/json.hpp>

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CRC.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <sstream>
#include <string_view>

#include <sched.h>
#include <sys/stat.h>

namespace sotc::run {
namespace {

/// numpy's type codes, by sotc_dtype (little-endian). numpy has no bfloat16: np.save writes
/// ml_dtypes' as two raw bytes, '<V2' (np.load gives |V2; `.view(ml_dtypes.bfloat16)`).
const char *kDescr[] = {"|b1", "|i1", "|u1", "<i2", "<i4", "<i8",
                        "<f2", "<V2", "<f4", "<f8", "<c8", "<c16"};

[[noreturn]] void badInput(const std::string &message) {
  throw CodedError(DiagCode::RunBadInput, message);
}

std::string shapeText(const sotc_value &v) {
  return std::string(sotc_dtype_name(v.dtype)) +
         ops::formatShape({v.shape, v.shape + std::clamp<int32_t>(v.rank, 0, SOTC_MAX_RANK)});
}

size_t elements(const sotc_value &v) {
  size_t n = 1;
  for (int32_t d = 0; d < v.rank; ++d)
    n *= static_cast<size_t>(v.shape[d]);
  return n;
}

size_t bytesOf(const sotc_value &v) { return elements(v) * sotc_dtype_size(v.dtype); }

/// A .npy file (format 1.0/2.0, C order) as a tensor whose bytes `storage` owns. Only a
/// regular file is read, and no more of it than its header's shape says.
sotc_value readNpy(const std::string &path, std::vector<char> &storage) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    badInput(path + ": cannot read");
  if (!S_ISREG(info.st_mode))
    badInput(path + ": not a regular file (a directory, FIFO or device is not read)");
  uint64_t fileBytes = static_cast<uint64_t>(info.st_size);
  std::ifstream in(path, std::ios::binary);
  char prefix[12] = {};
  if (!in || fileBytes < 10 || !in.read(prefix, 10) ||
      std::string_view(prefix, 6) != std::string_view("\x93NUMPY", 6))
    badInput(path + ": not a .npy file");
  bool v1 = prefix[6] == 1;
  if (!v1 && !in.read(prefix + 10, 2))
    badInput(path + ": not a .npy file");
  uint64_t headerLen = v1 ? static_cast<uint8_t>(prefix[8]) | static_cast<uint8_t>(prefix[9]) << 8
                          : static_cast<uint64_t>(static_cast<uint8_t>(prefix[8])) |
                                static_cast<uint64_t>(static_cast<uint8_t>(prefix[9])) << 8 |
                                static_cast<uint64_t>(static_cast<uint8_t>(prefix[10])) << 16 |
                                static_cast<uint64_t>(static_cast<uint8_t>(prefix[11])) << 24;
  uint64_t start = v1 ? 10 : 12;
  if (headerLen > (1u << 20) || start + headerLen > fileBytes)
    badInput(path + ": unreadable .npy header");
  std::string header(headerLen, '\0');
  in.read(header.data(), static_cast<std::streamsize>(headerLen));
  std::smatch descr, order, shape;
  if (!in || !std::regex_search(header, descr, std::regex("'descr':\\s*'([^']+)'")) ||
      !std::regex_search(header, shape, std::regex("'shape':\\s*\\(([^)]*)\\)")))
    badInput(path + ": unreadable .npy header");
  if (std::regex_search(header, order, std::regex("'fortran_order':\\s*True")))
    badInput(path + ": Fortran-ordered arrays are not read (save with np.ascontiguousarray)");
  sotc_value v{};
  v.is_tensor = 1;
  int dtype = -1;
  for (int i = 0; i < 12; ++i)
    if (descr[1].str() == kDescr[i])
      dtype = i;
  if (descr[1].str() == "<b1" || descr[1].str() == "?")
    dtype = SOTC_BOOL;
  if (descr[1].str() == "|V2")
    dtype = SOTC_BFLOAT16;
  if (dtype < 0)
    badInput(path + ": dtype " + descr[1].str() + " is not read");
  v.dtype = static_cast<sotc_dtype>(dtype);
  std::stringstream dims(shape[1].str());
  uint64_t need = sotc_dtype_size(dtype);
  for (std::string d; std::getline(dims, d, ',');) {
    d.erase(0, d.find_first_not_of(" "));
    d.erase(d.find_last_not_of(" ") + 1);
    if (d.empty())
      continue;
    if (v.rank == SOTC_MAX_RANK)
      badInput(path + ": more than 8 dimensions");
    if (d.size() > 15 || d.find_first_not_of("0123456789") != std::string::npos)
      badInput(path + ": unreadable .npy shape (" + shape[1].str() + ")");
    v.shape[v.rank] = std::stoll(d);
    need *= static_cast<uint64_t>(v.shape[v.rank++]);
    if (need > fileBytes)
      break; // checked below, before anything is read
  }
  if (need > fileBytes - start - headerLen)
    badInput(path + ": truncated (its shape needs " + std::to_string(need) + " bytes of data)");
  storage.resize(need);
  if (!in.read(storage.data(), static_cast<std::streamsize>(need)))
    badInput(path + ": cannot read its data");
  v.data = storage.data();
  return v;
}

std::string npyBytes(const sotc_value &v) {
  std::string header =
      std::string("{'descr': '") + kDescr[v.dtype] + "', 'fortran_order': False, 'shape': (";
  for (int32_t d = 0; d < v.rank; ++d)
    header += std::to_string(v.shape[d]) + (v.rank == 1 || d + 1 < v.rank ? ", " : "");
  header += "), }";
  while ((10 + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(static_cast<const char *>(v.data), bytesOf(v));
  return out;
}

/// A .npz archive (numpy.savez: an uncompressed zip of NAME.npy files), deterministic.
std::string npzBytes(const std::vector<std::pair<std::string, std::string>> &members) {
  auto le = [](std::string &out, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i)
      out += static_cast<char>((value >> (8 * i)) & 0xff);
  };
  std::string archive, directory;
  for (const auto &[name, data] : members) {
    if (data.size() >= 0xffffffffu || archive.size() >= 0xffffffffu)
      badInput("--output: results over 4 GiB need --save DIR (.npy files)");
    uint32_t crc = llvm::crc32(llvm::arrayRefFromStringRef(data));
    std::string file = name + ".npy";
    // The fields a local header and its central directory entry share, from "version needed".
    std::string common;
    le(common, 20, 2), le(common, 0, 2), le(common, 0, 2); // version, flags, stored
    le(common, 0, 2), le(common, 0x21, 2);                 // 1980-01-01 00:00
    le(common, crc, 4), le(common, data.size(), 4), le(common, data.size(), 4);
    le(common, file.size(), 2), le(common, 0, 2); // name length, no extra field
    le(directory, 0x02014b50, 4), le(directory, 20, 2);
    directory += common;
    le(directory, 0, 2), le(directory, 0, 2), le(directory, 0, 2), le(directory, 0, 4);
    le(directory, archive.size(), 4);
    directory += file;
    le(archive, 0x04034b50, 4);
    archive += common + file + data;
  }
  size_t offset = archive.size();
  archive += directory;
  le(archive, 0x06054b50, 4), le(archive, 0, 2), le(archive, 0, 2);
  le(archive, members.size(), 2), le(archive, members.size(), 2);
  le(archive, directory.size(), 4), le(archive, offset, 4), le(archive, 0, 2);
  return archive;
}

/// IEEE half and bfloat16 by their bits.
const llvm::fltSemantics &halfSemantics(int dtype) {
  return dtype == SOTC_BFLOAT16 ? llvm::APFloat::BFloat() : llvm::APFloat::IEEEhalf();
}

uint16_t halfBits(float f, int dtype) {
  llvm::APFloat a(f);
  bool lost;
  a.convert(halfSemantics(dtype), llvm::APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint16_t>(a.bitcastToAPInt().getZExtValue());
}

double element(const sotc_value &v, size_t i) {
  const char *p = static_cast<const char *>(v.data) + i * sotc_dtype_size(v.dtype);
  switch (v.dtype) {
  case SOTC_FLOAT16:
  case SOTC_BFLOAT16:
    return llvm::APFloat(halfSemantics(v.dtype),
                         llvm::APInt(16, *reinterpret_cast<const uint16_t *>(p)))
        .convertToDouble();
  case SOTC_FLOAT32:
    return *reinterpret_cast<const float *>(p);
  case SOTC_FLOAT64:
    return *reinterpret_cast<const double *>(p);
  case SOTC_INT32:
    return *reinterpret_cast<const int32_t *>(p);
  case SOTC_INT64:
    return static_cast<double>(*reinterpret_cast<const int64_t *>(p));
  case SOTC_INT16:
    return *reinterpret_cast<const int16_t *>(p);
  case SOTC_INT8:
    return *reinterpret_cast<const int8_t *>(p);
  case SOTC_UINT8:
  case SOTC_BOOL:
    return *reinterpret_cast<const uint8_t *>(p);
  default:
    return NAN;
  }
}

} // namespace

namespace {

using ArtifactPtr = std::unique_ptr<sotc_artifact, void (*)(sotc_artifact *)>;

/// `name: float32[4, 8] = [v0, v1, ..., v7, ...]`
void printTensor(std::ostream &out, const sotc_value &v) {
  out << v.name << ": " << shapeText(v) << " = [";
  size_t total = elements(v), shown = std::min<size_t>(total, 8);
  for (size_t e = 0; e < shown; ++e)
    out << (e ? ", " : "") << element(v, e);
  out << (total > shown ? ", ...]" : "]") << "\n";
}

/// The host callbacks a process without Python can make: print shows the tensors it was
/// given (its constant arguments are in the manifest), and reading a tensor on the host
/// (x.numpy(), x.item()) needs nothing more here. A --break-on API needs its framework.
int hostCall(void *, const sotc_host_call *call, sotc_error *error) {
  std::string callee = call->callee;
  if (callee == "print") {
    std::cout << "print (" << call->source << "):\n";
    for (size_t i = 0; i < call->num_args; ++i)
      printTensor(std::cout << "  ", call->args[i]);
    return 0;
  }
  if (callee == "Tensor.numpy" || callee == "Tensor.item" || callee == "Tensor.tolist")
    return 0;
  std::snprintf(error->message, sizeof(error->message),
                "%s runs in Python with its framework (sotc.load)", call->callee);
  return 1;
}

/// Opens the artifact on `device` (cpu, cuda, cuda:N, or "" for its own target's first).
ArtifactPtr open(const std::string &path, const std::string &device) {
  sotc_artifact *raw = nullptr;
  sotc_error error{};
  if (sotc_open_device(path.c_str(), device.c_str(), &raw, &error))
    throw RuntimeFailure(error.code, error.message);
  sotc_set_host_handler(raw, hostCall, nullptr);
  return ArtifactPtr(raw, sotc_close);
}

/// A result in host memory: itself, or (CUDA) a copy in `storage`.
sotc_value onHost(sotc_artifact *artifact, sotc_value v, std::vector<char> &storage) {
  if (v.device != SOTC_DEVICE_CUDA)
    return v;
  storage.resize(bytesOf(v));
  sotc_error error{};
  if (sotc_copy_out(artifact, &v, storage.data(), SOTC_DEVICE_CPU, &error))
    throw RuntimeFailure(error.code, error.message);
  v.data = storage.data();
  v.device = SOTC_DEVICE_CPU;
  return v;
}

/// The parameters as the options give them; `storage` holds the bytes of read or drawn tensors.
std::vector<sotc_value> parameters(sotc_artifact *artifact, const RunOptions &options,
                                   std::vector<std::vector<char>> &storage) {
  std::map<std::string, std::string> given;
  for (const std::string &input : options.inputs) {
    size_t eq = input.find('=');
    if (eq == std::string::npos || eq == 0)
      badInput("--input " + input + ": expected NAME=@file.npy, NAME=random or NAME=VALUE");
    given[input.substr(0, eq)] = input.substr(eq + 1);
  }
  size_t n = sotc_num_parameters(artifact);
  if (options.entry >= sotc_num_entries(artifact))
    badInput("--entry " + std::to_string(options.entry) + ": the artifact has " +
             std::to_string(sotc_num_entries(artifact)) + " entries");
  std::vector<sotc_value> values(n);
  storage.assign(n, {});
  std::mt19937 rng(options.seed);
  for (size_t i = 0; i < n; ++i) {
    sotc_value spec{};
    sotc_entry_parameter_spec(artifact, options.entry, i, &spec);
    std::string name = spec.name;
    auto it = given.find(name);
    if (it == given.end()) {
      if (!spec.is_tensor) { // not given: the value it was traced with
        values[i] = spec;
        continue;
      }
      badInput("no --input for parameter " + name + " (" + shapeText(spec) + ")");
    }
    std::string text = it->second;
    given.erase(it);
    if (!text.empty() && text[0] == '@') {
      values[i] = readNpy(text.substr(1), storage[i]);
    } else if (text == "random" && spec.is_tensor) {
      for (int d = 0; d < spec.rank; ++d)
        if (spec.shape[d] < 0) { // the dynamic size --batch gives (s_k: its k-th)
          size_t k = static_cast<size_t>(-1 - spec.shape[d]);
          if (options.batch.empty())
            badInput(name + "=random: it has a dynamic batch (" + shapeText(spec) +
                     "): give its size with --batch N");
          if (options.batch.size() > 1 && k >= options.batch.size())
            badInput(name + "=random: it has dynamic size s" + std::to_string(k) + " (" +
                     shapeText(spec) + "): --batch gives " + std::to_string(options.batch.size()) +
                     " sizes");
          spec.shape[d] = options.batch[options.batch.size() > 1 ? k : 0];
        }
      values[i] = spec;
      storage[i].resize(bytesOf(spec));
      // Floats normal; integers in 0..15 (token ids and indices of small tables); bools even.
      std::normal_distribution<float> normal;
      std::uniform_int_distribution<int32_t> small(0, 15);
      for (size_t e = 0; e < elements(spec); ++e) {
        if (spec.dtype == SOTC_FLOAT32)
          reinterpret_cast<float *>(storage[i].data())[e] = normal(rng);
        else if (spec.dtype == SOTC_FLOAT64)
          reinterpret_cast<double *>(storage[i].data())[e] = normal(rng);
        else if (spec.dtype == SOTC_INT64)
          reinterpret_cast<int64_t *>(storage[i].data())[e] = small(rng);
        else if (spec.dtype == SOTC_INT32)
          reinterpret_cast<int32_t *>(storage[i].data())[e] = small(rng);
        else if (spec.dtype == SOTC_BOOL)
          reinterpret_cast<uint8_t *>(storage[i].data())[e] = small(rng) % 2;
        else if (spec.dtype == SOTC_FLOAT16 || spec.dtype == SOTC_BFLOAT16)
          reinterpret_cast<uint16_t *>(storage[i].data())[e] = halfBits(normal(rng), spec.dtype);
        else
          badInput(name + "=random: float32, float64, float16, bfloat16, int64, int32 and bool "
                          "tensors are drawn");
      }
      values[i].data = storage[i].data();
    } else {
      values[i] = sotc_value{};
      storage[i].assign(text.begin(), text.end());
      storage[i].push_back('\0');
      values[i].repr = storage[i].data();
    }
  }
  if (!given.empty())
    badInput("--input " + given.begin()->first + ": the artifact has no such parameter");
  return values;
}

/// The parameters that did not match, as a table (JAX's "called with / compiled for").
std::string mismatchTable(const sotc_artifact *artifact) {
  // An artifact of several traces: which entry each row was checked for.
  bool entries = sotc_num_entries(artifact) > 1;
  std::vector<std::vector<std::string>> rows = {{"input", "compiled for", "got", "guard"}};
  if (entries)
    rows[0].insert(rows[0].begin(), "entry");
  for (size_t i = 0; i < sotc_num_mismatches(artifact); ++i) {
    sotc_parameter_mismatch m{};
    sotc_mismatch(artifact, i, &m);
    rows.push_back({m.parameter, m.expected, m.got, m.guard});
    if (entries)
      rows.back().insert(rows.back().begin(), std::to_string(m.entry));
  }
  if (rows.size() == 1)
    return "";
  std::vector<size_t> width(rows[0].size());
  for (const auto &row : rows)
    for (size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  std::string table;
  for (const auto &row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c)
      line +=
          " " + row[c] + std::string(c + 1 < row.size() ? width[c] - row[c].size() + 2 : 0, ' ');
    table += line + "\n";
  }
  return table;
}

/// One run; the results' count.
size_t runOnce(sotc_artifact *artifact, std::vector<sotc_value> &values,
               std::vector<sotc_value> &results) {
  sotc_error error{};
  size_t count = results.size();
  if (sotc_run(artifact, values.data(), values.size(), results.data(), &count, &error) ||
      sotc_synchronize(artifact, &error))
    throw RuntimeFailure(error.code, error.message, mismatchTable(artifact));
  return count;
}

std::string milliseconds(double seconds) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  // Microseconds show under 0.1 ms: a small call's time is mostly outside its steps.
  s.precision(seconds < 1e-4 ? 4 : 3);
  s << seconds * 1e3 << " ms";
  return s.str();
}

} // namespace

void generateTokens(const GenerateOptions &options) {
  ArtifactPtr artifact = open(options.artifact, options.device);
  sotc_value tokensSpec{}, positionsSpec{};
  if (sotc_num_parameters(artifact.get()) < 2 ||
      sotc_parameter_spec(artifact.get(), 0, &tokensSpec) ||
      sotc_parameter_spec(artifact.get(), 1, &positionsSpec) || !tokensSpec.is_tensor ||
      tokensSpec.dtype != SOTC_INT64 || tokensSpec.rank != 2 || !positionsSpec.is_tensor ||
      positionsSpec.rank != 1)
    badInput(options.artifact + ": generate takes a model compiled from forward(tokens "
                                "int64[1, T], positions int64[T]) -> logits");
  sotc_state *raw = nullptr;
  sotc_error error{};
  if (sotc_state_new(artifact.get(), &raw, &error) || sotc_use_state(artifact.get(), raw, &error))
    throw RuntimeFailure(error.code, error.message);
  std::unique_ptr<sotc_state, void (*)(sotc_state *)> state(raw, sotc_state_free);
  int64_t positions = sotc_cache_positions(artifact.get()),
          total = static_cast<int64_t>(options.prompt.size()) + options.maxNewTokens;
  if (options.prompt.empty())
    badInput("--prompt-ids: no tokens");
  if (positions && total > positions)
    badInput(std::to_string(options.prompt.size()) + " prompt tokens and " +
             std::to_string(options.maxNewTokens) + " new ones exceed the " +
             std::to_string(positions) + " positions the compiled cache holds");
  std::vector<int64_t> tokens = options.prompt, at(tokens.size());
  for (size_t i = 0; i < at.size(); ++i)
    at[i] = static_cast<int64_t>(i);
  std::vector<sotc_value> results(64);
  std::vector<char> host;
  std::vector<int64_t> generated;
  std::vector<double> seconds;
  // Timed: the prompt once untimed first (the weights' preparation, the first call's plans),
  // then from the state's initial values.
  for (int64_t step = options.timing ? -1 : 0; step < options.maxNewTokens; ++step) {
    if (step == 0 && options.timing && sotc_state_reset(artifact.get(), state.get(), &error))
      throw RuntimeFailure(error.code, error.message);
    std::vector<sotc_value> values(2);
    values[0] = tokensSpec, values[1] = positionsSpec;
    values[0].shape[0] = 1, values[0].shape[1] = static_cast<int64_t>(tokens.size());
    values[0].data = tokens.data();
    values[1].shape[0] = static_cast<int64_t>(at.size());
    values[1].data = at.data();
    auto start = std::chrono::steady_clock::now();
    runOnce(artifact.get(), values, results);
    if (step < 0)
      continue;
    sotc_value logits = onHost(artifact.get(), results[0], host);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    // The last position's row of [1, T, V] or [1, V] float32 logits.
    int64_t vocabulary = logits.shape[logits.rank - 1];
    if (logits.dtype != SOTC_FLOAT32 || (logits.rank != 2 && logits.rank != 3) || !vocabulary)
      badInput(options.artifact + ": its first result is not float32 logits [1, T, V] or [1, V]");
    const float *row = static_cast<const float *>(logits.data) +
                       (static_cast<int64_t>(elements(logits)) - vocabulary);
    int64_t token = std::max_element(row, row + vocabulary) - row;
    generated.push_back(token);
    if (std::find(options.eos.begin(), options.eos.end(), token) != options.eos.end())
      break;
    int64_t next = at.back() + 1;
    tokens.assign(1, token), at.assign(1, next);
  }
  for (size_t i = 0; i < generated.size(); ++i)
    std::cout << (i ? "," : "") << generated[i];
  std::cout << "\n";
  if (options.timing && !seconds.empty()) {
    std::vector<double> decode(seconds.begin() + 1, seconds.end());
    std::sort(decode.begin(), decode.end());
    // A decode step reads every weight (the cache included) at least once: the bandwidth that
    // implies, next to the machine's (bench/stream measures it).
    double weightBytes = 0;
    for (size_t i = 0; i < sotc_num_weights(artifact.get()); ++i) {
      sotc_value spec{};
      if (!sotc_weight_spec(artifact.get(), i, &spec))
        weightBytes += static_cast<double>(bytesOf(spec));
    }
    std::ostringstream rates;
    rates.setf(std::ios::fixed);
    rates.precision(1);
    rates << "prefill: " << options.prompt.size() << " tokens in " << milliseconds(seconds[0])
          << " (" << static_cast<double>(options.prompt.size()) / seconds[0] << " tokens/s)\n";
    if (decode.empty()) {
      rates << "decode: -\n";
    } else {
      double median = decode[decode.size() / 2];
      rates << "decode: " << milliseconds(median) << " per token (median of " << decode.size()
            << "), " << 1 / median << " tokens/s, " << weightBytes / median / 1e9 << " GB/s of its "
            << weightBytes / 1e6 << " MB of weights\n";
    }
    std::cout << rates.str();
  }
}

void runArtifact(const RunOptions &options) {
  ArtifactPtr artifact = open(options.artifact, options.device);
  std::vector<std::vector<char>> storage;
  std::vector<sotc_value> values = parameters(artifact.get(), options, storage);
  std::vector<sotc_value> results(64);
  size_t count = runOnce(artifact.get(), values, results);
  std::vector<char> host;
  std::vector<std::pair<std::string, std::string>> archive;
  for (size_t r = 0; r < count; ++r) {
    sotc_value v = onHost(artifact.get(), results[r], host);
    if (!options.output.empty() && std::none_of(archive.begin(), archive.end(), [&](auto &m) {
          return m.first == v.name; // a tensor returned twice is stored once
        }))
      archive.emplace_back(v.name, npyBytes(v));
    printTensor(std::cout, v);
    if (!options.saveDir.empty())
      writeOutputFile(options.saveDir + "/" + v.name + ".npy", npyBytes(v));
  }
  if (!options.output.empty())
    writeOutputFile(options.output, npzBytes(archive));
}

void benchArtifact(const RunOptions &options) {
  ArtifactPtr artifact = open(options.artifact, options.device);
  std::vector<std::vector<char>> storage;
  std::vector<sotc_value> values = parameters(artifact.get(), options, storage);
  std::vector<sotc_value> results(64);
  // GEMM steps on the CPU are measured against the FMA peak of the cores this process may use
  // (the GEMM libraries run on as many threads), before any of their threads exist.
  bench::FmaPeak peak;
  cpu_set_t cores;
  if (*sotc_gemm_implementation(artifact.get()) &&
      std::string(sotc_target(artifact.get())) == "cpu" &&
      sched_getaffinity(0, sizeof cores, &cores) == 0)
    peak = bench::measureFmaPeak(static_cast<unsigned>(CPU_COUNT(&cores)));
  for (unsigned i = 0; i < options.warmup; ++i)
    runOnce(artifact.get(), values, results);
  // The runs are timed as a caller sees them; then as many again with every step timed
  // (profiling synchronizes and times each step, which a plain run does not).
  std::vector<double> runs;
  unsigned repeat = std::max(options.repeat, 1u);
  for (unsigned i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    runOnce(artifact.get(), values, results);
    runs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  sotc_set_profiling(artifact.get(), 1);
  for (unsigned i = 0; i < repeat; ++i)
    runOnce(artifact.get(), values, results);
  double inSteps = 0; // per run: the steps' medians, each as often as a run calls it
  double flops = 0;   // per run: the GEMM and convolution steps' work
  for (size_t i = 0; i < sotc_num_profiled_steps(artifact.get()); ++i) {
    sotc_step_profile p{};
    sotc_profiled_step(artifact.get(), i, &p);
    inSteps += p.median_seconds * static_cast<double>(p.calls) / repeat;
    flops += p.flops * static_cast<double>(p.calls) / repeat;
  }
  std::sort(runs.begin(), runs.end());
  double median = runs[runs.size() / 2];
  std::cout << options.artifact << ": " << runs.size() << " runs after " << options.warmup
            << " warm-up runs\n";
  std::cout << "run: min " << milliseconds(runs.front()) << ", median " << milliseconds(median)
            << "\n";
  // What a call spends outside its steps: the parameters' checks, buffers, the thread pool's
  // hand-offs (small-batch latency).
  std::cout << "outside steps: " << milliseconds(std::max(0.0, median - inSteps))
            << " per run (median run less the steps' medians)\n";
  if (*sotc_kernel_cpu(artifact.get()))
    std::cout << "kernels: " << sotc_kernel_cpu(artifact.get()) << "\n";
  if (*sotc_gemm_implementation(artifact.get())) {
    std::cout << "gemm: " << sotc_gemm_implementation(artifact.get()) << "\n";
    if (peak.gflops > 0)
      std::cout << "peak: " << std::fixed << std::setprecision(1) << peak.gflops
                << " GFLOP/s float32 (" << peak.isa << " FMA on " << peak.threads
                << (peak.threads == 1 ? " thread" : " threads") << ", measured)\n"
                << std::defaultfloat;
  }
  if (flops > 0) {
    // The work a model does is nearly all in these steps: its GFLOP/s against the peak.
    std::cout << "work: " << std::fixed << std::setprecision(3) << flops / 1e9
              << " GFLOP a run in GEMM and convolution steps, " << std::setprecision(1)
              << flops / median / 1e9 << " GFLOP/s at the median run";
    if (peak.gflops > 0)
      std::cout << " (" << std::setprecision(0) << 100 * flops / median / 1e9 / peak.gflops
                << "% of peak)";
    std::cout << "\n" << std::defaultfloat;
  }
  for (size_t i = 0; i < sotc_num_profiled_steps(artifact.get()); ++i) {
    sotc_step_profile p{};
    sotc_profiled_step(artifact.get(), i, &p);
    std::ostringstream bandwidth;
    bandwidth.setf(std::ios::fixed);
    bandwidth.precision(1);
    bandwidth << static_cast<double>(p.bytes) / p.median_seconds / 1e9 << " GB/s";
    if (p.flops > 0)
      bandwidth << ", " << p.flops / p.median_seconds / 1e9 << " GFLOP/s";
    if (p.flops > 0 && peak.gflops > 0)
      bandwidth << " (" << std::setprecision(0)
                << 100 * p.flops / p.median_seconds / 1e9 / peak.gflops << "% of peak)"
                << std::setprecision(1);
    std::cout << "  " << p.kind << " " << p.name << ": " << p.calls << " calls, min "
              << milliseconds(p.min_seconds) << ", median " << milliseconds(p.median_seconds)
              << ", " << p.bytes << " bytes, " << bandwidth.str() << "\n";
  }
}

} // namespace sotc::run
