// Writes the seed corpus for reader_fuzz into the directory given on the
// command line. The committed tests/fuzz/corpus/ was made with it; rerun it
// after a format change:  make_corpus tests/fuzz/corpus
//
// File names say what a correct reader makes of each seed (corpus_test in
// tests/format checks it): valid-* read completely, partial-* stop early
// after some records, refused-* do not open. Seeds ending in -regression
// are inputs the fuzzer found bugs with; they are kept by hand, not made here.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "format/file_layout.h"
#include "format/trace_builder.h"

namespace {

using namespace memlife;
using namespace memlife::format;

HeaderFields header() {
  HeaderFields h;
  h.producer_minor = 1;
  h.pid = 1000;
  h.ppid = 1;
  h.rank = 0;
  h.local_rank = 0;
  h.world_size = 2;
  h.host = "fuzzhost";
  h.run_id = "r1";
  h.torch_version = "2.15.0";
  h.start_monotonic_ns = 1000000;
  h.start_wall_ns = 1700000000000000000ull;
  h.command_line = "python train.py";
  return h;
}

// One record of every kind over two streams.
TraceBuilder every_kind() {
  TraceBuilder b(header());
  static const std::vector<uint64_t> ids = {1, 2, 3};
  static const std::vector<uint64_t> natives = {0x7f0000001000ull, 0x5555deadbeefull};
  static const std::vector<int64_t> sizes = {4, -1}, strides = {1, 4};
  static const std::vector<CensusHolder> holders = {{5, 64}, {6, 32}};
  b.add(0, ProcessRecord{0, 0, 2, "2.15.0", "init"});
  b.add(1, ThreadRecord{4242, "main"});
  b.add(1, ModuleRecord{"/usr/lib/libc.so.6", 0x7f0000000000ull, 0x200000, "\x01\x02\x03"});
  b.add(1, StringRecord{1, "aten::empty"});
  b.add(1, FrameRecord{1, 1, 1, 10});
  b.add(1, StackRecord{1, list_of<uint64_t>(ids), list_of<uint64_t>(natives)});
  b.add(2, AllocRecord{0x7f0000100000ull, 4096, 0, 0, 1, 1});
  b.add(2, FreeRecord{0x7f0000100000ull, 4096, 0, FreePhase::kCompleted});
  b.add_segment(2, true, SegmentRecord{0x7f0000000000ull, 2 << 20, 0, 7});
  b.add_segment(2, false, SegmentRecord{0x7f0000000000ull, 2 << 20, 0, 7});
  TensorRecord t;
  t.tensor_id = 5;
  t.storage_id = 6;
  t.data_address = 0x7f0000100000ull;
  t.storage_bytes = 4096;
  t.sizes = list_of<int64_t>(sizes);
  t.strides = list_of<int64_t>(strides);
  t.itemsize = 4;
  t.flags = kTensorIsView;
  t.base_tensor_id = 4;
  b.add(1, t);
  b.add(1, OpBeginRecord{9, 1, 1, list_of<uint64_t>(ids)});
  b.add(1, OpEndRecord{9, list_of<uint64_t>(ids)});
  CollectiveIssueRecord c;
  c.collective_id = 11;
  c.inputs = list_of<uint64_t>(ids);
  c.outputs = list_of<uint64_t>(ids);
  c.bytes = 4096;
  c.flags = kCollectiveAsync;
  b.add(2, c);
  b.add(2, CollectiveWaitRecord{11, 1, list_of<uint64_t>(ids), 1, WaitHow::kWorkWait});
  b.add(0, MarkRecord{MarkKind::kStep, 1, 0, 0, 0, 0});
  b.add(0, CensusRecord{1, CensusPhase::kBegin, CensusReason::kStep, 1, 2, 0});
  b.add(0,
        CensusStorageRecord{1, 6, 0x7f0000100000ull, 4096, 2, 0, list_of<CensusHolder>(holders)});
  b.add(0, OomRecord{0, 1 << 30, 1 << 20, 1ull << 34});
  b.add(0, LostRecord{3, 300});
  b.add(1, TensorDeathRecord{DeathHow::kOnlyViewsBase, list_of<uint64_t>(ids)});
  return b;
}

TraceBuilder many_streams() {
  TraceBuilder b(header());
  b.set_chunk_bytes(40);
  for (uint64_t i = 0; i < 120; ++i) {
    const uint64_t address = 0x7f0000000000ull + (i % 17) * 4096;
    if (i % 3 == 2) {
      b.add(i % 4, FreeRecord{address, 4096, 0, FreePhase::kFree});
    } else {
      b.add(i % 4, AllocRecord{address, 4096, static_cast<int64_t>(i % 2) - 1, 0, 0, 0});
    }
  }
  return b;
}

bool write(const std::string& dir, const std::string& name, const std::vector<uint8_t>& bytes) {
  const std::string path = dir + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "make_corpus: cannot write %s\n", path.c_str());
    return false;
  }
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_corpus OUTPUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  bool ok = true;

  const std::vector<uint8_t> all_kinds = every_kind().finish();
  ok &= write(dir, "valid-every-kind.mltrace", all_kinds);
  ok &= write(dir, "valid-many-streams.mltrace", many_streams().finish());
  ok &= write(dir, "valid-header-only.mltrace", TraceBuilder(header()).finish(false));
  ok &= write(dir, "valid-no-end.mltrace", every_kind().finish(false));

  std::vector<uint8_t> truncated = many_streams().finish();
  truncated.resize(truncated.size() * 2 / 3);
  ok &= write(dir, "partial-truncated.mltrace", truncated);

  std::vector<uint8_t> flipped = all_kinds;
  flipped[flipped.size() - 3] ^= 0x10;
  ok &= write(dir, "partial-crc-flip.mltrace", flipped);

  // A chunk with a right CRC around a record that does not decode.
  std::vector<uint8_t> malformed = TraceBuilder(header()).finish(false);
  const std::vector<uint8_t> bad_record = {6, 1, 0, 1, 0xff, 0xff, 0x03, 1};
  std::vector<uint8_t> prefix(kChunkPrefixBound);
  prefix.resize(encode_chunk_prefix(prefix.data(), 3, true, bad_record.data(), bad_record.size()));
  malformed.insert(malformed.end(), prefix.begin(), prefix.end());
  malformed.insert(malformed.end(), bad_record.begin(), bad_record.end());
  ok &= write(dir, "partial-malformed-record.mltrace", malformed);

  HeaderFields newer = header();
  newer.format_version = kFormatVersion + 1;
  ok &= write(dir, "refused-newer-version.mltrace", TraceBuilder(newer).finish());
  std::vector<uint8_t> bad_magic = all_kinds;
  bad_magic[1] = 'X';
  ok &= write(dir, "refused-bad-magic.mltrace", bad_magic);
  ok &= write(dir, "refused-short.mltrace",
              std::vector<uint8_t>(all_kinds.begin(), all_kinds.begin() + 10));
  return ok ? 0 : 1;
}
