#include "compiler/frontend/Variables.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace sotc::frontend {

PyConst PyConst::ofBool(bool v) {
  PyConst c;
  c.kind = Kind::Bool;
  c.boolValue = v;
  return c;
}
PyConst PyConst::ofInt(int64_t v) {
  PyConst c;
  c.kind = Kind::Int;
  c.intValue = v;
  return c;
}
PyConst PyConst::ofFloat(double v) {
  PyConst c;
  c.kind = Kind::Float;
  c.floatValue = v;
  return c;
}
PyConst PyConst::ofStr(std::string v) {
  PyConst c;
  c.kind = Kind::Str;
  c.text = std::move(v);
  return c;
}

double PyConst::number() const {
  if (kind == Kind::BigInt)
    return std::strtod(text.c_str(), nullptr);
  return kind == Kind::Bool  ? boolValue
         : kind == Kind::Int ? static_cast<double>(intValue)
                             : floatValue;
}

bool PyConst::truthy() const {
  switch (kind) {
  case Kind::None:
    return false;
  case Kind::Bool:
    return boolValue;
  case Kind::Int:
    return intValue != 0;
  case Kind::BigInt:
    return true;
  case Kind::Float:
    return floatValue != 0;
  case Kind::Complex:
    return floatValue != 0 || imagValue != 0;
  case Kind::Str:
  case Kind::Bytes:
    return !text.empty();
  case Kind::Ellipsis:
    return true;
  }
  return true;
}

/// Python's float repr: the shortest text that reads back as the same double.
static std::string floatRepr(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  std::string s = buf;
  // Python writes exponents as e-05 -> 1e-05 (same as C) but adds ".0" to integral values.
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  size_t e = s.find('e');
  if (e != std::string::npos && s.compare(e, 2, "e+") == 0)
    s.erase(e + 1, 1); // 1e+16 -> 1e16
  return s;
}

static std::string quote(const std::string &s) {
  bool single = s.find('\'') == std::string::npos || s.find('"') != std::string::npos;
  char q = single ? '\'' : '"';
  std::string out(1, q);
  for (char c : s) {
    if (c == '\\' || c == q)
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + q;
}

std::string PyConst::repr() const {
  switch (kind) {
  case Kind::None:
    return "None";
  case Kind::Bool:
    return boolValue ? "True" : "False";
  case Kind::Int: // a dynamic size passed to a call (ops::sizeOfDim) as the size it is
    return ops::isSymbolSize(intValue)
               ? ops::productOf(ops::dimOfSymbolSize(intValue)).text()
               : std::to_string(intValue);
  case Kind::BigInt:
    return text;
  case Kind::Float:
    return floatRepr(floatValue);
  case Kind::Complex:
    return floatValue == 0 ? floatRepr(imagValue) + "j"
                           : "(" + floatRepr(floatValue) + (imagValue < 0 ? "" : "+") +
                                 floatRepr(imagValue) + "j)";
  case Kind::Str:
    return quote(text);
  case Kind::Bytes:
    return "b" + quote(text);
  case Kind::Ellipsis:
    return "Ellipsis";
  }
  return "?";
}

std::string PyConst::str() const { return kind == Kind::Str ? text : repr(); }

std::string PyConst::typeName() const {
  switch (kind) {
  case Kind::None:
    return "NoneType";
  case Kind::Bool:
    return "bool";
  case Kind::Int:
  case Kind::BigInt:
    return "int";
  case Kind::Float:
    return "float";
  case Kind::Complex:
    return "complex";
  case Kind::Str:
    return "str";
  case Kind::Bytes:
    return "bytes";
  case Kind::Ellipsis:
    return "ellipsis";
  }
  return "object";
}

bool PyConst::operator==(const PyConst &o) const {
  if (kind == Kind::BigInt || o.kind == Kind::BigInt)
    return kind == o.kind && text == o.text; // a big int never equals an int64 one
  if (isNumber() && o.isNumber())
    return number() == o.number();
  if (kind != o.kind)
    return false;
  switch (kind) {
  case Kind::Complex:
    return floatValue == o.floatValue && imagValue == o.imagValue;
  case Kind::Str:
  case Kind::Bytes:
  case Kind::BigInt:
    return text == o.text;
  default:
    return true;
  }
}

bool Tracker::traceable() const {
  switch (kind) {
  case Kind::Local:
  case Kind::Global:
  case Kind::Closure:
  case Kind::Weight:
    return true;
  case Kind::GetItem:
  case Kind::GetAttr:
    return parent && parent->tracker.traceable();
  default:
    return false;
  }
}

std::string Tracker::expression() const {
  switch (kind) {
  case Kind::Local:
    return "frame.f_locals['" + name + "']";
  case Kind::Global:
    return "frame.f_globals['" + name + "']";
  case Kind::Closure:
    return "frame.f_locals['" + name + "']";
  case Kind::GetItem:
    return parent->tracker.expression() + "[" + key.repr() + "]";
  case Kind::GetAttr:
    return parent->tracker.expression() + "." + name;
  case Kind::Weight:
    return "weights['" + name + "']";
  default:
    return "<computed>";
  }
}

void collectTensors(const VarPtr &v, std::vector<VarPtr> &out, std::set<const Variable *> &seen) {
  if (!v || !seen.insert(v.get()).second)
    return;
  if (v->isTensor()) {
    out.push_back(v);
    return;
  }
  for (const VarPtr &i : v->items)
    collectTensors(i, out, seen);
  for (const VarPtr &k : v->keys)
    collectTensors(k, out, seen);
  collectTensors(v->self, out, seen);
  for (const VarPtr &c : v->closure)
    collectTensors(c, out, seen);
  for (const VarPtr &d : v->defaults)
    collectTensors(d, out, seen);
}

Tracker computedFrom(std::vector<VarPtr> inputs) {
  Tracker t;
  t.kind = Tracker::Kind::Computed;
  t.inputs = std::move(inputs);
  return t;
}

namespace {
thread_local VariableArena *currentArena = nullptr;
} // namespace

VariableArena::VariableArena() : previous_(currentArena) { currentArena = this; }

VariableArena::~VariableArena() {
  for (const std::weak_ptr<Variable> &w : variables_)
    if (VarPtr v = w.lock())
      v->tracker = Tracker{};
  currentArena = previous_;
}

void VariableArena::record(const VarPtr &v) {
  if (currentArena)
    currentArena->variables_.push_back(v);
}

VarPtr Variable::constant_(PyConst c, Tracker t) {
  auto v = std::make_shared<Variable>();
  VariableArena::record(v);
  v->kind = Kind::Constant;
  v->constant = std::move(c);
  v->tracker = std::move(t);
  return v;
}

VarPtr Variable::make(Kind kind, Tracker t) {
  auto v = std::make_shared<Variable>();
  VariableArena::record(v);
  v->kind = kind;
  v->tracker = std::move(t);
  return v;
}

std::string Variable::typeName() const {
  switch (kind) {
  case Kind::Constant:
    return constant.typeName();
  case Kind::Tensor:
    return "Tensor";
  case Kind::Tuple:
    return name.empty() ? "tuple" : name; // sets are tuples named "set" / "frozenset"
  case Kind::List:
    return "list";
  case Kind::Dict:
    return "dict";
  case Kind::Range:
    return "range";
  case Kind::Slice:
    return "slice";
  case Kind::Module:
    return "module";
  case Kind::External:
  case Kind::Builtin:
  case Kind::Function:
    return "function";
  case Kind::Method:
    return "method";
  case Kind::Null:
    return "NULL";
  case Kind::Cell:
    return "cell";
  case Kind::Iterator:
    return generator ? "generator" : "iterator";
  case Kind::Object:
    return name; // the class's qualname
  case Kind::Class:
    return "type";
  case Kind::Opaque:
    return name.empty() ? "object" : name;
  }
  return "object";
}

std::string Variable::repr() const {
  switch (kind) {
  case Kind::Constant:
    return constant.repr();
  case Kind::Tensor:
    return tensorName;
  case Kind::Tuple:
  case Kind::List: {
    if (kind == Kind::Tuple && !name.empty()) {
      std::string s = name + "({";
      for (size_t i = 0; i < items.size(); ++i)
        s += (i ? ", " : "") + items[i]->repr();
      return s + "})";
    }
    std::string s = kind == Kind::Tuple ? "(" : "[";
    for (size_t i = 0; i < items.size(); ++i)
      s += (i ? ", " : "") + items[i]->repr();
    if (kind == Kind::Tuple && items.size() == 1)
      s += ",";
    return s + (kind == Kind::Tuple ? ")" : "]");
  }
  case Kind::Dict: {
    std::string s = "{";
    for (size_t i = 0; i < keys.size(); ++i)
      s += (i ? ", " : "") + keys[i]->repr() + ": " + items[i]->repr();
    return s + "}";
  }
  case Kind::Range:
    return "range(" + std::to_string(start) + ", " + std::to_string(stop) +
           (step != 1 ? ", " + std::to_string(step) : "") + ")";
  case Kind::Slice:
    return "slice(" + items[0]->repr() + ", " + items[1]->repr() + ", " + items[2]->repr() + ")";
  case Kind::Module:
  case Kind::External:
    return name;
  case Kind::Builtin:
    return "<built-in function " + name + ">";
  case Kind::Function:
    return "<function " + name + ">";
  case Kind::Method:
    return "<method " + name + ">";
  case Kind::Object: {
    std::string s = "<" + name + " object";
    for (size_t i = 0; i < keys.size(); ++i)
      s += (i ? ", " : ": ") + keys[i]->constant.text + "=" + items[i]->repr();
    return s + ">";
  }
  case Kind::Class:
    return "<class " + name + ">";
  default:
    if (!exceptionType.empty()) { // ValueError('a', 1), as CPython prints its arguments
      std::string s = name.substr(0, name.find('(')) + "(";
      for (size_t i = 0; i < items.size(); ++i)
        s += (i ? ", " : "") + items[i]->repr();
      return s + ")";
    }
    return "<" + typeName() + ">";
  }
}

std::string Variable::str() const {
  if (isConstant())
    return constant.str();
  if (kind == Kind::Opaque && !exceptionType.empty()) { // its one argument, or their tuple
    if (items.size() == 1) // a KeyError shows its key as repr() does
      return exceptionType == "KeyError" ? items[0]->repr() : items[0]->str();
    if (items.empty())
      return "";
    std::string all = repr(); // ValueError('a', 1) -> ('a', 1)
    return all.substr(all.find('('));
  }
  return repr();
}

} // namespace sotc::frontend
