#include "compiler/ops/OpTable.h"

#include <algorithm>
#include <ostream>

namespace sotc::ops {

void printOpEntry(const OpEntry &entry, std::ostream &os) {
  os << entry.name << " (" << callKindName(entry.kind) << ")\n";
  if (!entry.aliases.empty()) {
    os << "  aliases:";
    for (const std::string &a : entry.aliases)
      os << " " << a;
    os << "\n";
  }
  for (size_t i = 0; i < entry.signatures.size(); ++i)
    os << "  *" << i << ": " << entry.signatures[i].str() << "\n";
  os << "  decomposition: " << entry.decomposition << "\n";
}

void printOpTable(const OpTable &table, std::ostream &os) {
  std::vector<const OpEntry *> sorted;
  for (const auto &e : table.entries())
    sorted.push_back(e.get());
  std::stable_sort(sorted.begin(), sorted.end(), [](const OpEntry *a, const OpEntry *b) {
    return a->kind != b->kind ? a->kind < b->kind : a->name < b->name;
  });
  size_t counts[3] = {0, 0, 0}, aliases = 0;
  for (const OpEntry *e : sorted) {
    printOpEntry(*e, os);
    ++counts[static_cast<int>(e->kind)];
    aliases += e->aliases.size();
  }
  os << "\n"
     << sorted.size() << " callables: " << counts[0] << " api functions, " << counts[1]
     << " tensor methods, " << counts[2] << " Python operators; " << aliases << " aliases\n";
  os << "refused by name:";
  for (const OpRefusalRow &row : opRefusalRows())
    os << " " << row.name;
  os << "\n";
  os << "primitives:";
  for (Prim p : allPrims())
    os << " " << primName(p);
  os << "\n";
}

} // namespace sotc::ops
