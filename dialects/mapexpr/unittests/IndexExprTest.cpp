// Index expressions: text and flat-code round trips (what #mapexpr.index stores), errors.
#include "dialects/mapexpr/Utils/IndexExpr.h"

#include <catch2/catch.hpp>

using namespace sotc::mapexpr;

namespace {
std::vector<Expr> parsed(const std::string &text) {
  auto list = parseIndexList(text);
  REQUIRE(list);
  return *list;
}
} // namespace

TEST_CASE("index lists print as they parse", "[mapexpr][index]") {
  for (const char *text :
       {"[i0, i1]", "[0]", "[(i1 * 2 + 1), (i0 - 3), (i2 * 4)]", "[IndexDot([i0, i1], [4, 8])]",
        "[ListGetItem(IndexUnDot(i0, [4, 8]), 1)]",
        "[ListGetItem(IndexUnDot(IndexDot([i0, (i1 + 1)], [3, 5]), [5, 3]), 0)]",
        "[IndexSum((i4 * 2), (i2 - 1))]", "[]"})
    CHECK(indexListStr(parsed(text)) == text);
}

TEST_CASE("the flat code keeps every expression", "[mapexpr][index]") {
  std::vector<Expr> index =
      parsed("[ListGetItem(IndexUnDot(IndexDot([i0, (i1 * 3 - 2)], [3, 5]), [5, 3]), 1), 7, i2, "
             "IndexSum((i1 * 2), (i0 - 1))]");
  std::vector<int64_t> code = encodeIndex(index);
  std::optional<std::vector<Expr>> back = decodeIndex(code);
  REQUIRE(back);
  CHECK(indexListStr(*back) == indexListStr(index));
  for (int64_t i0 = 0; i0 < 3; ++i0)
    for (int64_t i1 = 1; i1 < 3; ++i1)
      for (size_t d = 0; d < index.size(); ++d)
        CHECK((*back)[d]->eval({i0, i1, 4}) == index[d]->eval({i0, i1, 4}));
}

TEST_CASE("a reshape that merges runs of dims needs no division", "[mapexpr][index]") {
  Expr flat = IndexExpr::dot({IndexExpr::iter(0), IndexExpr::iter(1), IndexExpr::iter(2),
                              IndexExpr::iter(3)},
                             {8, 3, 7, 5});
  // [8, 3, 7, 5] -> [8, 21, 5]: the middle component is the dot of i1 and i2.
  CHECK(IndexExpr::undot(flat, {8, 21, 5}, 0)->str() == "i0");
  CHECK(IndexExpr::undot(flat, {8, 21, 5}, 1)->str() == "IndexDot([i1, i2], [3, 7])");
  CHECK(IndexExpr::undot(flat, {8, 21, 5}, 2)->str() == "i3");
  // Not a merge of whole runs ([12, 70] cuts the 3): divisions stay.
  Expr split = IndexExpr::undot(flat, {12, 70}, 1);
  CHECK(split->kind() == IndexExpr::Kind::UnDot);
  for (int64_t a = 0; a < 8; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 7; ++c)
        for (int64_t d = 0; d < 5; ++d) {
          int64_t f = ((a * 3 + b) * 7 + c) * 5 + d;
          CHECK(IndexExpr::undot(flat, {8, 21, 5}, 1)->eval({a, b, c, d}) == f / 5 % 21);
          CHECK(split->eval({a, b, c, d}) == f % 70);
        }
  // Merged, then split again: the items come back.
  std::vector<Expr> merged;
  for (size_t k = 0; k < 3; ++k)
    merged.push_back(IndexExpr::undot(flat, {8, 21, 5}, k));
  Expr again = IndexExpr::dot(merged, {8, 21, 5});
  for (size_t k = 0; k < 4; ++k)
    CHECK(IndexExpr::undot(again, {8, 3, 7, 5}, k)->str() == "i" + std::to_string(k));
}

TEST_CASE("a reshape that splits runs of dims divides only their items", "[mapexpr][index]") {
  // [256, 1000] read as [4, 64, 1000] (tokens of a batch flattened, then viewed back): the
  // last component is j itself, the others divide i alone.
  Expr flat = IndexExpr::dot({IndexExpr::iter(0), IndexExpr::iter(1)}, {256, 1000});
  CHECK(IndexExpr::undot(flat, {4, 64, 1000}, 2)->str() == "i1");
  Expr row = IndexExpr::undot(flat, {4, 64, 1000}, 1);
  CHECK(row->kind() == IndexExpr::Kind::UnDot);
  CHECK(row->items()[0]->str() == "i0");
  // Splits and merges side by side ([6, 35] as [2, 3, 5, 7] and as [2, 3, 35]); each
  // component agrees with the division of the flat index.
  Expr mixed = IndexExpr::dot({IndexExpr::iter(0), IndexExpr::iter(1)}, {6, 35});
  for (const std::vector<int64_t> &to : {std::vector<int64_t>{2, 3, 5, 7}, {2, 3, 35}, {6, 35}})
    for (size_t k = 0; k < to.size(); ++k)
      for (int64_t a = 0; a < 6; ++a)
        for (int64_t b = 0; b < 35; ++b) {
          int64_t f = a * 35 + b, inner = 1;
          for (size_t d = k + 1; d < to.size(); ++d)
            inner *= to[d];
          CHECK(IndexExpr::undot(mixed, to, k)->eval({a, b}) == f / inner % to[k]);
        }
  // Neither a merge nor a split of whole runs ([6, 35] as [10, 21]): the flat division.
  CHECK(IndexExpr::undot(mixed, {10, 21}, 0)->kind() == IndexExpr::Kind::UnDot);
  // Split group by group, then merged back: the items come back ([3, 4, 3] read as [3, 3, 4]
  // splits the group [4, 3] into [3, 4]; their dot is the original index again).
  Expr index =
      IndexExpr::dot({IndexExpr::iter(0), IndexExpr::iter(1), IndexExpr::iter(2)}, {3, 4, 3});
  std::vector<Expr> parts;
  for (size_t k = 0; k < 3; ++k)
    parts.push_back(IndexExpr::undot(index, {3, 3, 4}, k));
  CHECK(parts[0]->str() == "i0");
  CHECK(IndexExpr::dot(parts, {3, 3, 4})->str() == index->str());
}

TEST_CASE("a sum of two iterators is a window's position plus its tap", "[mapexpr][index]") {
  Expr e = IndexExpr::sum(IndexExpr::affine(IndexExpr::iter(1), 2, 0),
                          IndexExpr::affine(IndexExpr::iter(0), 1, -1));
  CHECK(e->str() == "IndexSum((i1 * 2), (i0 - 1))");
  CHECK(e->eval({0, 0}) == -1); // the padding: outside the tensor
  CHECK(e->eval({2, 3}) == 7);
  CHECK(maxIterator(e) == 1);
  // A constant term folds into the other one.
  CHECK(IndexExpr::sum(IndexExpr::constant(3), IndexExpr::iter(0))->str() == "(i0 + 3)");
}

TEST_CASE("malformed codes are refused, never read past their end", "[mapexpr][index]") {
  std::vector<int64_t> code = encodeIndex(parsed("[IndexDot([i0, i1], [4, 8]), i1]"));
  for (size_t n = 0; n < code.size(); ++n)
    CHECK_FALSE(decodeIndex(std::vector<int64_t>(code.begin(), code.begin() + n)));
  std::vector<int64_t> longer = code;
  longer.push_back(0);
  CHECK_FALSE(decodeIndex(longer));
  CHECK_FALSE(decodeIndex({1, 99}));            // unknown node kind
  CHECK_FALSE(decodeIndex({1, 4, 1, 2, 3, 0})); // UnDot dims [2, 3], item 3 of 2
  CHECK_FALSE(decodeIndex({1, 3, 2, 0, 4}));    // Dot with a zero dim
  CHECK_FALSE(decodeIndex({1, 0, -1}));         // negative iterator
}

TEST_CASE("parse errors name the column and carry E4003", "[mapexpr][index]") {
  auto bad = parseIndexList("[IndexDot([i0], [4, 2])]");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code() == sotc::DiagCode::IndexExprInvalid);
  CHECK(std::string(bad.error().what()) ==
        "index expression '[IndexDot([i0], [4, 2])]', column 24: IndexDot needs one dim per item");
  CHECK_FALSE(parseIndexList("[i0"));
  CHECK_FALSE(parseIndexList("[i0] x"));
  CHECK_FALSE(parseIndexList("[ListGetItem(IndexUnDot(i0, [4, 8]), 2)]"));
  CHECK_FALSE(parseIndexList("[i-1]"));
  CHECK_FALSE(parseIndexList("[99999999999999999999999]"));
}

TEST_CASE("a value range holds every value the expression takes", "[mapexpr][index]") {
  // Iterators i0 in [0, 3), i1 in [0, 4), i2 in [0, 5).
  const std::vector<int64_t> sizes = {3, 4, 5};
  for (const char *text :
       {"[IndexSum((i2 * 2), (i0 - 1)), (i1 * -3 + 7), IndexDot([i0, i1], [3, 4]), "
        "ListGetItem(IndexUnDot(IndexDot([i1, i2], [4, 5]), [2, 10]), 1), 6]"}) {
    for (const Expr &e : parsed(text)) {
      auto [lo, hi] = valueRange(e, sizes);
      int64_t seenLo = INT64_MAX, seenHi = INT64_MIN;
      for (int64_t a = 0; a < 3; ++a)
        for (int64_t b = 0; b < 4; ++b)
          for (int64_t c = 0; c < 5; ++c) {
            int64_t v = e->eval({a, b, c});
            seenLo = std::min(seenLo, v), seenHi = std::max(seenHi, v);
          }
      INFO(e->str());
      CHECK(lo <= seenLo);
      CHECK(seenHi <= hi);
    }
  }
  // A window's tap without padding stays inside; with padding it reaches -1.
  CHECK(valueRange(parsed("[IndexSum(i2, i0)]")[0], sizes) == std::pair<int64_t, int64_t>{0, 6});
  CHECK(valueRange(parsed("[IndexSum(i2, (i0 - 1))]")[0], sizes).first == -1);
}

TEST_CASE("a linear coefficient is the step of an expression along one iterator",
          "[mapexpr][index]") {
  // i0 in [0, 3), i1 in [0, 4), i2 in [0, 5); the coefficient c of i2 where there is one:
  // e(i2 + 1) - e(i2) == c at every point.
  const std::vector<std::pair<const char *, std::optional<int64_t>>> cases = {
      {"[IndexSum((i2 * 2), (i0 - 1))]", 2},
      {"[(i1 * -3 + 7)]", 0},
      {"[IndexDot([i0, i2], [3, 5])]", 1},
      {"[IndexDot([i2, i1], [5, 4])]", 4},
      {"[ListGetItem(IndexUnDot(IndexDot([i1, i2], [4, 5]), [2, 10]), 1)]", std::nullopt},
      {"[ListGetItem(IndexUnDot(IndexDot([i0, i1], [3, 4]), [2, 6]), 1)]", 0},
  };
  for (const auto &[text, coefficient] : cases) {
    Expr e = parsed(text)[0];
    INFO(e->str());
    CHECK(linearCoefficient(e, 2) == coefficient);
    if (coefficient)
      for (int64_t a = 0; a < 3; ++a)
        for (int64_t b = 0; b < 4; ++b)
          for (int64_t c = 0; c + 1 < 5; ++c)
            CHECK(e->eval({a, b, c + 1}) - e->eval({a, b, c}) == *coefficient);
  }
}
