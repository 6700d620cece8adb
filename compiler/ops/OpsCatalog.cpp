//===- OpsCatalog.cpp - Build-time check of OpEntries.def; writes docs/ops-catalog.md ----===//
//
//   ops_catalog OUT.md
//
// Parses every signature of every row (a malformed one fails the build, naming the row)
// and writes the catalogue of callables that docs/ops-catalog.md must equal.
//
//===--------------------------------------------------------------------------------------===//
#include "compiler/ops/OpTable.h"
#include "compiler/ops/Schema.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <string>

using namespace sotc::ops;

namespace {
/// `|` would end a Markdown table cell.
std::string cell(const std::string &text) {
  std::string out;
  for (char c : text)
    out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: ops_catalog OUT.md\n");
    return 2;
  }
  std::map<std::string, std::string> aliases;
  for (const OpAliasRow &row : opAliasRows())
    aliases[row.entry] +=
        std::string(aliases[row.entry].empty() ? "" : ", ") + "`" + row.alias + "`";
  std::string text = "# Operator catalogue\n\n"
                     "Generated from `compiler/ops/OpEntries.def` by `//compiler/ops:ops_catalog` "
                     "(a test keeps this file equal to it); `sotc ops NAME` shows one entry.\n";
  const char *sections[] = {"API functions", "Tensor methods", "Python operators"};
  size_t counts[3] = {0, 0, 0};
  for (int kind = 0; kind < 3; ++kind) {
    text += std::string("\n## ") + sections[kind] +
            "\n\n| callable | signatures | decomposition |\n|---|---|---|\n";
    for (const OpEntryRow &row : opEntryRows()) {
      if (static_cast<int>(row.kind) != kind)
        continue;
      ++counts[kind];
      std::string sigs;
      for (const char *s : row.signatures) {
        try {
          (void)parseSignature(s);
        } catch (const SchemaError &e) {
          std::fprintf(stderr, "OpEntries.def: %s: signature '%s': %s\n", row.name, s, e.what());
          return 1;
        }
        sigs += std::string(sigs.empty() ? "" : "<br>") + "`" + cell(s) + "`";
      }
      std::string name = std::string("`") + row.name + "`";
      if (aliases.count(row.name))
        name += " (alias " + aliases[row.name] + ")";
      text += "| " + name + " | " + sigs + " | " + cell(row.decomposition) + " |\n";
    }
  }
  text += "\n" + std::to_string(counts[0] + counts[1] + counts[2]) +
          " callables: " + std::to_string(counts[0]) + " API functions, " +
          std::to_string(counts[1]) + " tensor methods, " + std::to_string(counts[2]) +
          " Python operators; " + std::to_string(opAliasRows().size()) + " aliases.\n";
  text += "\n## Refused by name\n\nCalls of these are E3004 with the reason.\n\n"
          "| callable | why |\n|---|---|\n";
  for (const OpRefusalRow &row : opRefusalRows()) {
    if (OpTable::get().lookup(row.name)) {
      std::fprintf(stderr, "Refusals.def: %s is also in the operator table\n", row.name);
      return 1;
    }
    text += std::string("| `") + row.name + "` | " + cell(row.reason) + " |\n";
  }
  std::ofstream(argv[1]) << text;
  return 0;
}
