#include "compiler/frontend/BytecodeDump.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace sotc::frontend {
namespace {

// Column widths of CPython's dis, 3.11 to 3.13 (Lib/dis.py _OPNAME_WIDTH, _OPARG_WIDTH).
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

  void printCode(const trace::CodeObject &code) {
    if (trace_.python().minor() >= 13)
      printCodeWithLabels(code);
    else
      printCodeWithOffsets(code);
  }

  /// 3.13's dis.disassemble (show_offsets=False): jump targets and exception-table bounds
  /// become labels L1, L2, ... in offset order; no offsets.
  void printCodeWithLabels(const trace::CodeObject &code) {
    std::map<uint32_t, size_t> labels;
    for (const trace::Instruction &ins : code.instructions())
      if (ins.has_jump_target())
        labels[ins.jump_target()] = 0;
    for (const trace::ExceptionEntry &e : code.exception_entries())
      for (uint32_t offset : {e.start(), e.end(), e.target()})
        labels[offset] = 0;
    size_t n = 0;
    for (auto &[offset, label] : labels)
      label = ++n;
    auto label = [&](uint32_t offset) { return "L" + std::to_string(labels.at(offset)); };
    size_t labelWidth = 4 + std::to_string(labels.size()).size();

    uint32_t maxLine = 0;
    bool unnumbered = false;
    for (const trace::Instruction &ins : code.instructions()) {
      maxLine = std::max(maxLine, ins.starts_line());
      unnumbered |= ins.starts_unnumbered_line();
    }
    size_t linenoWidth = maxLine == 0 ? 0 : std::max<size_t>(3, std::to_string(maxLine).size());
    if (linenoWidth && linenoWidth < 4 && unnumbered)
      linenoWidth = 4; // room for "  --"

    for (const trace::Instruction &ins : code.instructions()) {
      bool starts = ins.starts_line() || ins.starts_unnumbered_line();
      if (linenoWidth && starts && ins.offset() > 0)
        os_ << "\n";
      std::vector<std::string> fields;
      if (linenoWidth)
        fields.push_back(!starts             ? std::string(linenoWidth, ' ')
                         : ins.starts_line() ? rjust(std::to_string(ins.starts_line()), linenoWidth)
                                             : rjust("  --", linenoWidth));
      fields.push_back(labels.count(ins.offset()) ? rjust(label(ins.offset()) + ":", labelWidth)
                                                  : std::string(labelWidth, ' '));
      fields.push_back("   "); // the "current instruction" column
      fields.push_back(ljust(ins.opname(), kOpnameWidth));
      if (ins.has_arg()) {
        size_t excess = ins.opname().size() > kOpnameWidth ? ins.opname().size() - kOpnameWidth : 0;
        fields.push_back(
            rjust(std::to_string(ins.arg()), kOpargWidth > excess ? kOpargWidth - excess : 0));
        // get_instructions numbers labels without the exception table's, dis.dis with them:
        // a jump's "to L<n>" is dis.dis's.
        if (ins.has_jump_target() && labels.count(ins.jump_target()))
          fields.push_back("(to " + label(ins.jump_target()) + ")");
        else if (!ins.argrepr().empty())
          fields.push_back("(" + ins.argrepr() + ")");
      }
      std::string line;
      for (size_t i = 0; i < fields.size(); ++i)
        line += (i ? " " : "") + fields[i];
      os_ << rstrip(line) << "\n";
    }
    if (code.exception_entries_size() > 0) {
      os_ << "ExceptionTable:\n";
      for (const trace::ExceptionEntry &e : code.exception_entries())
        os_ << "  " << label(e.start()) << " to " << label(e.end()) << " -> " << label(e.target())
            << " [" << e.depth() << "]" << (e.lasti() ? " lasti" : "") << "\n";
    }
  }

  /// 3.11's and 3.12's dis._disassemble_bytes, with show_caches=False.
  void printCodeWithOffsets(const trace::CodeObject &code) {
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
