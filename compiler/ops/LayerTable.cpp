#include "compiler/ops/LayerTable.h"

#include <map>

namespace sotc::ops {
namespace {

LayerArg parseArg(std::string text) {
  LayerArg arg;
  if (size_t same = text.find("=="); same != std::string::npos && text[0] == '.') {
    arg.source = LayerArg::Source::Required;
    arg.keyword = text.substr(1, same - 1);
    arg.text = text.substr(same + 2);
    return arg;
  }
  size_t eq = text.find('=');
  if (eq != std::string::npos && text.compare(0, 1, "'") != 0 && text.compare(0, 1, "\"") != 0) {
    arg.keyword = text.substr(0, eq);
    text = text.substr(eq + 1);
  }
  if (text == "$0") {
    arg.source = LayerArg::Source::Input;
  } else if (!text.empty() && text[0] == '.') {
    arg.source = LayerArg::Source::Attribute;
    arg.text = text.substr(1);
  } else {
    arg.source = LayerArg::Source::Literal;
    arg.text = text;
  }
  return arg;
}

LayerEntry makeEntry(const char *className, std::string callee,
                     std::initializer_list<const char *> args) {
  LayerEntry e;
  e.className = className;
  e.kind = callee == "identity"   ? LayerEntry::Kind::Identity
           : callee == "sequence" ? LayerEntry::Kind::Sequence
                                  : LayerEntry::Kind::Call;
  if (e.kind == LayerEntry::Kind::Call)
    e.callee = std::move(callee);
  for (const char *a : args)
    e.args.push_back(parseArg(a));
  return e;
}

} // namespace

const std::vector<LayerEntry> &layerEntries() {
  static const std::vector<LayerEntry> entries = [] {
    std::vector<LayerEntry> out;
#define LAYER(cls, callee, ...) out.push_back(makeEntry(cls, callee, {__VA_ARGS__}));
#define LAYER_LIST(cls) out.push_back(LayerEntry{cls, LayerEntry::Kind::List, "", {}});
#define LAYER_DICT(cls) out.push_back(LayerEntry{cls, LayerEntry::Kind::Dict, "", {}});
#define LAYER_COMPOSITE(cls) out.push_back(LayerEntry{cls, LayerEntry::Kind::Composite, "", {}});
#include "compiler/ops/LayerEntries.def"
#undef LAYER
#undef LAYER_LIST
#undef LAYER_DICT
#undef LAYER_COMPOSITE
    return out;
  }();
  return entries;
}

const LayerEntry *lookupLayer(const std::string &className) {
  static const std::map<std::string, const LayerEntry *> byName = [] {
    std::map<std::string, const LayerEntry *> out;
    for (const LayerEntry &e : layerEntries())
      out[e.className] = &e;
    return out;
  }();
  auto it = byName.find(className);
  return it == byName.end() ? nullptr : it->second;
}

} // namespace sotc::ops
