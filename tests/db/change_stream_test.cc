// The pure parts of change streams: pgoutput's messages decoded into changed keys, slot names,
// and which decoded transactions a snapshot sees.

#include "service/db/change_stream.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dvexport::db {
namespace {

// pgoutput's messages, big-endian, as PostgreSQL 15 writes them (protocol version 1).
class Message {
 public:
  explicit Message(char type) { bytes_.push_back(type); }
  Message& Int(uint64_t value, int size) {
    for (int i = size - 1; i >= 0; --i) bytes_.push_back(static_cast<char>(value >> (8 * i)));
    return *this;
  }
  Message& String(const std::string& text) {
    bytes_ += text;
    bytes_.push_back('\0');
    return *this;
  }
  Message& Byte(char c) {
    bytes_.push_back(c);
    return *this;
  }
  Message& Text(const std::string& text) {
    Byte('t');
    Int(text.size(), 4);
    bytes_ += text;
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

constexpr uint32_t kDataValue = 16500;
constexpr int64_t kPostgresEpochMicros = 946684800000000;

std::string Begin(uint32_t xid, uint64_t final_lsn, int64_t commit_micros_since_2000) {
  return Message('B').Int(final_lsn, 8).Int(commit_micros_since_2000, 8).Int(xid, 4).bytes();
}

std::string Commit(uint64_t lsn) {
  return Message('C').Int(0, 1).Int(lsn, 8).Int(lsn + 40, 8).Int(0, 8).bytes();
}

// datavalue's columns in DHIS2's order (a few of them), the key first.
std::string Relation(uint32_t id, const std::string& nspname, const std::string& relname) {
  Message m('R');
  m.Int(id, 4).String(nspname).String(relname).Byte('d');
  const std::vector<std::string> columns = {
      "dataelementid",          "periodid", "sourceid", "categoryoptioncomboid",
      "attributeoptioncomboid", "value",    "comment",  "deleted"};
  m.Int(columns.size(), 2);
  for (size_t i = 0; i < columns.size(); ++i) {
    m.Int(i < 5 ? 1 : 0, 1).String(columns[i]).Int(20, 4).Int(0xFFFFFFFFu, 4);
  }
  return m.bytes();
}

// A tuple of the eight columns above: the key, then a value, an unchanged TOASTed comment, and
// deleted; a key tuple has NULLs where it has no column.
Message& Tuple(Message& m, const int64_t (&key)[5], bool key_only) {
  m.Int(8, 2);
  for (int64_t id : key) m.Text(std::to_string(id));
  if (key_only) {
    m.Byte('n').Byte('n').Byte('n');
  } else {
    m.Text("12").Byte('u').Text("f");
  }
  return m;
}

std::string Insert(uint32_t relation, const int64_t (&key)[5]) {
  Message m('I');
  m.Int(relation, 4).Byte('N');
  return Tuple(m, key, false).bytes();
}

std::string Update(uint32_t relation, const int64_t (&key)[5]) {
  Message m('U');
  m.Int(relation, 4).Byte('N');
  return Tuple(m, key, false).bytes();
}

std::string UpdateOfKey(uint32_t relation, const int64_t (&old_key)[5],
                        const int64_t (&new_key)[5]) {
  Message m('U');
  m.Int(relation, 4).Byte('K');
  Tuple(m, old_key, true).Byte('N');
  return Tuple(m, new_key, false).bytes();
}

std::string Delete(uint32_t relation, const int64_t (&key)[5]) {
  Message m('D');
  m.Int(relation, 4).Byte('K');
  return Tuple(m, key, true).bytes();
}

ChangedKey Key(const int64_t (&key)[5], int64_t deleted_at = 0) {
  return ChangedKey{key[0], key[1], key[2], key[3], key[4], deleted_at};
}

TEST(PgoutputDecoderTest, KeepsEachKeyOnceWithItsLastChange) {
  const int64_t a[5] = {1, 2, 3, 4, 5};
  const int64_t b[5] = {1, 2, 3, 4, 6};
  const int64_t c[5] = {9, 8, 7, 6, 5};
  PgoutputDecoder decoder;
  for (const std::string& message :
       {Begin(700, 0x1000, 10), Relation(kDataValue, "public", "datavalue"), Insert(kDataValue, a),
        Insert(kDataValue, b), Commit(0x1000), Begin(701, 0x2000, 20), Update(kDataValue, a),
        Delete(kDataValue, b), Insert(kDataValue, c), Commit(0x2000), Begin(702, 0x3000, 30),
        Delete(kDataValue, c), Insert(kDataValue, c), Commit(0x3000)}) {
    ASSERT_TRUE(decoder.Add(message).ok());
  }
  const StreamChanges changes = decoder.Take();
  // b was last deleted, by the transaction committed at 20 microseconds after 2000-01-01; c was
  // deleted and inserted again: it is there.
  EXPECT_EQ(changes.keys,
            (std::vector<ChangedKey>{Key(a), Key(b, kPostgresEpochMicros + 20), Key(c)}));
  ASSERT_EQ(changes.transactions.size(), 3u);
  EXPECT_EQ(changes.transactions[1].xid, 701u);
  EXPECT_EQ(changes.transactions[1].commit_lsn, 0x2000u);
  // Take empties the decoder.
  EXPECT_TRUE(decoder.Take().keys.empty());
}

TEST(PgoutputDecoderTest, AnUpdateOfTheKeyDeletesTheOldKey) {
  const int64_t old_key[5] = {1, 2, 3, 4, 5};
  const int64_t new_key[5] = {1, 2, 30, 4, 5};
  PgoutputDecoder decoder;
  ASSERT_TRUE(decoder.Add(Begin(5, 0x10, 7)).ok());
  ASSERT_TRUE(decoder.Add(Relation(kDataValue, "public", "datavalue")).ok());
  ASSERT_TRUE(decoder.Add(UpdateOfKey(kDataValue, old_key, new_key)).ok());
  EXPECT_EQ(decoder.Take().keys,
            (std::vector<ChangedKey>{Key(old_key, kPostgresEpochMicros + 7), Key(new_key)}));
}

TEST(PgoutputDecoderTest, IgnoresOtherTablesAndRefusesATruncateOfDatavalue) {
  const int64_t a[5] = {1, 2, 3, 4, 5};
  PgoutputDecoder decoder;
  ASSERT_TRUE(decoder.Add(Begin(5, 0x10, 7)).ok());
  ASSERT_TRUE(decoder.Add(Relation(17000, "other", "datavalue")).ok());
  ASSERT_TRUE(decoder.Add(Insert(17000, a)).ok());
  EXPECT_TRUE(decoder.Take().keys.empty());
  ASSERT_TRUE(decoder.Add(Relation(kDataValue, "public", "datavalue")).ok());
  // TRUNCATE of the other table: nothing of ours.
  EXPECT_TRUE(decoder.Add(Message('T').Int(1, 4).Int(0, 1).Int(17000, 4).bytes()).ok());
  const absl::Status truncated =
      decoder.Add(Message('T').Int(2, 4).Int(0, 1).Int(17000, 4).Int(kDataValue, 4).bytes());
  EXPECT_EQ(truncated.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(truncated.message().find("truncated"), std::string::npos);
}

TEST(PgoutputDecoderTest, BoundsTheKeysItKeeps) {
  PgoutputDecoder decoder(/*max_keys=*/2);
  ASSERT_TRUE(decoder.Add(Begin(5, 0x10, 7)).ok());
  ASSERT_TRUE(decoder.Add(Relation(kDataValue, "public", "datavalue")).ok());
  const int64_t a[5] = {1, 1, 1, 1, 1};
  const int64_t b[5] = {2, 1, 1, 1, 1};
  const int64_t c[5] = {3, 1, 1, 1, 1};
  ASSERT_TRUE(decoder.Add(Insert(kDataValue, a)).ok());
  ASSERT_TRUE(decoder.Add(Insert(kDataValue, b)).ok());
  ASSERT_TRUE(decoder.Add(Update(kDataValue, a)).ok());  // the same key again: no new entry
  const absl::Status third = decoder.Add(Insert(kDataValue, c));
  EXPECT_EQ(third.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(third.message().find("more than 2 data values changed"), std::string::npos);
}

TEST(PgoutputDecoderTest, RefusesWhatIsNotPgoutput) {
  const int64_t a[5] = {1, 2, 3, 4, 5};
  PgoutputDecoder decoder;
  EXPECT_EQ(decoder.Add("").code(), absl::StatusCode::kInternal);
  EXPECT_EQ(decoder.Add("Z").code(), absl::StatusCode::kInternal);
  EXPECT_EQ(decoder.Add(Begin(1, 2, 3).substr(0, 10)).code(), absl::StatusCode::kInternal);
  // A change of a relation the stream never described.
  EXPECT_EQ(decoder.Add(Insert(kDataValue, a)).code(), absl::StatusCode::kInternal);
  ASSERT_TRUE(decoder.Add(Relation(kDataValue, "public", "datavalue")).ok());
  // Cut short, and a key that is not an integer.
  const std::string insert = Insert(kDataValue, a);
  EXPECT_EQ(decoder.Add(insert.substr(0, insert.size() - 3)).code(), absl::StatusCode::kInternal);
  Message bad('I');
  bad.Int(kDataValue, 4).Byte('N').Int(8, 2).Text("x1");
  for (int i = 0; i < 7; ++i) bad.Text("1");
  EXPECT_EQ(decoder.Add(bad.bytes()).code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(decoder.Take().keys.empty());
}

TEST(ChangeStreamSlotNameTest, RoundTripsAndRefusesOtherNames) {
  const std::string name = ChangeStreamSlotName(0x0123456789abcdefu, 42);
  EXPECT_EQ(name, "dvexport_0123456789abcdef_42");
  std::optional<ChangeStreamSlotNameParts> parts = ParseChangeStreamSlotName(name);
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->slot_id, 0x0123456789abcdefu);
  EXPECT_EQ(parts->owner_user_id, 42);
  EXPECT_EQ(ChangeStreamSlotName(1, 0), "dvexport_0000000000000001_0");
  EXPECT_LE(ChangeStreamSlotName(~uint64_t{0}, INT64_MAX).size(), 63u);  // NAMEDATALEN - 1
  for (const char* other :
       {"dvexport_0123456789abcdef", "dvexport_0123456789abcdef_", "dvexport_0123456789ABCDEF_1",
        "dvexport_0123456789abcde_1", "dvexport_0123456789abcdef_-1",
        "dvexport_0123456789abcdef_01", "dvexport_0123456789abcdef_1x", "debezium",
        "xdvexport_0123456789abcdef_1"}) {
    EXPECT_FALSE(ParseChangeStreamSlotName(other).has_value()) << other;
  }
}

TEST(StreamPositionTest, StopsBeforeTheFirstTransactionTheSnapshotDoesNotSee) {
  // xids of epoch 1: xmin 2^32 + 100, xmax 2^32 + 200, 2^32 + 150 still running.
  const uint64_t epoch = uint64_t{1} << 32;
  SnapshotXids snapshot{epoch + 100, epoch + 200, {epoch + 150}};
  EXPECT_TRUE(VisibleIn(snapshot, 99));
  EXPECT_TRUE(VisibleIn(snapshot, 120));
  EXPECT_FALSE(VisibleIn(snapshot, 150));  // committed since, not yet visible in the snapshot
  EXPECT_FALSE(VisibleIn(snapshot, 200));
  EXPECT_FALSE(VisibleIn(snapshot, 250));
  StreamChanges changes;
  changes.transactions = {{120, 0x100}, {130, 0x200}};
  EXPECT_EQ(StreamPositionAfter(changes, snapshot, 0x900), 0x900u);
  changes.transactions.push_back({150, 0x300});
  changes.transactions.push_back({250, 0x400});
  EXPECT_EQ(StreamPositionAfter(changes, snapshot, 0x900), 0x300u);
}

TEST(StreamPositionTest, WidensXidsAcrossAnEpoch) {
  // xmax just past a wraparound: 32-bit xids near 2^32 belong to the previous epoch.
  const uint64_t epoch = uint64_t{5} << 32;
  SnapshotXids snapshot{epoch - 10, epoch + 10, {epoch - 5}};
  EXPECT_TRUE(VisibleIn(snapshot, 0xFFFFFFF0u));   // epoch - 16: below xmin
  EXPECT_FALSE(VisibleIn(snapshot, 0xFFFFFFFBu));  // epoch - 5: running
  EXPECT_TRUE(VisibleIn(snapshot, 0xFFFFFFFCu));   // epoch - 4
  EXPECT_TRUE(VisibleIn(snapshot, 3));             // epoch + 3
  EXPECT_FALSE(VisibleIn(snapshot, 10));           // epoch + 10: xmax
}

}  // namespace
}  // namespace dvexport::db
