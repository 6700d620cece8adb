//===- LayerTable.h - Built-in layers as operator calls ----------------------------------===//
//
// What calling a built-in layer of paddle.nn or torch.nn computes, read from
// LayerEntries.def: one call of an operator-table entry whose arguments come from the layer's
// input and attributes. The frontend resolves the arguments; this table only says where each
// one comes from.
//
//===--------------------------------------------------------------------------------------===//
#ifndef SOTC_OPS_LAYERTABLE_H
#define SOTC_OPS_LAYERTABLE_H

#include <string>
#include <vector>

namespace sotc::ops {

/// Where one argument of a layer's call comes from (Required: not an argument, a condition:
/// attribute `keyword` must equal the literal `text`).
struct LayerArg {
  enum class Source { Input, Attribute, Literal, Required };
  std::string keyword; // empty: positional
  Source source = Source::Input;
  std::string text; // Attribute: the attribute's name; Literal: the Python literal
};

struct LayerEntry {
  std::string className; // "torch.nn.Linear"
  enum class Kind { Call, Identity, Sequence, List, Dict, Composite } kind = Kind::Call;
  std::string callee; // Call: the operator-table entry
  std::vector<LayerArg> args;
};

/// The entry for a layer class's public name, or nullptr.
const LayerEntry *lookupLayer(const std::string &className);

/// Every entry, in LayerEntries.def's order.
const std::vector<LayerEntry> &layerEntries();

} // namespace sotc::ops

#endif // SOTC_OPS_LAYERTABLE_H
