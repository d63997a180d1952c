// Records from several streams come back in global sequence order, however
// their chunks are cut and interleaved in the file.
#include <gtest/gtest.h>

#include <random>

#include "scripted_trace.h"

namespace memlife::format::testing {
namespace {

// Adds a pseudo-random mix of record kinds spread over `streams` streams,
// cutting chunks at random points.
ScriptedTrace random_trace(uint32_t seed, int records, int streams, double cut_probability) {
  ScriptedTrace trace(HeaderFields{});
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> ids = {1, 2, 3, 4, 5, 6, 7, 8};
  uint64_t time = 1000;
  for (int i = 0; i < records; ++i) {
    const uint64_t stream = rng() % static_cast<uint64_t>(streams);
    time += rng() % 3000;
    const uint64_t address = 0x7f0000000000ull + (rng() % 4096) * 512;
    switch (rng() % 6) {
      case 0:
        trace.add(stream,
                  AllocRecord{address, rng() % 100000, static_cast<int64_t>(rng() % 3) - 1,
                              rng() % 4, rng() % 50, rng() % 50},
                  time);
        break;
      case 1:
        trace.add(stream, FreeRecord{address, rng() % 100000, 0, FreePhase::kFree}, time);
        break;
      case 2: {
        const std::vector<int64_t> sizes = {static_cast<int64_t>(rng() % 64), 3};
        TensorRecord t;
        t.tensor_id = rng() % 1000 + 1;
        t.storage_id = rng() % 1000 + 1;
        t.sizes = list_of<int64_t>(sizes);
        t.strides = list_of<int64_t>(sizes);
        trace.add(stream, t, time);
        break;
      }
      case 3:
        trace.add(stream,
                  OpBeginRecord{static_cast<uint64_t>(i) + 1, 9, 0,
                                List<uint64_t>{ids.data(), rng() % ids.size()}},
                  time);
        break;
      case 4:
        trace.add_segment(stream, rng() % 2 == 0, SegmentRecord{address, 2 << 20, 0, 0}, time);
        break;
      default:
        trace.add(stream, StringRecord{static_cast<uint64_t>(i) + 1, std::string(rng() % 40, 's')},
                  time);
        break;
    }
    if (std::uniform_real_distribution<double>(0, 1)(rng) < cut_probability) {
      trace.cut(rng() % static_cast<uint64_t>(streams));
    }
  }
  return trace;
}

TEST(MergeOrder, ManyStreamsOddCutsComeBackInSeqOrder) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const int streams = 3 + static_cast<int>(seed % 5);
    ScriptedTrace trace = random_trace(seed, 500, streams, seed % 2 ? 0.05 : 0.4);
    const std::vector<uint8_t> bytes = trace.finish(true);
    const ReadResult read = read_all(bytes);
    ASSERT_TRUE(read.opened) << read.error;
    EXPECT_FALSE(read.status.damaged) << read.status.stop_reason;
    EXPECT_TRUE(read.status.complete);
    EXPECT_EQ(read.status.chunks, trace.chunks().size());
    EXPECT_EQ(read.status.chunks, walk_framing(bytes).chunk_end.size());
    ASSERT_EQ(read.records, expected_texts(trace.chunks(), trace.chunks().size()))
        << "seed " << seed;
    for (size_t i = 0; i < read.seqs.size(); ++i) ASSERT_EQ(read.seqs[i], i + 1);
  }
}

TEST(MergeOrder, SizeTriggeredCutsInTheBuilderKeepOrderToo) {
  // TraceBuilder cuts chunks on its own when they pass chunk_bytes; with a
  // tiny limit nearly every record gets its own chunk.
  for (size_t chunk_bytes : {1, 7, 33, 500}) {
    TraceBuilder builder(HeaderFields{});
    builder.set_chunk_bytes(chunk_bytes);
    for (uint64_t i = 0; i < 300; ++i) {
      builder.add(i * 7 % 4, AllocRecord{0x1000 + (i % 13) * 64, i, 0, 0, 0, 0});
    }
    const std::vector<uint8_t> bytes = builder.finish();
    const ReadResult read = read_all(bytes);
    ASSERT_TRUE(read.opened) << read.error;
    EXPECT_FALSE(read.status.damaged);
    ASSERT_EQ(read.seqs.size(), 301u);
    for (size_t i = 0; i < read.seqs.size(); ++i) EXPECT_EQ(read.seqs[i], i + 1);
    EXPECT_EQ(read.status.streams, 4u);
  }
}

TEST(MergeOrder, CrossThreadFreeReplaysAfterItsAllocEvenWhenWrittenFirst) {
  ScriptedTrace trace(HeaderFields{});
  trace.add(1, AllocRecord{0xabc000, 64, 0, 0, 0, 0}, 10);          // seq 1, thread A
  trace.add(2, FreeRecord{0xabc000, 64, 0, FreePhase::kFree}, 20);  // seq 2, thread B
  trace.add(1, AllocRecord{0xdef000, 64, 0, 0, 0, 0}, 30);          // seq 3
  // Thread B's buffer is flushed before thread A's.
  trace.cut(2);
  trace.cut(1);
  const std::vector<uint8_t> bytes = trace.finish(true);
  const ReadResult read = read_all(bytes);
  ASSERT_TRUE(read.opened) << read.error;
  ASSERT_EQ(read.seqs, (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(read.records, expected_texts(trace.chunks(), trace.chunks().size()));
  EXPECT_NE(read.records[0].find("stream=1"), std::string::npos);
  EXPECT_NE(read.records[1].find("stream=2"), std::string::npos);
}

TEST(MergeOrder, DeltaStateCarriesAcrossChunksOfOneStream) {
  // The address and time deltas of a stream continue from one chunk to the
  // next, even with other streams' chunks in between.
  ScriptedTrace trace(HeaderFields{});
  uint64_t time = 5;
  for (uint64_t round = 0; round < 6; ++round) {
    for (uint64_t stream = 0; stream < 3; ++stream) {
      trace.add(stream, AllocRecord{0x7f0000000000ull - round * 4096 + stream, 8, 0, 0, 0, 0},
                time += 17);
      trace.add(stream, FreeRecord{0x10 + round * 3, 8, -1, FreePhase::kCompleted}, time += 1);
      trace.cut(stream);
    }
  }
  const std::vector<uint8_t> bytes = trace.finish(true);
  const ReadResult read = read_all(bytes);
  ASSERT_TRUE(read.opened) << read.error;
  EXPECT_EQ(read.records, expected_texts(trace.chunks(), trace.chunks().size()));
  EXPECT_EQ(read.status.chunks, 19u);
}

}  // namespace
}  // namespace memlife::format::testing
