#include "runtime/src/emulator/Ptx.h"
#include "runtime/src/emulator/Half.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace sotc::runtime::emulator {

namespace {

[[noreturn]] void fail(uint32_t line, const std::string &why) {
  throw std::runtime_error("line " + std::to_string(line) + ": " + why);
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

/// Splits at the commas outside braces and brackets.
std::vector<std::string> operands(const std::string &s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string current;
  for (char c : s) {
    if (c == '{' || c == '[')
      ++depth;
    if (c == '}' || c == ']')
      --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(current));
      current.clear();
    } else {
      current += c;
    }
  }
  if (!trim(current).empty())
    out.push_back(trim(current));
  return out;
}

const std::unordered_map<std::string, Type> &typeNames() {
  static const std::unordered_map<std::string, Type> names = {
      {"pred", Type::Pred}, {"b8", Type::B8},   {"b16", Type::B16}, {"b32", Type::B32},
      {"b64", Type::B64},   {"u8", Type::U8},   {"u16", Type::U16}, {"u32", Type::U32},
      {"u64", Type::U64},   {"s8", Type::S8},   {"s16", Type::S16}, {"s32", Type::S32},
      {"s64", Type::S64},   {"f16", Type::F16}, {"bf16", Type::BF16}, {"f32", Type::F32},
      {"f64", Type::F64}};
  return names;
}

const std::unordered_map<std::string, Compare> &compareNames() {
  static const std::unordered_map<std::string, Compare> names = {
      {"eq", Compare::Eq},   {"ne", Compare::Ne},   {"lt", Compare::Lt},   {"le", Compare::Le},
      {"gt", Compare::Gt},   {"ge", Compare::Ge},   {"lo", Compare::Lo},   {"ls", Compare::Ls},
      {"hi", Compare::Hi},   {"hs", Compare::Hs},   {"equ", Compare::Equ}, {"neu", Compare::Neu},
      {"ltu", Compare::Ltu}, {"leu", Compare::Leu}, {"gtu", Compare::Gtu}, {"geu", Compare::Geu},
      {"num", Compare::Num}, {"nan", Compare::Nan}};
  return names;
}

const std::unordered_map<std::string, Special> &specialNames() {
  static const std::unordered_map<std::string, Special> names = {
      {"%tid.x", Special::TidX},       {"%tid.y", Special::TidY},
      {"%tid.z", Special::TidZ},       {"%ntid.x", Special::NtidX},
      {"%ntid.y", Special::NtidY},     {"%ntid.z", Special::NtidZ},
      {"%ctaid.x", Special::CtaidX},   {"%ctaid.y", Special::CtaidY},
      {"%ctaid.z", Special::CtaidZ},   {"%nctaid.x", Special::NctaidX},
      {"%nctaid.y", Special::NctaidY}, {"%nctaid.z", Special::NctaidZ},
      {"%laneid", Special::LaneId},    {"%warpid", Special::WarpId},
      {"%lanemask_eq", Special::LanemaskEq}, {"%lanemask_lt", Special::LanemaskLt},
      {"%lanemask_le", Special::LanemaskLe}, {"%lanemask_gt", Special::LanemaskGt},
      {"%lanemask_ge", Special::LanemaskGe}};
  return names;
}

/// A variable declaration's parts: `.align 4 .b8 name[512] = {...}` after its space.
struct Declaration {
  uint64_t align = 1, elementBytes = 0, count = 1;
  std::string name;
  std::string init;
};

Declaration declaration(const std::string &text, uint32_t line) {
  Declaration d;
  std::string rest = text;
  if (size_t eq = rest.find('='); eq != std::string::npos) {
    d.init = trim(rest.substr(eq + 1));
    rest = rest.substr(0, eq);
  }
  std::vector<std::string> words;
  {
    std::string w;
    for (char c : rest + " ")
      if (std::isspace(static_cast<unsigned char>(c))) {
        if (!w.empty())
          words.push_back(w);
        w.clear();
      } else {
        w += c;
      }
  }
  bool pointer = false; // a kernel parameter's `.ptr [.space] [.align N]`: the pointee's
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string &w = words[i];
    if (w == ".align" && i + 1 < words.size()) {
      uint64_t align = std::stoull(words[++i]);
      if (!pointer)
        d.align = align;
    } else if (w == ".ptr") {
      pointer = true;
    } else if (pointer && (w == ".global" || w == ".const" || w == ".shared" || w == ".local")) {
      continue;
    } else if (w[0] == '.') {
      auto t = typeNames().find(w.substr(1));
      if (t == typeNames().end())
        fail(line, "unsupported declaration qualifier " + w);
      d.elementBytes = static_cast<uint64_t>(std::max(bitsOf(t->second), 8) / 8);
    } else {
      d.name = w;
    }
  }
  if (size_t b = d.name.find('['); b != std::string::npos) {
    std::string n = d.name.substr(b + 1, d.name.find(']') - b - 1);
    d.count = n.empty() ? 0 : std::stoull(n);
    d.name.resize(b);
  }
  if (d.name.empty() || !d.elementBytes)
    fail(line, "a declaration without a name or type: " + text);
  return d;
}

uint64_t parseInteger(const std::string &s, uint32_t line) {
  try {
    size_t used = 0;
    bool neg = !s.empty() && s[0] == '-';
    std::string body = neg ? s.substr(1) : s;
    uint64_t v;
    if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X'))
      v = std::stoull(body.substr(2), &used, 16), used += 2;
    else
      v = std::stoull(body, &used, 10);
    if (body.size() > used && (body[used] == 'U' || body[used] == 'u'))
      ++used;
    if (used != body.size())
      fail(line, "not a number: " + s);
    return neg ? ~v + 1 : v;
  } catch (const std::logic_error &) {
    fail(line, "not a number: " + s);
  }
}

bool isNumber(const std::string &s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) ||
                        (s[0] == '-' && s.size() > 1 &&
                         std::isdigit(static_cast<unsigned char>(s[1]))));
}

/// An immediate as the register bits an operand of type `t` holds.
uint64_t immediate(const std::string &s, Type t, uint32_t line) {
  bool neg = s[0] == '-';
  std::string body = neg ? s.substr(1) : s;
  if (body.size() == 10 && body[0] == '0' && (body[1] == 'f' || body[1] == 'F')) {
    uint32_t bits = static_cast<uint32_t>(std::stoull(body.substr(2), nullptr, 16));
    float f;
    std::memcpy(&f, &bits, 4);
    if (neg)
      f = -f;
    return t == Type::F64 ? doubleToBits(f) : floatToBits(f);
  }
  if (body.size() == 18 && body[0] == '0' && (body[1] == 'd' || body[1] == 'D')) {
    uint64_t bits = std::stoull(body.substr(2), nullptr, 16);
    double d;
    std::memcpy(&d, &bits, 8);
    if (neg)
      d = -d;
    return t == Type::F32 ? floatToBits(static_cast<float>(d)) : doubleToBits(d);
  }
  if (body.find_first_of(".eE") != std::string::npos && body.find('x') == std::string::npos) {
    double d = std::stod(s);
    return t == Type::F64 ? doubleToBits(d) : floatToBits(static_cast<float>(d));
  }
  uint64_t v = parseInteger(s, line);
  if (isFloat(t))
    return t == Type::F64 ? doubleToBits(static_cast<double>(static_cast<int64_t>(v)))
                          : floatToBits(static_cast<float>(static_cast<int64_t>(v)));
  return v;
}

/// Builds one kernel from its parameter list, directives and body.
class KernelBuilder {
public:
  KernelBuilder(Kernel &k, const std::map<std::string, uint64_t> &moduleShared,
                const std::vector<std::string> &moduleDynamicShared,
                const std::vector<GlobalVariable> &globals, uint64_t moduleSharedBytes)
      : k_(k), globals_(globals) {
    // Module-level .shared variables are every kernel's.
    for (const auto &[name, offset] : moduleShared)
      sharedOffsets_[name] = offset;
    for (const std::string &name : moduleDynamicShared)
      dynamicShared_.push_back(name);
    k_.sharedBytes = moduleSharedBytes;
    k_.carryRegister = newRegister();
    k_.sinkRegister = newRegister();
  }

  void param(const std::string &text, uint32_t line) {
    // ".param .u64 .ptr .align 16 name" or ".param .align 8 .b8 name[16]"
    Declaration d = declaration(text.substr(text.find(".param") + 6), line);
    uint64_t bytes = d.elementBytes * d.count;
    uint64_t align = std::max<uint64_t>(d.align, d.elementBytes);
    k_.paramBytes = (k_.paramBytes + align - 1) / align * align;
    symbols_[d.name] = special(Special::ParamAddress, k_.paramBytes);
    k_.paramOffsets.push_back(static_cast<uint32_t>(k_.paramBytes));
    k_.paramSizes.push_back(static_cast<uint32_t>(bytes));
    k_.paramBytes += bytes;
  }

  void statement(const std::string &text, uint32_t line) {
    if (text.rfind(".reg", 0) == 0)
      return registers(text, line);
    if (text.rfind(".shared", 0) == 0) {
      Declaration d = declaration(text.substr(7), line);
      if (text.find(".extern") != std::string::npos || d.count == 0) {
        k_.dynamicShared = true;
        symbols_[d.name] = special(Special::DynamicSharedAddress, 0);
        return;
      }
      k_.sharedBytes = (k_.sharedBytes + d.align - 1) / d.align * d.align;
      k_.shared.push_back({d.name, k_.sharedBytes, d.elementBytes * d.count});
      sharedOffsets_[d.name] = k_.sharedBytes;
      k_.sharedBytes += d.elementBytes * d.count;
      return;
    }
    if (text.rfind(".local", 0) == 0) {
      Declaration d = declaration(text.substr(6), line);
      k_.localBytes = (k_.localBytes + d.align - 1) / d.align * d.align;
      symbols_[d.name] = special(Special::LocalAddress, k_.localBytes);
      k_.localBytes += d.elementBytes * d.count;
      return;
    }
    if (text.rfind(".pragma", 0) == 0 || text.rfind(".loc", 0) == 0 ||
        text.rfind(".file", 0) == 0)
      return;
    if (text.rfind(".branchtargets", 0) == 0) { // "$L_brx_0: .branchtargets $L1, $L2, ..."
      if (lastLabel_.empty())
        fail(line, ".branchtargets without a label");
      tables_[lastLabel_] = operands(text.substr(14));
      return;
    }
    if (text[0] == '.')
      fail(line, "unsupported directive in a kernel: " + text);
    instruction(text, line);
  }

  void label(const std::string &name) {
    labels_[name] = static_cast<uint32_t>(k_.code.size());
    lastLabel_ = name;
  }

  void finish() {
    Instr exit;
    exit.op = Op::Exit;
    exit.line = k_.code.empty() ? 0 : k_.code.back().line;
    k_.code.push_back(exit);
    k_.text.push_back("(end of kernel)");
    auto at = [&](size_t index, const std::string &name) {
      auto l = labels_.find(name);
      if (l == labels_.end())
        fail(k_.code[index].line, "branch to an unknown label " + name);
      return l->second;
    };
    for (auto &[index, name] : branches_)
      k_.code[index].target = at(index, name);
    for (auto &[index, name] : indirect_) {
      auto table = tables_.find(name);
      if (table == tables_.end())
        fail(k_.code[index].line, "brx.idx over " + name + ", which is no .branchtargets");
      std::vector<uint32_t> targets;
      for (const std::string &target : table->second)
        targets.push_back(at(index, target));
      k_.code[index].target = static_cast<uint32_t>(k_.jumpTables.size());
      k_.jumpTables.push_back(std::move(targets));
    }
  }

private:
  uint32_t newRegister() { return k_.registers++; }

  uint32_t special(Special kind, uint64_t offset) {
    uint32_t r = newRegister();
    k_.specials.push_back({r, kind, offset});
    return r;
  }

  void registers(const std::string &text, uint32_t line) {
    // ".reg .b32 %r<125>" or ".reg .pred %p1, %p2"
    std::string rest = trim(text.substr(4));
    size_t space = rest.find_first_of(" \t");
    if (space == std::string::npos)
      fail(line, "a .reg without names");
    for (std::string name : operands(rest.substr(space))) {
      if (size_t lt = name.find('<'); lt != std::string::npos) {
        uint32_t count = static_cast<uint32_t>(std::stoul(name.substr(lt + 1)));
        ranges_[name.substr(0, lt)] = {k_.registers, count};
        k_.registers += count;
      } else {
        named_[name] = newRegister();
      }
    }
  }

  /// The register holding `name` (a declared register, a special one or a symbol's address).
  uint32_t reg(const std::string &name, uint32_t line) {
    if (auto n = named_.find(name); n != named_.end())
      return n->second;
    if (auto s = symbols_.find(name); s != symbols_.end())
      return s->second;
    if (auto s = specialNames().find(name); s != specialNames().end())
      return symbols_[name] = special(s->second, 0);
    if (auto s = sharedOffsets_.find(name); s != sharedOffsets_.end())
      return symbols_[name] = special(Special::SharedAddress, s->second);
    if (std::find(dynamicShared_.begin(), dynamicShared_.end(), name) != dynamicShared_.end()) {
      k_.dynamicShared = true;
      return symbols_[name] = special(Special::DynamicSharedAddress, 0);
    }
    for (const GlobalVariable &g : globals_)
      if (g.name == name) {
        uint32_t r = newRegister();
        k_.globals.push_back({r, name});
        return symbols_[name] = r;
      }
    size_t digits = name.find_last_not_of("0123456789");
    if (digits != std::string::npos && digits + 1 < name.size()) {
      auto range = ranges_.find(name.substr(0, digits + 1));
      uint32_t index = static_cast<uint32_t>(std::stoul(name.substr(digits + 1)));
      if (range != ranges_.end() && index < range->second.second)
        return range->second.first + index;
    }
    fail(line, "unknown register or symbol " + name);
  }

  uint32_t constant(uint64_t value) {
    auto c = constants_.find(value);
    if (c != constants_.end())
      return c->second;
    uint32_t r = newRegister();
    k_.constants.push_back({r, value});
    return constants_[value] = r;
  }

  /// A source operand of type `t`: a register, an immediate or a symbol's address.
  uint32_t source(const std::string &s, Type t, uint32_t line) {
    if (s.empty())
      fail(line, "a missing operand");
    if (s[0] == '!')
      fail(line, "negated predicate operands are not supported: " + s);
    if (isNumber(s))
      return constant(immediate(s, t, line));
    if (s.find('+') != std::string::npos) // `mov.u64 %rd, sym+8`: not emitted by NVPTX
      fail(line, "address arithmetic in an operand is not supported: " + s);
    return reg(s, line);
  }

  uint32_t destination(const std::string &s, uint32_t line) {
    if (s == "_")
      return k_.sinkRegister;
    if (auto n = named_.find(s); n != named_.end()) // `.reg .b32 tmp;` in a scope
      return n->second;
    if (s.empty() || s[0] != '%')
      fail(line, "a destination that is not a register: " + s);
    return reg(s, line);
  }

  /// `[base+offset]`: the base's register and the offset.
  void address(const std::string &s, Instr &in, uint32_t line) {
    if (s.size() < 2 || s.front() != '[' || s.back() != ']')
      fail(line, "not an address: " + s);
    std::string inner = trim(s.substr(1, s.size() - 2));
    std::string base = inner;
    int64_t offset = 0;
    if (size_t plus = inner.find('+'); plus != std::string::npos) {
      base = trim(inner.substr(0, plus));
      offset = static_cast<int64_t>(parseInteger(trim(inner.substr(plus + 1)), line));
    }
    in.src[0] = isNumber(base) ? constant(parseInteger(base, line)) : reg(base, line);
    in.offset = offset;
    in.numSrc = 1;
  }

  std::vector<std::string> vectorElements(const std::string &s) {
    if (s.size() < 2 || s.front() != '{')
      return {s};
    return operands(s.substr(1, s.size() - 2));
  }

  void instruction(const std::string &textIn, uint32_t line) {
    std::string text = textIn;
    Instr in;
    in.line = line;
    if (text[0] == '@') {
      size_t space = text.find_first_of(" \t");
      std::string g = text.substr(1, space - 1);
      in.negateGuard = g[0] == '!';
      in.guard = static_cast<int32_t>(reg(in.negateGuard ? g.substr(1) : g, line));
      text = trim(text.substr(space));
    }
    size_t space = text.find_first_of(" \t");
    std::string opcode = text.substr(0, space);
    std::vector<std::string> ops =
        space == std::string::npos ? std::vector<std::string>{} : operands(text.substr(space));
    std::vector<std::string> parts = split(opcode, '.');
    const std::string base = parts[0];
    static const std::set<std::string> known = {
        "mov",  "add",   "sub",   "addc",  "subc",  "mul",   "mul24", "mad",    "madc",
        "fma",  "div",   "rem",   "min",   "max",   "neg",   "abs",   "not",    "sqrt",
        "rsqrt", "rcp",  "ex2",   "lg2",   "sin",   "cos",   "tanh",  "brev",   "popc",
        "clz",  "and",   "or",    "xor",   "shl",   "shr",   "copysign", "bfe", "bfi",
        "shf",  "setp",  "selp",  "testp", "cvt",   "cvta",  "ld",    "ldu",    "st",
        "bra",  "brx",   "bar",   "barrier", "shfl", "vote", "ret",   "exit",   "membar",
        "fence", "prefetch", "prefetchu"};
    if (!known.count(base))
      fail(line, "unsupported instruction " + opcode);
    // Modifiers, whatever the order: types (first is the instruction's, second cvt's source).
    std::vector<Type> types;
    bool cc = false, wide = false, hasCompare = false;
    for (size_t i = 1; i < parts.size(); ++i) {
      const std::string &m = parts[i];
      if (auto t = typeNames().find(m); t != typeNames().end())
        types.push_back(t->second);
      else if ((m == "f16x2" || m == "bf16x2") && base == "cvt" && types.empty())
        types.push_back(m == "f16x2" ? Type::F16 : Type::BF16), in.packed = true;
      else if (m == "f16x2" || m == "bf16x2")
        fail(line, "packed half-precision instructions are not supported: " + opcode);
      else if (m == "rn" || m == "rz" || m == "rm" || m == "rp" || m == "rni" || m == "rzi" ||
               m == "rmi" || m == "rpi")
        in.round = m == "rn"    ? Round::Rn
                   : m == "rz"  ? Round::Rz
                   : m == "rm"  ? Round::Rm
                   : m == "rp"  ? Round::Rp
                   : m == "rni" ? Round::Rni
                   : m == "rzi" ? Round::Rzi
                   : m == "rmi" ? Round::Rmi
                                : Round::Rpi;
      else if (m == "ftz")
        in.ftz = true;
      else if (m == "sat")
        in.sat = true;
      else if (m == "NaN")
        in.nanPropagating = true;
      else if (m == "global" || m == "shared" || m == "local" || m == "param" || m == "const")
        in.space = m == "global"   ? Space::Global
                   : m == "shared" ? Space::Shared
                   : m == "local"  ? Space::Local
                   : m == "param"  ? Space::Param
                                   : Space::Const;
      else if (m == "v2" || m == "v4")
        in.vec = m == "v2" ? 2 : 4;
      else if (m == "cc")
        cc = true;
      else if (m == "lo" && base != "setp") // mul.lo / mad.lo: the default
        continue;
      else if (m == "hi" && base != "setp")
        in.hi = true;
      else if (m == "wide")
        wide = true;
      else if (m == "wrap")
        in.wrapShift = true;
      else if ((m == "and" || m == "or" || m == "xor") && base == "setp")
        in.boolOp = m == "and" ? 1 : m == "or" ? 2 : 3;
      else if (base == "setp" && compareNames().count(m))
        in.mode = static_cast<uint8_t>(compareNames().at(m)), hasCompare = true;
      else if (base == "shfl" && (m == "up" || m == "down" || m == "bfly" || m == "idx"))
        in.mode = static_cast<uint8_t>(m == "up"     ? ShflMode::Up
                                       : m == "down" ? ShflMode::Down
                                       : m == "bfly" ? ShflMode::Bfly
                                                     : ShflMode::Idx);
      else if (base == "vote" && (m == "all" || m == "any" || m == "uni" || m == "ballot"))
        in.mode = static_cast<uint8_t>(m == "all"   ? VoteMode::All
                                       : m == "any" ? VoteMode::Any
                                       : m == "uni" ? VoteMode::Uni
                                                    : VoteMode::Ballot);
      else if (base == "brx" && m == "idx")
        continue; // the only brx
      else if (base == "testp")
        in.mode = static_cast<uint8_t>(m == "finite"       ? TestpMode::Finite
                                       : m == "infinite"   ? TestpMode::Infinite
                                       : m == "number"     ? TestpMode::Number
                                       : m == "notanumber" ? TestpMode::NotANumber
                                       : m == "normal"     ? TestpMode::Normal
                                                           : TestpMode::Subnormal);
      // Cache, ordering and scope hints change nothing here: one thread runs at a time.
      else if (m != "nc" && m != "ca" && m != "cg" && m != "cs" && m != "lu" && m != "cv" &&
               m != "volatile" && m != "relaxed" && m != "acquire" && m != "release" &&
               m != "weak" && m != "gpu" && m != "cta" && m != "sys" && m != "sync" &&
               m != "aligned" && m != "uni" && m != "approx" && m != "full" && m != "to" &&
               m != "clamp" && m != "l" && m != "r" && m != "warp" && m != "sc" &&
               m != "acq_rel" && m.rfind("L1::", 0) != 0 && m.rfind("L2::", 0) != 0 &&
               m != "shared::cta")
        fail(line, "unsupported modifier ." + m + " in " + opcode);
    }
    if (std::find(parts.begin(), parts.end(), "approx") != parts.end() ||
        std::find(parts.begin(), parts.end(), "full") != parts.end())
      in.round = Round::Default;
    if (base == "shf" && std::find(parts.begin(), parts.end(), "r") != parts.end())
      in.hi = true; // shf.r
    in.type = types.empty() ? Type::None : types[0];
    in.srcType = types.size() > 1 ? types[1] : in.type;
    Type t = in.type;

    auto dsts = [&](size_t n) {
      for (size_t i = 0; i < n; ++i)
        in.dst[in.numDst++] = destination(ops.at(i), line);
    };
    auto srcs = [&](size_t from, Type st) {
      for (size_t i = from; i < ops.size(); ++i)
        in.src[in.numSrc++] = source(ops[i], st, line);
    };
    auto need = [&](size_t n) {
      if (ops.size() != n)
        fail(line, opcode + " takes " + std::to_string(n) + " operands");
    };
    auto simple = [&](Op op, size_t n) {
      need(n);
      in.op = op;
      dsts(1);
      srcs(1, t);
    };

    if (base == "mov") {
      if (ops.size() == 2 && ops[1][0] == '{') { // packing: mov.b64 x, {lo, hi}
        in.op = Op::Mov;
        dsts(1);
        for (const std::string &e : vectorElements(ops[1]))
          in.src[in.numSrc++] = source(e, Type::B32, line);
        if (in.numSrc != 2 && in.numSrc != 4)
          fail(line, "a vector mov packs 2 or 4 registers");
      } else if (ops.size() == 2 && ops[0][0] == '{') { // unpacking: mov.b64 {lo, hi}, x
        in.op = Op::Mov;
        for (const std::string &e : vectorElements(ops[0]))
          in.dst[in.numDst++] = destination(e, line);
        if (in.numDst != 2 && in.numDst != 4)
          fail(line, "a vector mov unpacks into 2 or 4 registers");
        srcs(1, t);
      } else {
        simple(Op::Mov, 2);
      }
    } else if (base == "add" || base == "sub" || base == "addc" || base == "subc") {
      bool carryIn = base == "addc" || base == "subc";
      if (cc || carryIn) {
        need(3);
        in.op = base[0] == 'a' ? Op::AddCarry : Op::SubCarry;
        in.mode = static_cast<uint8_t>((cc ? 1 : 0) | (carryIn ? 2 : 0));
        dsts(1);
        srcs(1, t);
      } else {
        simple(base == "add" ? Op::Add : Op::Sub, 3);
      }
    } else if (base == "mul" || base == "mul24") {
      if (base == "mul24")
        fail(line, "mul24 is not supported");
      simple(wide ? Op::MulWide : in.hi ? Op::MulHi : Op::Mul, 3);
    } else if (base == "mad" || base == "madc") {
      if (cc || base == "madc") {
        need(4);
        in.op = Op::MadCarry;
        in.mode = static_cast<uint8_t>((cc ? 1 : 0) | (base == "madc" ? 2 : 0));
        dsts(1);
        srcs(1, t);
      } else if (isFloat(t)) {
        simple(Op::Fma, 4);
      } else if (wide) {
        need(4);
        in.op = Op::MadWide;
        dsts(1);
        in.src[in.numSrc++] = source(ops[1], t, line);
        in.src[in.numSrc++] = source(ops[2], t, line);
        Type wideType = t == Type::S32 ? Type::S64 : t == Type::U32 ? Type::U64 : Type::U32;
        in.src[in.numSrc++] = source(ops[3], wideType, line);
      } else {
        simple(in.hi ? Op::MadHi : Op::Mad, 4);
      }
    } else if (base == "fma") {
      simple(Op::Fma, 4);
    } else if (base == "div") {
      simple(Op::Div, 3);
    } else if (base == "rem") {
      simple(Op::Rem, 3);
    } else if (base == "min" || base == "max") {
      simple(base == "min" ? Op::Min : Op::Max, 3);
    } else if (base == "neg" || base == "abs" || base == "not" || base == "sqrt" ||
               base == "rsqrt" || base == "rcp" || base == "ex2" || base == "lg2" ||
               base == "sin" || base == "cos" || base == "tanh" || base == "brev") {
      static const std::map<std::string, Op> unary = {
          {"neg", Op::Neg},   {"abs", Op::Abs}, {"not", Op::Not}, {"sqrt", Op::Sqrt},
          {"rsqrt", Op::Rsqrt}, {"rcp", Op::Rcp}, {"ex2", Op::Ex2}, {"lg2", Op::Lg2},
          {"sin", Op::Sin},   {"cos", Op::Cos}, {"tanh", Op::Tanh}, {"brev", Op::Brev}};
      simple(unary.at(base), 2);
    } else if (base == "popc" || base == "clz") {
      simple(base == "popc" ? Op::Popc : Op::Clz, 2);
    } else if (base == "and" || base == "or" || base == "xor") {
      simple(base == "and" ? Op::And : base == "or" ? Op::Or : Op::Xor, 3);
    } else if (base == "shl" || base == "shr") {
      need(3);
      in.op = base == "shl" ? Op::Shl : Op::Shr;
      dsts(1);
      in.src[in.numSrc++] = source(ops[1], t, line);
      in.src[in.numSrc++] = source(ops[2], Type::U32, line);
    } else if (base == "copysign") {
      simple(Op::Copysign, 3);
    } else if (base == "bfe" || base == "bfi") {
      need(base == "bfe" ? 4 : 5);
      in.op = base == "bfe" ? Op::Bfe : Op::Bfi;
      dsts(1);
      size_t valueOperands = base == "bfe" ? 1 : 2;
      for (size_t i = 1; i < ops.size(); ++i)
        in.src[in.numSrc++] = source(ops[i], i <= valueOperands ? t : Type::U32, line);
    } else if (base == "shf") {
      simple(in.hi ? Op::ShfR : Op::ShfL, 4);
    } else if (base == "setp") {
      if (!hasCompare)
        fail(line, "setp without a comparison");
      in.op = Op::Setp;
      std::vector<std::string> d = split(ops.at(0), '|');
      for (const std::string &x : d)
        in.dst[in.numDst++] = destination(trim(x), line);
      in.src[in.numSrc++] = source(ops.at(1), t, line);
      in.src[in.numSrc++] = source(ops.at(2), t, line);
      if (in.boolOp) {
        std::string c = ops.at(3);
        if (c[0] == '!')
          fail(line, "a negated predicate in setp is not supported");
        in.src[in.numSrc++] = source(c, Type::Pred, line);
      }
    } else if (base == "selp") {
      need(4);
      in.op = Op::Selp;
      dsts(1);
      in.src[in.numSrc++] = source(ops[1], t, line);
      in.src[in.numSrc++] = source(ops[2], t, line);
      in.src[in.numSrc++] = source(ops[3], Type::Pred, line);
    } else if (base == "testp") {
      simple(Op::Testp, 2);
    } else if (base == "cvt") {
      need(in.packed ? 3 : 2);
      in.op = Op::Cvt;
      dsts(1);
      in.src[in.numSrc++] = source(ops[1], in.srcType, line);
      if (in.packed) // cvt.rn.f16x2.f32 d, a, b: a's half in the upper 16 bits, b's in the lower
        in.src[in.numSrc++] = source(ops[2], in.srcType, line);
    } else if (base == "cvta") {
      if (bitsOf(t) != 64)
        fail(line, "32-bit state-space addresses are not supported: " + opcode);
      simple(Op::Cvta, 2);
    } else if (base == "ld" || base == "ldu") {
      need(2);
      in.op = Op::Ld;
      std::vector<std::string> d = vectorElements(ops[0]);
      if (d.size() != in.vec)
        fail(line, "a vector load of " + std::to_string(in.vec) + " needs as many registers");
      for (const std::string &x : d)
        in.dst[in.numDst++] = destination(x, line);
      address(ops[1], in, line);
    } else if (base == "st") {
      need(2);
      in.op = Op::St;
      address(ops[0], in, line);
      std::vector<std::string> v = vectorElements(ops[1]);
      if (v.size() != in.vec)
        fail(line, "a vector store of " + std::to_string(in.vec) + " needs as many values");
      for (const std::string &x : v)
        in.src[in.numSrc++] = source(x, t, line);
    } else if (base == "brx") { // brx.idx %r, $L_table: the table's entry at %r
      need(2);
      in.op = Op::BrxIdx;
      in.src[in.numSrc++] = source(ops[0], Type::U32, line);
      indirect_.push_back({k_.code.size(), ops[1]});
    } else if (base == "bra") {
      need(1);
      in.op = Op::Bra;
      branches_.push_back({k_.code.size(), ops[0]});
    } else if (base == "bar" || base == "barrier") {
      bool warp = std::find(parts.begin(), parts.end(), "warp") != parts.end();
      if (warp) {
        need(1);
        in.op = Op::WarpSync;
        in.src[in.numSrc++] = source(ops[0], Type::B32, line);
      } else {
        if (std::find(parts.begin(), parts.end(), "arrive") != parts.end() ||
            std::find(parts.begin(), parts.end(), "red") != parts.end())
          fail(line, "only bar.sync / barrier.sync are supported: " + opcode);
        if (ops.size() > 1)
          fail(line, "bar.sync with a thread count is not supported");
        in.op = Op::Bar;
        in.src[in.numSrc++] = source(ops.empty() ? "0" : ops[0], Type::U32, line);
      }
    } else if (base == "shfl") {
      if (std::find(parts.begin(), parts.end(), "sync") == parts.end())
        fail(line, "shfl without .sync is not supported");
      need(5);
      in.op = Op::Shfl;
      std::vector<std::string> d = split(ops[0], '|');
      for (const std::string &x : d)
        in.dst[in.numDst++] = destination(trim(x), line);
      srcs(1, Type::B32);
    } else if (base == "vote") {
      need(3);
      in.op = Op::Vote;
      dsts(1);
      in.src[in.numSrc++] = source(ops[1], Type::Pred, line);
      in.src[in.numSrc++] = source(ops[2], Type::B32, line);
    } else if (base == "ret" || base == "exit") {
      in.op = Op::Exit;
    } else if (base == "membar" || base == "fence") {
      in.op = Op::Fence;
    } else if (base == "prefetch" || base == "prefetchu") {
      in.op = Op::Nop;
    } else {
      fail(line, "unsupported instruction " + opcode);
    }
    k_.code.push_back(in);
    k_.text.push_back(textIn);
  }

  Kernel &k_;
  const std::vector<GlobalVariable> &globals_;
  std::map<std::string, uint32_t> named_;
  std::map<std::string, std::pair<uint32_t, uint32_t>> ranges_;
  std::map<std::string, uint32_t> symbols_;
  std::map<std::string, uint64_t> sharedOffsets_;
  std::vector<std::string> dynamicShared_;
  std::map<uint64_t, uint32_t> constants_;
  std::map<std::string, uint32_t> labels_;
  std::vector<std::pair<size_t, std::string>> branches_;
  std::vector<std::pair<size_t, std::string>> indirect_;   // brx.idx: its table's label
  std::map<std::string, std::vector<std::string>> tables_; // .branchtargets by label
  std::string lastLabel_;
};

/// The text with comments blanked (newlines kept, so line numbers stay).
std::string withoutComments(const std::string &text) {
  std::string out = text;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '"') { // strings (.pragma "nounroll") may hold anything
      for (++i; i < out.size() && out[i] != '"'; ++i) {
      }
    } else if (out.compare(i, 2, "//") == 0) {
      for (; i < out.size() && out[i] != '\n'; ++i)
        out[i] = ' ';
    } else if (out.compare(i, 2, "/*") == 0) {
      for (; i < out.size() && out.compare(i, 2, "*/") != 0; ++i)
        if (out[i] != '\n')
          out[i] = ' ';
      if (i < out.size())
        out[i] = out[i + 1] = ' ';
    }
  }
  return out;
}

/// Bytes of a variable's initializer `{1, 2, 3}` of elements of `elementBytes`.
std::vector<uint8_t> initializer(const std::string &init, uint64_t elementBytes, uint64_t bytes,
                                 uint32_t line) {
  std::vector<uint8_t> out;
  std::string body = trim(init);
  if (body.size() >= 2 && body.front() == '{')
    body = body.substr(1, body.size() - 2);
  for (const std::string &v : operands(body)) {
    uint64_t value = parseInteger(v, line);
    for (uint64_t b = 0; b < elementBytes; ++b)
      out.push_back(static_cast<uint8_t>(value >> (8 * b)));
  }
  if (out.size() > bytes)
    fail(line, "an initializer longer than its variable");
  out.resize(bytes, 0);
  return out;
}

} // namespace

Module parsePtx(const std::string &source) {
  std::string text = withoutComments(source);
  Module m;
  std::map<std::string, uint64_t> moduleShared;
  std::vector<std::string> moduleDynamicShared;
  uint64_t moduleSharedBytes = 0;
  size_t pos = 0;
  uint32_t line = 1;
  auto lineAt = [&](size_t upTo) {
    for (; pos < upTo && pos < text.size(); ++pos)
      if (text[pos] == '\n')
        ++line;
  };
  auto skipSpace = [&] {
    size_t p = pos;
    while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p])))
      ++p;
    lineAt(p);
  };
  auto until = [&](char c) -> std::string { // the text up to `c`, consumed with it
    size_t e = text.find(c, pos);
    if (e == std::string::npos)
      fail(line, std::string("expected '") + c + "'");
    std::string s = text.substr(pos, e - pos);
    lineAt(e + 1);
    return s;
  };
  for (skipSpace(); pos < text.size(); skipSpace()) {
    uint32_t at = line;
    if (text.compare(pos, 8, ".version") == 0 || text.compare(pos, 13, ".address_size") == 0) {
      until('\n');
    } else if (text.compare(pos, 7, ".target") == 0) {
      std::string t = trim(until('\n').substr(7));
      m.target = trim(split(t, ',')[0]);
    } else if (text.compare(pos, 6, ".entry") == 0 || text.compare(pos, 8, ".visible") == 0 ||
               text.compare(pos, 5, ".weak") == 0 || text.compare(pos, 5, ".func") == 0 ||
               (text.compare(pos, 7, ".extern") == 0 &&
                text.find(".func", pos) < text.find(';', pos))) {
      std::string header = until('(');
      if (header.find(".func") != std::string::npos)
        fail(at, "device functions (.func) are not supported");
      size_t e = header.find(".entry");
      if (e == std::string::npos)
        fail(at, "expected .entry");
      Kernel k;
      k.name = trim(header.substr(e + 6));
      KernelBuilder b(k, moduleShared, moduleDynamicShared, m.globals, moduleSharedBytes);
      std::string params = until(')');
      for (const std::string &p : operands(params))
        if (!p.empty())
          b.param(p, line);
      std::string directives = until('{');
      for (const char *d : {".maxntid", ".reqntid"}) {
        size_t at2 = directives.find(d);
        if (at2 == std::string::npos)
          continue;
        std::vector<std::string> dims = operands(directives.substr(at2 + std::strlen(d)));
        for (size_t i = 0; i < dims.size() && i < 3; ++i) {
          std::string n = trim(dims[i]);
          n = n.substr(0, n.find_first_not_of("0123456789"));
          k.maxThreads[i] = static_cast<uint32_t>(std::stoul(n));
        }
        for (size_t i = dims.size(); i < 3; ++i)
          k.maxThreads[i] = 1;
      }
      // The body: statements end in ';', labels in ':'; nested braces only scope.
      int depth = 1;
      std::string current;
      uint32_t statementLine = line;
      while (depth > 0) {
        if (pos >= text.size())
          fail(at, "a kernel body without its '}'");
        char c = text[pos];
        if (c == '\n')
          ++line;
        ++pos;
        if ((c == '{' || c == '}') && trim(current).empty()) { // a scope, not a vector
          depth += c == '{' ? 1 : -1;
          continue;
        }
        if (c == ';') {
          std::string s = trim(current);
          if (!s.empty())
            b.statement(s, statementLine);
          current.clear();
          continue;
        }
        if (c == ':' && current.find_first_of(" \t[") == std::string::npos &&
            trim(current).find_first_of(" \t") == std::string::npos && !trim(current).empty() &&
            trim(current)[0] != '.' && trim(current)[0] != '@') {
          b.label(trim(current));
          current.clear();
          continue;
        }
        if (trim(current).empty())
          statementLine = line;
        current += c;
      }
      b.finish();
      std::string name = k.name;
      m.kernels[name] = std::move(k);
    } else if (text.compare(pos, 7, ".global") == 0 || text.compare(pos, 6, ".const") == 0 ||
               text.compare(pos, 7, ".shared") == 0 || text.compare(pos, 7, ".extern") == 0) {
      std::string decl = until(';');
      bool shared = decl.find(".shared") != std::string::npos;
      std::string rest = decl;
      for (const char *q : {".extern", ".global", ".const", ".shared", ".visible"})
        if (size_t p = rest.find(q); p != std::string::npos)
          rest.erase(p, std::strlen(q));
      Declaration d = declaration(rest, at);
      if (shared && d.count == 0) {
        moduleDynamicShared.push_back(d.name);
      } else if (shared) {
        moduleSharedBytes = (moduleSharedBytes + d.align - 1) / d.align * d.align;
        moduleShared[d.name] = moduleSharedBytes;
        moduleSharedBytes += d.elementBytes * d.count;
      } else {
        GlobalVariable g{d.name, d.elementBytes * d.count, d.align, {}};
        if (!d.init.empty())
          g.init = initializer(d.init, d.elementBytes, g.bytes, at);
        m.globals.push_back(std::move(g));
      }
    } else {
      std::string word = text.substr(pos, text.find_first_of(" \t\n", pos) - pos);
      fail(at, "unsupported module directive " + word);
    }
  }
  return m; // a module of no kernels is valid (an artifact of GEMM steps only)
}

} // namespace sotc::runtime::emulator
