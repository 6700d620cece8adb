#include "dialects/mapexpr/Utils/MapExpr.h"

#include <algorithm>
#include <sstream>

namespace sotc::mapexpr {

std::string Kernel::str(bool indexDetail) const {
  auto name = [&](int t) { return "t_" + tensors[t].name; };
  std::ostringstream s;
  s << this->name << "(";
  bool first = true;
  for (int t : outputs) {
    s << (first ? "" : ", ") << "&" << name(t);
    first = false;
  }
  for (int t : inputs) {
    s << (first ? "" : ", ") << name(t);
    first = false;
  }
  s << ") {\n";
  for (const AnchoredMapStmt &a : stmts) {
    s << "  AnchoredMapStmt(" << name(a.anchor) << ") {\n";
    s << "    MapStmt(";
    if (a.schedule) { // the loop descriptors, as the readme-era CINN prints them
      for (size_t i = 0; i < a.schedule->loops.size(); ++i)
        s << (i ? ", " : "") << a.schedule->loops[i].str();
    } else { // not scheduled yet: the anchor iterators
      s << "[";
      for (size_t i = 0; i < a.space.size(); ++i)
        s << (i ? ", " : "") << "i" << i;
      s << "]";
    }
    s << ") {\n";
    for (const OpStmt &op : a.stmts) {
      std::vector<std::string> args;
      auto arg = [&](int t, bool out) {
        std::string text = (out ? "&" : "") + name(t);
        if (indexDetail)
          text += "[" + flatIndexStr(a.index.at(t), tensors[t].shape) + "]";
        args.push_back(text);
      };
      for (int t : op.outs)
        arg(t, true);
      for (int t : op.ins)
        arg(t, false);
      s << "      " << op.op << "(";
      for (size_t i = 0; i < args.size(); ++i)
        s << (indexDetail ? (i ? ",\n          " : "\n          ") : (i ? ", " : "")) << args[i];
      s << ");\n";
    }
    s << "    }\n  }\n";
  }
  s << "}\n";
  return s.str();
}

Expected<sched::Schedule> scheduleFor(const std::vector<sched::ScheduleDim> &dims, Target target) {
  bool reduction =
      std::any_of(dims.begin(), dims.end(), [](const sched::ScheduleDim &d) { return d.reduced; });
  return catchCodedError([&] {
    if (target == Target::Cpu)
      return sched::cpuSchedule(dims);
    return reduction ? sched::gpuReductionSchedule(dims) : sched::gpuInjectiveSchedule(dims);
  });
}

} // namespace sotc::mapexpr
