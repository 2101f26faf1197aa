#include "service/db/slice_sorter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace dvexport::db {
namespace {

using dhis2::OrderKey;

// A COPY line of BuildDataValueSelectSql's columns with these ids and created.
std::string Line(int de, int pe, int ou, int coc, int aoc, const std::string& created,
                 const std::string& value = "1") {
  return std::to_string(de) + "\t" + std::to_string(pe) + "\t" + std::to_string(ou) + "\t" +
         std::to_string(coc) + "\t" + std::to_string(aoc) + "\t" + value + "\tadmin\t" + created +
         "\t\t\\N\tf\tf\n";
}

std::vector<std::string> Sorted(SliceSorter& sorter) {
  sorter.Sort();
  std::vector<std::string> lines;
  for (size_t i = 0; i < sorter.size(); ++i) lines.emplace_back(sorter.Line(i));
  return lines;
}

// Periods 10 and 11 share their dates (rank 0), 12 comes after; data elements by rank, not id.
OrderRanks DefaultOrderRanks() {
  OrderRanks ranks;
  ranks.order = {OrderKey::kPe, OrderKey::kCreated, OrderKey::kDe};
  ranks.ranks.resize(3);
  ranks.ranks[0] = {{10, 0}, {11, 0}, {12, 1}};
  ranks.ranks[2] = {{1, 1}, {2, 0}};
  return ranks;
}

TEST(SliceSorterTest, SortsByRanksThenCreatedThenTheValuesKey) {
  const OrderRanks ranks = DefaultOrderRanks();
  SliceSorter sorter(&ranks, 1 << 20);
  const std::string late = Line(1, 12, 5, 7, 8, "2024-01-01 00:00:00");
  const std::string second = Line(1, 11, 5, 7, 8, "2023-02-01 00:00:00");
  const std::string tie_de_rank0 = Line(2, 10, 5, 7, 8, "2023-01-01 00:00:00.5");
  const std::string tie_de_rank1_ou4 = Line(1, 10, 4, 7, 8, "2023-01-01 00:00:00.5");
  const std::string tie_de_rank1_ou5 = Line(1, 10, 5, 7, 8, "2023-01-01 00:00:00.5");
  const std::string first = Line(1, 11, 9, 7, 8, "2022-12-31 23:59:59.999999");
  for (const std::string& line :
       {late, second, tie_de_rank1_ou5, tie_de_rank0, first, tie_de_rank1_ou4}) {
    ASSERT_TRUE(sorter.Add(line));
  }
  EXPECT_EQ(Sorted(sorter), (std::vector<std::string>{first, tie_de_rank0, tie_de_rank1_ou4,
                                                      tie_de_rank1_ou5, second, late}));
}

TEST(SliceSorterTest, IdsOfAnyLengthBreakTies) {
  const OrderRanks ranks = DefaultOrderRanks();
  SliceSorter sorter(&ranks, 1 << 20);
  // Ids of 19 digits and negative ones are read another way than the usual ones, and compare alike.
  const std::string big =
      "1\t10\t5\t9223372036854775807\t8\t1\tadmin\t2023-01-01 00:00:00\t\t\\N\tf\tf\n";
  const std::string bigger_aoc =
      "1\t10\t5\t9223372036854775807\t9\t1\tadmin\t2023-01-01 00:00:00\t\t\\N\tf\tf\n";
  const std::string negative = Line(1, 10, 5, -7, 8, "2023-01-01 00:00:00");
  const std::string usual = Line(1, 10, 5, 7, 8, "2023-01-01 00:00:00");
  for (const std::string& line : {bigger_aoc, usual, big, negative}) ASSERT_TRUE(sorter.Add(line));
  EXPECT_EQ(Sorted(sorter), (std::vector<std::string>{negative, usual, big, bigger_aoc}));
}

TEST(SliceSorterTest, ASorterAfterAnotherSortsOnlyItsOwnLines) {
  const OrderRanks ranks = DefaultOrderRanks();
  const std::string a = Line(1, 10, 5, 7, 8, "2023-01-01 00:00:00");
  const std::string b = Line(1, 10, 6, 7, 8, "2023-01-02 00:00:00");
  const std::string c = Line(2, 12, 6, 7, 8, "2023-01-03 00:00:00");
  {
    // Its memory goes to the next sorter of its size (kCachedBlocks), lines and keys still in it.
    SliceSorter first(&ranks, 1 << 20);
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(first.Add(i % 2 ? a : c));
    first.Sort();
  }
  SliceSorter second(&ranks, 1 << 20);
  ASSERT_TRUE(second.Add(c));
  ASSERT_TRUE(second.Add(b));
  EXPECT_EQ(Sorted(second), (std::vector<std::string>{b, c}));
  second.Reset();
  ASSERT_TRUE(second.Add(a));
  EXPECT_EQ(Sorted(second), (std::vector<std::string>{a}));
}

// Enough lines for the radix sort (SliceSorter::kRadixSortFrom), in random order, against the
// order's definition sorted here: many ties on the packed words, timestamps before 1970, NULL.
void ExpectSortedAsDefined(const OrderRanks& ranks) {
  // Created timestamps, ascending, then NULL (last, as PostgreSQL sorts it ascending).
  const std::vector<std::string> created = {"0044-03-15 12:00:00 BC", "1969-12-31 23:59:59.999999",
                                            "1970-01-01 00:00:00",    "2023-01-01 00:00:00",
                                            "2023-01-01 00:00:00.5",  "2023-07-09 10:11:12.000001",
                                            "12345-01-01 00:00:00",   "\\N"};
  std::mt19937 random(7);
  using Key = std::tuple<std::vector<int64_t>, std::string>;
  std::vector<Key> expected;
  SliceSorter sorter(&ranks, 8 << 20);
  for (int i = 0; i < 3000; ++i) {
    const int de = 1 + random() % 2;
    const int pe = 10 + random() % 3;
    const int ou = 5 + random() % 2;
    const int aoc = 8 + random() % 2;
    const int coc = i;  // no two lines alike
    const size_t c = random() % created.size();
    const std::string line = Line(de, pe, ou, coc, aoc, created[c]);
    ASSERT_TRUE(sorter.Add(line));
    std::vector<int64_t> key;
    for (size_t k = 0; k < ranks.order.size(); ++k) {
      switch (ranks.order[k]) {
        case OrderKey::kCreated:
          key.push_back(static_cast<int64_t>(c));
          break;
        case OrderKey::kDe:
          key.push_back(ranks.ranks[k].at(de));
          break;
        case OrderKey::kPe:
          key.push_back(ranks.ranks[k].at(pe));
          break;
        case OrderKey::kOu:
          key.push_back(ranks.ranks[k].at(ou));
          break;
        case OrderKey::kAoc:
          key.push_back(ranks.ranks[k].at(aoc));
          break;
      }
    }
    for (const int id : {de, pe, ou, coc, aoc}) key.push_back(id);
    expected.emplace_back(key, line);
  }
  std::sort(expected.begin(), expected.end());
  std::vector<std::string> lines;
  for (const auto& [key, line] : expected) lines.push_back(line);
  EXPECT_EQ(Sorted(sorter), lines);
}

TEST(SliceSorterTest, ManyLinesSortAsTheOrderDefines) {
  ExpectSortedAsDefined(DefaultOrderRanks());
  OrderRanks by_org_unit;
  by_org_unit.order = {OrderKey::kOu, OrderKey::kDe};
  by_org_unit.ranks = {{{5, 1}, {6, 0}}, {{1, 1}, {2, 0}}};
  ExpectSortedAsDefined(by_org_unit);
  OrderRanks created_first;
  created_first.order = {OrderKey::kCreated, OrderKey::kAoc, OrderKey::kPe};
  created_first.ranks = {{}, {{8, 1}, {9, 0}}, {{10, 1}, {11, 0}, {12, 1}}};
  ExpectSortedAsDefined(created_first);
}

// Lines fill the sorter's memory from one end and their entries from the other: a slice of long
// lines, then one of many short ones (the radix sort's second array too), each up to the bound.
TEST(SliceSorterTest, FillsItsBoundWithLongOrShortLinesAlike) {
  const OrderRanks ranks = DefaultOrderRanks();
  SliceSorter sorter(&ranks, 256 << 10);
  for (const size_t value_size : {size_t{4000}, size_t{1}}) {
    SCOPED_TRACE(value_size);
    sorter.Reset();
    std::vector<std::string> lines;
    for (int i = 0;; ++i) {
      const std::string line = Line(1 + i % 2, 10 + i % 3, 5, 100000 - i, 8,
                                    "2023-01-01 00:00:0" + std::to_string(i % 10),
                                    std::string(value_size, 'a' + i % 26));
      if (!sorter.Add(line)) break;
      lines.push_back(line);
    }
    ASSERT_FALSE(sorter.ok());
    sorter.Reset();
    for (const std::string& line : lines) ASSERT_TRUE(sorter.Add(line));
    EXPECT_LE(sorter.bytes(), size_t{256} << 10);
    SliceSorter reference(&ranks, 64 << 20);
    for (const std::string& line : lines) ASSERT_TRUE(reference.Add(line));
    EXPECT_EQ(Sorted(sorter), Sorted(reference));
    EXPECT_GT(lines.size(), value_size == 1 ? SliceSorter::kRadixSortFrom : 10);
  }
}

TEST(SliceSorterTest, NullCreatedComesLastAsPostgreSqlSortsIt) {
  const OrderRanks ranks = DefaultOrderRanks();
  SliceSorter sorter(&ranks, 1 << 20);
  const std::string null_created = Line(1, 10, 5, 7, 8, "\\N");
  const std::string dated = Line(1, 10, 6, 7, 8, "9999-12-31 23:59:59");
  const std::string bc = Line(1, 10, 7, 7, 8, "0044-03-15 12:00:00 BC");
  ASSERT_TRUE(sorter.Add(null_created));
  ASSERT_TRUE(sorter.Add(dated));
  ASSERT_TRUE(sorter.Add(bc));
  EXPECT_EQ(Sorted(sorter), (std::vector<std::string>{bc, dated, null_created}));
}

TEST(SliceSorterTest, EscapedTextsDoNotMoveTheFields) {
  const OrderRanks ranks = DefaultOrderRanks();
  SliceSorter sorter(&ranks, 1 << 20);
  const std::string b = Line(1, 10, 5, 7, 8, "2023-01-02 00:00:00", "a\\tb\\\\\\n");
  const std::string a = Line(1, 10, 5, 7, 9, "2023-01-01 00:00:00", "\\t");
  ASSERT_TRUE(sorter.Add(b));
  ASSERT_TRUE(sorter.Add(a));
  EXPECT_EQ(Sorted(sorter), (std::vector<std::string>{a, b}));
}

TEST(SliceSorterTest, WhatItCannotKeyLeavesTheSliceToPostgreSql) {
  const OrderRanks ranks = DefaultOrderRanks();
  const std::string good = Line(1, 10, 5, 7, 8, "2023-01-01 00:00:00");
  for (const std::string& bad :
       {Line(3, 10, 5, 7, 8, "2023-01-01 00:00:00"),  // a data element without a rank
        Line(1, 13, 5, 7, 8, "2023-01-01 00:00:00"),  // a period without a rank
        Line(1, 10, 5, 7, 8, "infinity"), std::string("1\t10\t5\n"),
        std::string("\\N\t10\t5\t7\t8\t1\tadmin\t2023-01-01 00:00:00\t\t\\N\tf\tf\n")}) {
    SCOPED_TRACE(bad);
    SliceSorter sorter(&ranks, 1 << 20);
    ASSERT_TRUE(sorter.Add(good));
    EXPECT_FALSE(sorter.Add(bad));
    EXPECT_FALSE(sorter.ok());
    EXPECT_FALSE(sorter.Add(good)) << "nothing is kept once one line could not be";
    EXPECT_EQ(sorter.size(), 0u);
  }
}

TEST(SliceSorterTest, StopsKeepingAtItsBound) {
  const OrderRanks ranks = DefaultOrderRanks();
  const std::string line = Line(1, 10, 5, 7, 8, "2023-01-01 00:00:00");
  SliceSorter sorter(&ranks, 1000);
  size_t kept = 0;
  while (sorter.Add(line)) ++kept;
  EXPECT_GT(kept, 0u);
  EXPECT_FALSE(sorter.ok());
  EXPECT_EQ(sorter.size(), 0u);
  EXPECT_EQ(sorter.bytes(), 0u);
  SliceSorter big_enough(&ranks, 1000);
  for (size_t i = 0; i < kept; ++i) ASSERT_TRUE(big_enough.Add(line));
  EXPECT_LE(big_enough.bytes(), 1000u);
}

TEST(SliceSorterTest, OrdersLedByDataElementsOrgUnitsAndAttributeCombos) {
  OrderRanks ranks;
  ranks.order = {OrderKey::kDe, OrderKey::kOu, OrderKey::kAoc};
  ranks.ranks = {{{1, 1}, {2, 0}}, {{5, 1}, {6, 0}}, {{8, 1}, {9, 0}}};
  SliceSorter sorter(&ranks, 1 << 20);
  const std::string c = Line(1, 10, 6, 7, 8, "2023-01-01 00:00:00");
  const std::string d = Line(1, 10, 5, 7, 9, "2023-01-01 00:00:00");
  const std::string a = Line(2, 10, 6, 7, 9, "2023-01-01 00:00:00");
  const std::string b = Line(2, 10, 6, 7, 8, "2023-01-01 00:00:00");
  for (const std::string& line : {c, d, a, b}) ASSERT_TRUE(sorter.Add(line));
  EXPECT_EQ(Sorted(sorter), (std::vector<std::string>{a, b, c, d}));
}

}  // namespace
}  // namespace dvexport::db
