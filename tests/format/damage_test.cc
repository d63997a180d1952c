// Truncation at every byte, bit flips, bad headers and version refusal: the
// reader keeps every complete chunk before the damage, reports where and
// why it stopped, and never crashes or reads out of bounds (run this under
// the asan build to check the latter).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "format/file_layout.h"
#include "format/reader.h"
#include "scripted_trace.h"

namespace memlife::format::testing {
namespace {

// About forty records of many kinds over three streams, cut into chunks at
// uneven points, with a clean end.
ScriptedTrace small_multi_chunk_trace() {
  HeaderFields header;
  header.pid = 99;
  header.host = "h";
  ScriptedTrace t(header);
  const std::vector<uint64_t> frames = {1, 2, 3};
  const std::vector<uint64_t> natives = {0x7f0000001234ull, 0x55550000abcdull};
  const std::vector<int64_t> sizes = {2, 3}, strides = {3, 1};
  uint64_t time = 100;
  t.add(0, ProcessRecord{0, 0, 2, "2.15", ""}, time += 10);
  t.add(1, ThreadRecord{1234, "main"}, time += 10);
  t.add(1, StringRecord{1, "aten::add"}, time += 10);
  t.cut(1);
  t.add(2, ThreadRecord{1235, "worker"}, time += 10);
  t.add(1, FrameRecord{1, 1, 1, 42}, time += 10);
  t.add(1, StackRecord{1, list_of<uint64_t>(frames), list_of<uint64_t>(natives)}, time += 10);
  t.add(2, AllocRecord{0x7f0000100000ull, 4096, 0, 0, 1, 1}, time += 10);
  t.cut(0);
  t.add(3, AllocRecord{0x7f0000200000ull, 512, -1, 0, 0, 0}, time += 10);
  t.cut(2);
  t.add(1, FreeRecord{0x7f0000100000ull, 4096, 0, FreePhase::kFree}, time += 10);
  TensorRecord tensor;
  tensor.tensor_id = 5;
  tensor.storage_id = 6;
  tensor.data_address = 0x7f0000200000ull;
  tensor.sizes = list_of<int64_t>(sizes);
  tensor.strides = list_of<int64_t>(strides);
  tensor.itemsize = 4;
  t.add(3, tensor, time += 10);
  t.cut(3);
  t.add(1, OpBeginRecord{7, 1, 1, list_of<uint64_t>(frames)}, time += 10);
  t.add(1, OpEndRecord{7, list_of<uint64_t>(frames)}, time += 10);
  t.cut(1);
  for (uint64_t i = 0; i < 12; ++i) {
    t.add(i % 3 + 1, AllocRecord{0x7f0000300000ull + i * 256, 256, 0, 0, 0, 0}, time += 10);
    if (i % 4 == 1) t.cut(i % 3 + 1);
  }
  t.add(2, CollectiveIssueRecord{}, time += 10);
  t.add(2, CollectiveWaitRecord{}, time += 10);
  t.add(0, MarkRecord{MarkKind::kStep, 1, 0, 0, 0, 0}, time += 10);
  t.add(0, CensusRecord{1, CensusPhase::kBegin, CensusReason::kStep, 1, 3, 0}, time += 10);
  t.cut(0);
  t.add(0, CensusStorageRecord{1, 6, 0x7f0000200000ull, 512, 1, -1, {}}, time += 10);
  t.add(0, OomRecord{0, 1 << 30, 0, 1ull << 34}, time += 10);
  t.add(3, LostRecord{2, 100}, time += 10);
  t.add_segment(2, true, SegmentRecord{0x7f0000000000ull, 2 << 20, 0, 0}, time += 10);
  t.add_segment(2, false, SegmentRecord{0x7f0000000000ull, 2 << 20, 0, 0}, time += 10);
  return t;
}

TEST(Truncation, EveryByteOffsetKeepsExactlyTheCompleteChunks) {
  ScriptedTrace trace = small_multi_chunk_trace();
  const std::vector<uint8_t> bytes = trace.finish(true);
  const Framing framing = walk_framing(bytes);
  ASSERT_EQ(framing.chunk_end.size(), trace.chunks().size());
  ASSERT_EQ(framing.chunk_end.back(), bytes.size());
  ASSERT_GE(trace.chunks().size(), 12u);

  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    // An exactly sized copy: ASan flags any read past the cut.
    const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<long>(cut));
    const ReadResult read = read_all(prefix);
    if (cut < framing.header_end) {
      EXPECT_FALSE(read.opened) << cut;
      EXPECT_FALSE(read.error.empty()) << cut;
      EXPECT_EQ(read.error.find('\n'), std::string::npos) << read.error;
      continue;
    }
    ASSERT_TRUE(read.opened) << cut << ": " << read.error;
    size_t kept = 0;
    while (kept < framing.chunk_end.size() && framing.chunk_end[kept] <= cut) ++kept;
    const bool at_boundary =
        cut == framing.header_end || (kept > 0 && framing.chunk_end[kept - 1] == cut);
    ASSERT_EQ(read.records, expected_texts(trace.chunks(), kept)) << "cut at " << cut;
    EXPECT_EQ(read.status.chunks, kept) << cut;
    EXPECT_EQ(read.status.records, read.records.size());
    EXPECT_EQ(read.status.damaged, !at_boundary) << cut;
    EXPECT_EQ(read.status.stop_reason.empty(), at_boundary)
        << cut << ": " << read.status.stop_reason;
    EXPECT_EQ(read.status.complete, kept == framing.chunk_end.size()) << cut;
    EXPECT_EQ(read.status.file_bytes, cut);
    if (!at_boundary) {
      EXPECT_EQ(read.status.stop_offset, framing.chunk_begin[kept]) << cut;
      EXPECT_NE(read.status.stop_reason.find("truncated"), std::string::npos)
          << read.status.stop_reason;
    }
  }
}

TEST(Truncation, WithoutEndRecordEveryCutIsIncomplete) {
  ScriptedTrace trace = small_multi_chunk_trace();
  const std::vector<uint8_t> bytes = trace.finish(false);
  const Framing framing = walk_framing(bytes);
  for (size_t cut = framing.header_end; cut <= bytes.size(); ++cut) {
    const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<long>(cut));
    const ReadResult read = read_all(prefix);
    ASSERT_TRUE(read.opened);
    EXPECT_FALSE(read.status.complete);
  }
}

TEST(BitFlips, AFlippedBitLosesOnlyItsChunk) {
  // Issue 15 item 5: every chunk of this trace is a sync chunk (as each
  // stretch of kSyncBytes of the recorder's is), so the reader skips the
  // damaged chunk, finds the next one by its magic and reads on.
  ScriptedTrace trace = small_multi_chunk_trace();
  const std::vector<uint8_t> clean = trace.finish(true);
  const Framing framing = walk_framing(clean);
  const size_t last = framing.chunk_end.size() - 1;
  size_t chunk = 0;
  for (size_t at = framing.header_end; at < clean.size(); ++at) {
    while (framing.chunk_end[chunk] <= at) ++chunk;
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> bytes = clean;
      bytes[at] ^= static_cast<uint8_t>(1u << bit);
      const ReadResult read = read_all(bytes);
      ASSERT_TRUE(read.opened);
      ASSERT_TRUE(read.status.damaged) << "byte " << at << " bit " << bit;
      EXPECT_EQ(read.status.stop_offset, framing.chunk_begin[chunk]) << at;
      EXPECT_EQ(read.status.chunks, last) << at;
      ASSERT_EQ(read.records, expected_texts_without(trace.chunks(), {chunk})) << at << ":" << bit;
      EXPECT_EQ(read.status.complete, chunk != last) << at;
      EXPECT_EQ(read.status.resumed, chunk != last) << at;
      EXPECT_EQ(read.status.skipped_bytes, framing.chunk_end[chunk] - framing.chunk_begin[chunk])
          << at;
      if (at >= framing.chunk_begin[chunk] + kChunkPrefixBytes) {
        EXPECT_EQ(read.status.stop_reason.rfind("chunk CRC mismatch", 0), 0u)
            << read.status.stop_reason;
      }
      if (chunk != last)
        EXPECT_NE(read.status.stop_reason.find("and read on"), std::string::npos)
            << read.status.stop_reason;
    }
  }
}

TEST(BitFlips, AStreamResumesAtItsNextSyncChunk) {
  // Stream 1 writes three chunks of one block (deltas carry over), then a
  // new block; stream 2 one chunk in between. Damage to stream 1's first
  // chunk loses its two continuations too, never stream 2.
  ScriptedTrace t(HeaderFields{});
  uint64_t time = 100;
  t.add(1, ThreadRecord{1, "main"}, time += 10);
  t.cut(1, /*new_block=*/false);  // chunk 0: damaged below
  t.add(1, AllocRecord{0x1000, 64, -1, 0, 0, 0}, time += 10);
  t.cut(1, false);  // chunk 1: continues chunk 0's deltas
  t.add(2, ThreadRecord{2, "worker"}, time += 10);
  t.cut(2);  // chunk 2
  t.add(1, FreeRecord{0x1000, 64, -1, FreePhase::kFree}, time += 10);
  t.cut(1);  // chunk 3: continues too; the next chunk of stream 1 is a new block
  t.add(1, AllocRecord{0x2000, 32, -1, 0, 0, 0}, time += 10);
  const std::vector<uint8_t> clean = t.finish(true);  // chunk 4 (stream 1), 5 (end)
  const Framing framing = walk_framing(clean);
  ASSERT_EQ(framing.chunk_begin.size(), 6u);
  std::vector<uint8_t> bytes = clean;
  bytes[framing.chunk_end[0] - 1] ^= 0x10;
  const ReadResult read = read_all(bytes);
  ASSERT_TRUE(read.opened);
  EXPECT_EQ(read.records, expected_texts_without(t.chunks(), {0, 1, 3}));
  EXPECT_EQ(read.status.skipped_chunks, 2u);
  EXPECT_EQ(read.status.skipped_bytes, (framing.chunk_end[1] - framing.chunk_begin[0]) +
                                           (framing.chunk_end[3] - framing.chunk_begin[3]));
  EXPECT_TRUE(read.status.complete);
  EXPECT_TRUE(read.status.resumed);
}

TEST(BitFlips, FlipsInTheHeaderNeverCrash) {
  ScriptedTrace trace = small_multi_chunk_trace();
  const std::vector<uint8_t> clean = trace.finish(true);
  const Framing framing = walk_framing(clean);
  for (size_t at = 0; at < framing.header_end; ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> bytes = clean;
      bytes[at] ^= static_cast<uint8_t>(1u << bit);
      const ReadResult read = read_all(bytes);
      if (!read.opened) {
        EXPECT_FALSE(read.error.empty());
      }
      if (at < 8) {
        EXPECT_FALSE(read.opened) << "magic byte " << at;
      }
    }
  }
}

// A chunk with a correct CRC around records that do not decode: only a
// buggy writer makes these, and the reader must still stop cleanly.
std::vector<uint8_t> raw_chunk(uint64_t stream, const std::vector<uint8_t>& records) {
  std::vector<uint8_t> out(kChunkPrefixBound);
  out.resize(encode_chunk_prefix(out.data(), stream, true, records.data(), records.size()));
  out.insert(out.end(), records.begin(), records.end());
  return out;
}

std::vector<uint8_t> header_bytes() { return encode_file_header(HeaderFields{}); }

TEST(MalformedRecords, BadRecordsInsideValidChunksStopThatStream) {
  const std::vector<std::vector<uint8_t>> bad_payloads = {
      {0x00, 0x01, 0x00},                                   // kind 0
      {23, 0x01, 0x00},                                     // kind past the last
      {0xff, 0x01, 0x00},                                   // kind 255
      {20, 0x01},                                           // lost: time missing
      {20, 0x01, 0x00, 0x05},                               // lost: second field missing
      {4, 0x01, 0x00, 0x01, 0x10, 'a'},                     // string of 16 bytes, 1 present
      {6, 0x01, 0x00, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f},  // huge list count
      {8, 0x01, 0x00, 0x02, 0x00, 0x00, 0x09},              // free phase 9
      {16, 0x01, 0x00, 0x07, 0, 0, 0, 0, 0},                // mark kind 7
      {20, 0x01, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00},
      {20, 0x01, 0x00, 0x01, 0x01, 20, 0x00, 0x00, 0x01, 0x01},  // seq delta 0
  };
  for (size_t i = 0; i < bad_payloads.size(); ++i) {
    std::vector<uint8_t> bytes = header_bytes();
    // A good record on stream 9 first, then the bad chunk on stream 4.
    const std::vector<uint8_t> good = raw_chunk(9, {20, 0x01, 0x00, 0x03, 0x04});
    const std::vector<uint8_t> bad = raw_chunk(4, bad_payloads[i]);
    bytes.insert(bytes.end(), good.begin(), good.end());
    const size_t bad_offset = bytes.size();
    bytes.insert(bytes.end(), bad.begin(), bad.end());
    const ReadResult read = read_all(bytes);
    ASSERT_TRUE(read.opened);
    EXPECT_TRUE(read.status.damaged) << i;
    EXPECT_EQ(read.status.stop_reason, "malformed record in stream 4") << i;
    // The stop offset is the bad record's own: past the 12-byte prefix, the
    // one-byte stream id and chunk flags, and past the good record of the
    // last case.
    const size_t record_offset = i + 1 == bad_payloads.size() ? 5 : 0;
    EXPECT_EQ(read.status.stop_offset, bad_offset + kChunkPrefixBytes + 2 + record_offset) << i;
    ASSERT_GE(read.records.size(), 1u) << i;
    EXPECT_NE(read.records[0].find("records_lost=3 bytes_lost=4"), std::string::npos);
  }
}

TEST(MalformedRecords, SequenceThatWrapsAroundIsRejected) {
  // seq 2^64-1, then a delta of 2 that would wrap to 1: the reader must not
  // hand out a seq lower than the one before it.
  std::vector<uint8_t> records = {20,   0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                  0xff, 0xff, 0xff, 0x01, 0x00, 0x00, 0x00};
  const std::vector<uint8_t> wrapping = {20, 0x02, 0x00, 0x00, 0x00};
  records.insert(records.end(), wrapping.begin(), wrapping.end());
  std::vector<uint8_t> bytes = header_bytes();
  const std::vector<uint8_t> chunk = raw_chunk(4, records);
  bytes.insert(bytes.end(), chunk.begin(), chunk.end());
  const ReadResult read = read_all(bytes);
  ASSERT_TRUE(read.opened);
  ASSERT_EQ(read.seqs, std::vector<uint64_t>{~uint64_t{0}});
  EXPECT_TRUE(read.status.damaged);
  EXPECT_EQ(read.status.stop_reason, "malformed record in stream 4");
}

TEST(MalformedRecords, ImplausibleChunkLengths) {
  for (uint32_t length : {0u, kMaxChunkPayloadBytes + 1, 0xffffffffu}) {
    std::vector<uint8_t> bytes = header_bytes();
    const size_t at = bytes.size();
    std::vector<uint8_t> chunk = raw_chunk(1, {20, 1, 0, 0, 0});
    std::memcpy(chunk.data(), &length, 4);
    bytes.insert(bytes.end(), chunk.begin(), chunk.end());
    const ReadResult read = read_all(bytes);
    ASSERT_TRUE(read.opened);
    EXPECT_TRUE(read.status.damaged);
    EXPECT_EQ(read.status.stop_offset, at);
    EXPECT_TRUE(read.records.empty());
    if (length == 0 || length > kMaxChunkPayloadBytes) {
      EXPECT_NE(read.status.stop_reason.find("implausible chunk length"), std::string::npos)
          << read.status.stop_reason;
    }
  }
}

TEST(MalformedRecords, DecodeRecordFieldsRejectsHostileCountsWithoutAllocating) {
  // Each kind's scalar fields before its first list, then a list that
  // claims 2^62 entries with four bytes left.
  const std::pair<RecordKind, int> kinds[] = {
      {RecordKind::kStack, 1},           {RecordKind::kTensor, 5},
      {RecordKind::kOpBegin, 3},         {RecordKind::kOpEnd, 1},
      {RecordKind::kCollectiveIssue, 4}, {RecordKind::kCollectiveWait, 2},
      {RecordKind::kCensusStorage, 6}};
  for (const auto& [kind, scalars] : kinds) {
    std::vector<uint8_t> fields(static_cast<size_t>(scalars), 0x01);
    const uint8_t huge[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 1, 2, 3, 4};
    fields.insert(fields.end(), std::begin(huge), std::end(huge));
    const uint8_t* in = fields.data();
    uint64_t last_address = 0;
    Record record;
    EXPECT_FALSE(
        decode_record_fields(kind, in, fields.data() + fields.size(), last_address, record))
        << static_cast<int>(kind);
    EXPECT_LE(in, fields.data() + fields.size());
    EXPECT_LT(record.list_a.capacity() + record.slist_a.capacity() + record.holders.capacity(),
              100u);
  }
}

TEST(Versions, NewerFormatIsRefusedNamingBothVersions) {
  HeaderFields fields;
  fields.format_version = kFormatVersion + 1;
  TraceBuilder builder(fields);
  builder.add(1, LostRecord{1, 1});
  const std::vector<uint8_t> bytes = builder.finish();
  const ReadResult read = read_all(bytes);
  EXPECT_FALSE(read.opened);
  EXPECT_NE(read.error.find("version " + std::to_string(kFormatVersion + 1)), std::string::npos)
      << read.error;
  EXPECT_NE(read.error.find("version " + std::to_string(kFormatVersion)), std::string::npos)
      << read.error;
  EXPECT_NE(read.error.find("newer"), std::string::npos) << read.error;
  EXPECT_EQ(read.error.find('\n'), std::string::npos);
}

TEST(Versions, VersionsOlderThanSupportedAreRefused) {
  HeaderFields fields;
  fields.format_version = kMinReadableFormatVersion - 1;
  const ReadResult read = read_all(TraceBuilder(fields).finish());
  EXPECT_FALSE(read.opened);
  EXPECT_NE(read.error.find("older"), std::string::npos) << read.error;
}

TEST(Versions, EverySupportedVersionReads) {
  for (uint32_t v = kMinReadableFormatVersion; v <= kFormatVersion; ++v) {
    HeaderFields fields;
    fields.format_version = v;
    const ReadResult read = read_all(TraceBuilder(fields).finish());
    EXPECT_TRUE(read.opened) << read.error;
    EXPECT_TRUE(read.status.complete);
  }
}

class TempFile {
 public:
  explicit TempFile(const std::vector<uint8_t>& bytes) {
    char name[] = "/tmp/memlife-format-test-XXXXXX";
    const int fd = ::mkstemp(name);
    path_ = name;
    if (fd >= 0) {
      EXPECT_TRUE(write_fully(fd, bytes.data(), bytes.size()));
      ::close(fd);
    }
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(BadFiles, OpenNamesTheFileAndTheProblem) {
  std::string error;
  EXPECT_FALSE(TraceReader::open("/nonexistent/dir/x.mltrace", error));
  EXPECT_NE(error.find("/nonexistent/dir/x.mltrace"), std::string::npos) << error;
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;

  error.clear();
  EXPECT_FALSE(TraceReader::open("/tmp", error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;

  const TempFile empty({});
  error.clear();
  EXPECT_FALSE(TraceReader::open(empty.path(), error));
  EXPECT_NE(error.find(empty.path()), std::string::npos) << error;
  EXPECT_NE(error.find("not a memlife trace"), std::string::npos) << error;

  HeaderFields newer;
  newer.format_version = kFormatVersion + 1;
  const TempFile future(TraceBuilder(newer).finish());
  error.clear();
  EXPECT_FALSE(TraceReader::open(future.path(), error));
  EXPECT_NE(error.find(future.path()), std::string::npos) << error;
  EXPECT_NE(error.find("version " + std::to_string(kFormatVersion)), std::string::npos) << error;
}

TEST(BadFiles, OpenReadsAGoodFileLikeFromMemory) {
  ScriptedTrace trace = small_multi_chunk_trace();
  const std::vector<uint8_t> bytes = trace.finish(true);
  const TempFile file(bytes);
  std::string error;
  auto reader = TraceReader::open(file.path(), error);
  ASSERT_TRUE(reader) << error;
  EXPECT_EQ(reader->path(), file.path());
  EXPECT_EQ(reader->header().pid, 99u);
  std::vector<std::string> texts;
  const ReadStatus status = reader->for_each([&](const Record& r) {
    texts.push_back(record_text(r));
    return true;
  });
  EXPECT_TRUE(status.complete);
  EXPECT_EQ(texts, expected_texts(trace.chunks(), trace.chunks().size()));
}

TEST(BadFiles, EmptyRandomAndBadMagicGiveOneLineErrors) {
  EXPECT_FALSE(read_all(std::vector<uint8_t>{}).opened);
  EXPECT_FALSE(read_all(nullptr, 0).opened);

  std::mt19937 rng(5);
  for (size_t size : {1, 15, 16, 17, 100, 4096}) {
    std::vector<uint8_t> noise(size);
    for (auto& b : noise) b = static_cast<uint8_t>(rng());
    const ReadResult read = read_all(noise);
    EXPECT_FALSE(read.opened) << size;
    EXPECT_FALSE(read.error.empty());
    EXPECT_EQ(read.error.find('\n'), std::string::npos);
  }

  std::vector<uint8_t> bytes = small_multi_chunk_trace().finish(true);
  bytes[0] = 'X';
  const ReadResult read = read_all(bytes);
  EXPECT_FALSE(read.opened);
  EXPECT_NE(read.error.find("bad magic"), std::string::npos) << read.error;
}

TEST(BadFiles, MagicFollowedByNoiseNeverCrashes) {
  std::mt19937 rng(6);
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> bytes(16 + rng() % 300);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    std::memcpy(bytes.data(), kFileMagic, 8);
    bytes[8] = 1;
    bytes[9] = bytes[10] = bytes[11] = 0;
    bytes[12] = static_cast<uint8_t>(rng() % 40);
    bytes[13] = bytes[14] = bytes[15] = 0;
    const ReadResult read = read_all(bytes);
    if (read.opened) {
      EXPECT_TRUE(read.status.damaged || read.status.chunks == 0 ||
                  read.status.file_bytes == bytes.size());
    } else {
      EXPECT_FALSE(read.error.empty());
    }
  }
}

}  // namespace
}  // namespace memlife::format::testing
