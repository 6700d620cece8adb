#include "compiler/ops/Schema.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

namespace sotc::ops {

namespace {
struct TypeName {
  ParamType type;
  const char *name;
};
constexpr TypeName kTypeNames[] = {
    {ParamType::Tensor, "Tensor"},     {ParamType::TensorList, "TensorList"},
    {ParamType::Scalar, "Scalar"},     {ParamType::Int, "Int"},
    {ParamType::Float, "Float"},       {ParamType::Bool, "Bool"},
    {ParamType::IntList, "IntList"},   {ParamType::FloatList, "FloatList"},
    {ParamType::DataType, "DataType"}, {ParamType::String, "String"},
    {ParamType::Index, "Index"},
};

/// A hand-written recursive-descent parser; positions in messages are 1-based columns.
class Parser {
public:
  explicit Parser(const std::string &text) : text_(text) {}

  Signature parse() {
    Signature sig;
    skipSpaces();
    if (peek() == '(') { // a tuple of tensors, named like torch's: (Tensor values, Tensor indices)
      ++pos_;
      sig.returnType = ParamType::TensorList;
      while (true) {
        skipSpaces();
        if (parseType() != ParamType::Tensor)
          fail("a returned tuple holds tensors only");
        skipSpaces();
        sig.returnNames.push_back(identifier());
        skipSpaces();
        if (peek() != ',')
          break;
        ++pos_;
      }
      expect(')');
      skipSpaces();
    } else {
      sig.returnType = parseType();
      if (sig.returnType != ParamType::Tensor && sig.returnType != ParamType::TensorList)
        fail("the return type must be Tensor, TensorList or a tuple of tensors");
    }
    expect('(');
    bool keywordOnly = false;
    bool seenDefault = false;
    std::set<std::string> names;
    skipSpaces();
    if (peek() != ')') {
      while (true) {
        skipSpaces();
        if (peek() == '*') {
          if (keywordOnly)
            fail("'*' appears twice");
          ++pos_;
          keywordOnly = true;
        } else {
          Param p = parseParam();
          p.keywordOnly = keywordOnly;
          if (!names.insert(p.name).second)
            fail("parameter '" + p.name + "' appears twice");
          if (!keywordOnly && p.defaultValue)
            seenDefault = true;
          else if (!keywordOnly && seenDefault)
            fail("parameter '" + p.name + "' without a default follows one with a default");
          sig.params.push_back(std::move(p));
        }
        skipSpaces();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        break;
      }
    }
    expect(')');
    skipSpaces();
    if (pos_ != text_.size())
      fail("unexpected text after the parameter list");
    return sig;
  }

private:
  [[noreturn]] void fail(const std::string &what) const {
    throw SchemaError("column " + std::to_string(pos_ + 1) + ": " + what);
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpaces() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  void expect(char c) {
    skipSpaces();
    if (peek() != c)
      fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string identifier() {
    skipSpaces();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    if (start == pos_)
      fail("expected a name");
    return text_.substr(start, pos_ - start);
  }

  ParamType parseType() {
    size_t start = pos_;
    std::string name = identifier();
    for (const TypeName &t : kTypeNames)
      if (name == t.name)
        return t.type;
    pos_ = start;
    skipSpaces();
    fail("unknown type '" + name + "'");
  }

  Param parseParam() {
    Param p;
    p.type = parseType();
    if (peek() == '[') {
      if (p.type != ParamType::IntList && p.type != ParamType::FloatList)
        fail("only IntList and FloatList take a size");
      ++pos_;
      if (peek() != '1')
        fail("a list's [N] supports N = 1 (a single value is accepted)");
      ++pos_;
      expect(']');
      p.acceptsSingle = true;
    }
    if (text_.compare(pos_, 3, "...") == 0) { // Tensor... tensors: the remaining positionals
      if (p.type != ParamType::Tensor)
        fail("only Tensor... gathers the remaining positional arguments");
      pos_ += 3;
      p.type = ParamType::TensorList;
      p.variadic = true;
    }
    if (peek() == '?') {
      ++pos_;
      p.optional = true;
    }
    p.name = identifier();
    skipSpaces();
    if (peek() == '=') {
      ++pos_;
      size_t at = pos_;
      Arg value = parseDefault(p.type);
      if (value.isNone() && !p.optional) {
        pos_ = at;
        fail("default None needs an optional type ('" + std::string(paramTypeName(p.type)) + "?')");
      }
      if (!value.isNone() && !argMatches(p, value)) {
        pos_ = at;
        fail("default " + value.repr() + " is not a " + paramTypeName(p.type));
      }
      p.defaultValue = std::move(value);
    }
    return p;
  }

  Arg parseDefault(ParamType type) {
    skipSpaces();
    char c = peek();
    if (c == '"' || c == '\'') {
      size_t end = text_.find(c, pos_ + 1);
      if (end == std::string::npos)
        fail("unterminated string");
      Arg a = Arg::ofString(text_.substr(pos_ + 1, end - pos_ - 1));
      pos_ = end + 1;
      return a;
    }
    if (c == '[') {
      ++pos_;
      std::vector<Arg> items;
      skipSpaces();
      while (peek() != ']') {
        items.push_back(parseNumber());
        skipSpaces();
        if (peek() == ',')
          ++pos_;
        else if (peek() != ']')
          fail("expected ',' or ']'");
        skipSpaces();
      }
      ++pos_;
      return Arg::list(std::move(items));
    }
    if (c == '-' || c == '.' || std::isdigit(static_cast<unsigned char>(c)))
      return parseNumber();
    std::string word = identifier();
    if (word == "None")
      return Arg::none();
    if (word == "True" || word == "False")
      return Arg::ofBool(word == "True");
    if (type == ParamType::DataType)
      if (std::optional<DType> d = parseDType(word))
        return Arg::ofDType(*d);
    fail("cannot read default '" + word + "'");
  }

  Arg parseNumber() {
    skipSpaces();
    const char *begin = text_.c_str() + pos_;
    char *end = nullptr;
    double value = std::strtod(begin, &end);
    if (end == begin)
      fail("expected a number");
    std::string token(begin, static_cast<const char *>(end));
    pos_ += token.size();
    if (token.find_first_of(".eE") == std::string::npos)
      return Arg::ofInt(std::strtoll(token.c_str(), nullptr, 10));
    return Arg::ofFloat(value);
  }

  const std::string &text_;
  size_t pos_ = 0;
};
} // namespace

const char *paramTypeName(ParamType type) {
  for (const TypeName &t : kTypeNames)
    if (t.type == type)
      return t.name;
  return "?";
}

Signature parseSignature(const std::string &text) { return Parser(text).parse(); }

const Param *Signature::find(const std::string &name) const {
  for (const Param &p : params)
    if (p.name == name)
      return &p;
  return nullptr;
}

std::string Signature::str() const {
  std::string s;
  for (const std::string &name : returnNames)
    s += (s.empty() ? "(Tensor " : ", Tensor ") + name;
  s = s.empty() ? std::string(paramTypeName(returnType)) + " (" : s + ") (";
  bool first = true, starred = false;
  for (const Param &p : params) {
    if (!first)
      s += ", ";
    first = false;
    if (p.keywordOnly && !starred) {
      s += "*, ";
      starred = true;
    }
    s += p.variadic ? "Tensor..." : paramTypeName(p.type);
    if (p.acceptsSingle)
      s += "[1]";
    if (p.optional)
      s += "?";
    s += " " + p.name;
    if (p.defaultValue)
      s += "=" + (p.defaultValue->kind == Arg::Kind::String
                      ? "\"" + p.defaultValue->stringValue + "\""
                      : p.defaultValue->repr());
  }
  return s + ")";
}

bool argMatches(const Param &param, const Arg &arg) {
  using K = Arg::Kind;
  switch (param.type) {
  case ParamType::Tensor:
    return arg.isTensor();
  case ParamType::TensorList:
    if (!arg.isSequence())
      return false;
    for (const Arg &item : arg.items)
      if (!item.isTensor())
        return false;
    return true;
  case ParamType::Scalar:
    return arg.kind == K::Bool || arg.kind == K::Int || arg.kind == K::Float;
  case ParamType::Int:
    return arg.kind == K::Int;
  case ParamType::Float: // a bool is a number in Python (F.pad(x, p, value=False))
    return arg.kind == K::Int || arg.kind == K::Float || arg.kind == K::Bool;
  case ParamType::Bool:
    return arg.kind == K::Bool;
  case ParamType::IntList:
    if (arg.kind == K::Int)
      return param.acceptsSingle;
    if (!arg.isSequence())
      return false;
    for (const Arg &item : arg.items)
      if (item.kind != K::Int)
        return false;
    return true;
  case ParamType::FloatList:
    if (arg.kind == K::Int || arg.kind == K::Float)
      return param.acceptsSingle;
    if (!arg.isSequence())
      return false;
    for (const Arg &item : arg.items)
      if (item.kind != K::Int && item.kind != K::Float)
        return false;
    return true;
  case ParamType::DataType:
    return arg.kind == K::DType ||
           (arg.kind == K::String && parseDType(arg.stringValue).has_value());
  case ParamType::String:
    return arg.kind == K::String;
  case ParamType::Index: {
    // A slice's start, stop and step are ints or None, as Python's slice indices.
    auto bound = [](const Arg &a) { return a.kind == K::Int || a.kind == K::None; };
    auto simple = [&](const Arg &a) {
      if (a.kind == K::Slice)
        return std::all_of(a.items.begin(), a.items.end(), bound);
      if (a.kind == K::List) // positions along one axis
        return std::all_of(a.items.begin(), a.items.end(),
                           [](const Arg &i) { return i.kind == K::Int; });
      return a.kind == K::Int || a.kind == K::None || a.kind == K::Ellipsis;
    };
    if (arg.kind == K::Tuple) {
      for (const Arg &item : arg.items)
        if (!simple(item))
          return false;
      return true;
    }
    return simple(arg);
  }
  }
  return false;
}

} // namespace sotc::ops
