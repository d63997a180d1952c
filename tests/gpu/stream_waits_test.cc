// The event/stream bookkeeping that turns CUDA waits into collective waits.
#include "gpu/stream_waits.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

using memlife::gpu::StreamWaitTable;

namespace {

std::vector<uint64_t> waited(StreamWaitTable& t, uint64_t event) {
  std::vector<uint64_t> ids(StreamWaitTable::kMaxReleased);
  ids.resize(t.on_event_waited(event, ids.data(), ids.size()));
  return ids;
}

class StreamWaitsTest : public ::testing::Test {
 protected:
  std::unique_ptr<StreamWaitTable> table = std::make_unique<StreamWaitTable>();
};

TEST_F(StreamWaitsTest, WaitOnEventReleasesCollectivesBeforeTheRecordOnly) {
  StreamWaitTable& t = *table;
  t.note_collective(0x100, 1);
  t.note_collective(0x100, 2);
  t.note_event_record(0xE1, 0x100);
  t.note_collective(0x100, 3);  // after the record: not covered
  EXPECT_EQ(waited(t, 0xE1), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(t.pending(), 1u);
  // A second wait on the same event releases nothing new.
  EXPECT_TRUE(waited(t, 0xE1).empty());
  t.note_event_record(0xE1, 0x100);  // re-recorded: now covers 3
  EXPECT_EQ(waited(t, 0xE1), (std::vector<uint64_t>{3}));
  EXPECT_EQ(t.pending(), 0u);
}

TEST_F(StreamWaitsTest, StreamsAreIndependent) {
  StreamWaitTable& t = *table;
  t.note_collective(0x100, 1);
  t.note_collective(0x200, 2);
  t.note_event_record(0xE2, 0x200);
  EXPECT_EQ(waited(t, 0xE2), (std::vector<uint64_t>{2}));
  std::vector<uint64_t> ids(8);
  ids.resize(t.on_stream_synchronized(0x100, ids.data(), ids.size()));
  EXPECT_EQ(ids, (std::vector<uint64_t>{1}));
}

TEST_F(StreamWaitsTest, EventOnAStreamWithoutCollectivesReleasesNothing) {
  StreamWaitTable& t = *table;
  t.note_collective(0x100, 1);
  t.note_event_record(0xE1, 0x100);
  t.note_event_record(0xE1, 0x300);  // re-recorded where nothing was issued
  EXPECT_TRUE(waited(t, 0xE1).empty());
  EXPECT_TRUE(waited(t, 0xE9).empty());  // never recorded
  EXPECT_EQ(t.pending(), 1u);
}

TEST_F(StreamWaitsTest, DeviceSynchronizeReleasesEverything) {
  StreamWaitTable& t = *table;
  for (uint64_t i = 1; i <= 10; ++i) t.note_collective(0x100 + (i % 3) * 0x100, i);
  std::vector<uint64_t> ids(64);
  ids.resize(t.on_device_synchronized(ids.data(), ids.size()));
  EXPECT_EQ(ids.size(), 10u);
  EXPECT_EQ(t.pending(), 0u);
}

TEST_F(StreamWaitsTest, OverflowForgetsTheOldestNeverInventsIds) {
  StreamWaitTable& t = *table;
  const uint64_t n = StreamWaitTable::kRing + 10;
  for (uint64_t i = 1; i <= n; ++i) t.note_collective(0x100, i);
  t.note_event_record(0xE1, 0x100);
  std::vector<uint64_t> ids = waited(t, 0xE1);
  ASSERT_EQ(ids.size(), StreamWaitTable::kRing);
  EXPECT_EQ(ids.front(), 11u);  // 1..10 were overwritten
  EXPECT_EQ(ids.back(), n);
}

}  // namespace
