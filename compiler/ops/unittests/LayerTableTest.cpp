#include "compiler/ops/LayerTable.h"
#include "compiler/ops/OpTable.h"

#include <catch2/catch.hpp>

#include <set>

using namespace sotc::ops;

TEST_CASE("every layer calls an operator that takes its arguments", "[layers]") {
  const OpTable &table = OpTable::get();
  std::set<std::string> classes;
  for (const LayerEntry &e : layerEntries()) {
    INFO(e.className);
    CHECK(classes.insert(e.className).second); // listed once
    CHECK((e.className.rfind("paddle.nn.", 0) == 0 || e.className.rfind("torch.nn.", 0) == 0));
    if (e.kind != LayerEntry::Kind::Call) {
      CHECK(e.callee.empty());
      continue;
    }
    const OpEntry *op = table.lookup(e.callee);
    REQUIRE(op);
    REQUIRE(!e.args.empty());
    CHECK(e.args[0].source == LayerArg::Source::Input);
    // Some signature has room for the positional arguments and names every keyword.
    bool fits = false;
    for (const Signature &s : op->signatures) {
      size_t positional = 0;
      bool named = true;
      for (const LayerArg &a : e.args) {
        if (a.source == LayerArg::Source::Required)
          continue; // a condition on the layer, not an argument
        if (a.keyword.empty())
          ++positional;
        else
          named &= s.find(a.keyword) != nullptr;
      }
      fits |= named && positional <= s.params.size();
    }
    CHECK(fits);
  }
}

TEST_CASE("layer arguments say where they come from", "[layers]") {
  const LayerEntry *linear = lookupLayer("torch.nn.Linear");
  REQUIRE(linear);
  CHECK(linear->callee == "torch.nn.functional.linear");
  REQUIRE(linear->args.size() == 3);
  CHECK(linear->args[1].source == LayerArg::Source::Attribute);
  CHECK(linear->args[1].text == "weight");
  const LayerEntry *gelu = lookupLayer("paddle.nn.GELU");
  REQUIRE(gelu);
  CHECK(gelu->args[1].keyword == "approximate");
  CHECK(gelu->args[1].text == "_approximate");
  CHECK(lookupLayer("torch.nn.Sequential")->kind == LayerEntry::Kind::Sequence);
  CHECK(lookupLayer("paddle.nn.LayerList")->kind == LayerEntry::Kind::List);
  CHECK(lookupLayer("torch.nn.Module") == nullptr);
  const LayerEntry *conv = lookupLayer("torch.nn.Conv2d");
  REQUIRE(conv);
  CHECK(conv->args.back().source == LayerArg::Source::Required);
  CHECK(conv->args.back().keyword == "padding_mode");
  CHECK(conv->args.back().text == "'zeros'");
}
