#include "compiler/frontend/BytecodeDump.h"

#include <algorithm>
#include <iomanip>
#include <set>
#include <sstream>
#include <string>

namespace sotc::frontend {
namespace {

// Column widths of CPython 3.11's dis (Lib/dis.py _OPNAME_WIDTH, _OPARG_WIDTH).
constexpr size_t kOpnameWidth = 20;
constexpr size_t kOpargWidth = 5;

std::string rjust(const std::string &s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string ljust(const std::string &s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string rstrip(std::string s) {
  while (!s.empty() && s.back() == ' ')
    s.pop_back();
  return s;
}

class Printer {
public:
  Printer(const trace::Trace &trace, std::ostream &os) : trace_(trace), os_(os) {}

  void printAll() {
    printRecursive(trace_.functions(trace_.entry_function()).code());
    for (const trace::Function &fn : trace_.functions()) {
      if (printed_.count(fn.code()))
        continue;
      printHeader(fn.code());
      printRecursive(fn.code());
    }
  }

private:
  std::string codeRepr(uint32_t index) const {
    const trace::CodeObject &code = trace_.code_objects(index);
    std::ostringstream s;
    s << "<code object " << code.name() << " at 0x" << std::hex << index << std::dec << ", file \""
      << code.filename() << "\", line " << code.firstlineno() << ">";
    return s.str();
  }

  void printHeader(uint32_t index) { os_ << "\nDisassembly of " << codeRepr(index) << ":\n"; }

  /// dis._disassemble_recursive: the code, then each code constant in co_consts order.
  void printRecursive(uint32_t index) {
    printed_.insert(index);
    const trace::CodeObject &code = trace_.code_objects(index);
    printCode(code);
    for (const trace::Value &c : code.consts())
      if (c.kind_case() == trace::Value::kCode) {
        printHeader(c.code());
        printRecursive(c.code());
      }
  }

  /// dis._disassemble_bytes, with show_caches=False.
  void printCode(const trace::CodeObject &code) {
    uint32_t maxLine = 0;
    for (const trace::Instruction &ins : code.instructions())
      maxLine = std::max(maxLine, ins.starts_line());
    bool showLineno = maxLine > 0;
    size_t linenoWidth = !showLineno ? 0 : maxLine >= 1000 ? std::to_string(maxLine).size() : 3;
    size_t maxOffset = code.code().size() >= 2 ? code.code().size() - 2 : 0;
    size_t offsetWidth = maxOffset >= 10000 ? std::to_string(maxOffset).size() : 4;

    for (const trace::Instruction &ins : code.instructions()) {
      if (showLineno && ins.starts_line() && ins.offset() > 0)
        os_ << "\n";
      std::string line;
      if (linenoWidth)
        line += ins.starts_line() ? rjust(std::to_string(ins.starts_line()), linenoWidth)
                                  : std::string(linenoWidth, ' ');
      if (linenoWidth)
        line += ' ';
      line += "    "; // the "current instruction" column and its separator
      line += ins.is_jump_target() ? ">>" : "  ";
      line += ' ' + rjust(std::to_string(ins.offset()), offsetWidth);
      line += ' ' + ljust(ins.opname(), kOpnameWidth);
      if (ins.has_arg()) {
        line += ' ' + rjust(std::to_string(ins.arg()), kOpargWidth);
        if (!ins.argrepr().empty())
          line += " (" + ins.argrepr() + ")";
      }
      os_ << rstrip(line) << "\n";
    }
    if (code.exception_entries_size() > 0) {
      os_ << "ExceptionTable:\n";
      for (const trace::ExceptionEntry &e : code.exception_entries())
        os_ << "  " << e.start() << " to " << e.end() - 2 << " -> " << e.target() << " ["
            << e.depth() << "]" << (e.lasti() ? " lasti" : "") << "\n";
    }
  }

  const trace::Trace &trace_;
  std::ostream &os_;
  std::set<uint32_t> printed_;
};

} // namespace

void dumpBytecode(const trace::Trace &trace, std::ostream &os) { Printer(trace, os).printAll(); }

} // namespace sotc::frontend
