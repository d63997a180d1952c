// Every record kind written with TraceBuilder and read back field by field.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "format/reader.h"
#include "format/trace_builder.h"

namespace memlife::format {
namespace {

using namespace std::string_view_literals;

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();

HeaderFields test_header() {
  HeaderFields h;
  h.producer_major = 0;
  h.producer_minor = 1;
  h.producer_patch = 7;
  h.pid = 4242;
  h.ppid = 1;
  h.rank = 3;
  h.local_rank = 1;
  h.world_size = 8;
  h.host = "node-17";
  h.run_id = "run\0id"sv;
  h.torch_version = "2.15.0+cu128";
  h.start_monotonic_ns = 123456789;
  h.start_wall_ns = 1700000000000000000ull;
  h.command_line = "python train.py --steps 3";
  return h;
}

// Builds a trace with `add`, reads it back and calls `check` for each
// non-end record, inside the visitor while the record's views are valid.
// Returns how many records `check` saw.
size_t round_trip(const std::function<void(TraceBuilder&)>& add,
                  const std::function<void(const Record&, size_t)>& check) {
  TraceBuilder builder(test_header());
  add(builder);
  const std::vector<uint8_t> bytes = builder.finish();
  std::string error;
  auto reader = TraceReader::from_memory(bytes.data(), bytes.size(), error);
  EXPECT_TRUE(reader) << error;
  if (!reader) return 0;
  size_t seen = 0;
  const ReadStatus status = reader->for_each([&](const Record& r) {
    if (r.header.kind != RecordKind::kEnd) check(r, seen++);
    return true;
  });
  EXPECT_TRUE(status.complete);
  EXPECT_FALSE(status.damaged) << status.stop_reason;
  EXPECT_EQ(status.records, seen + 1);
  return seen;
}

TEST(RecordRoundTrip, HeaderFields) {
  TraceBuilder builder(test_header());
  const std::vector<uint8_t> bytes = builder.finish();
  std::string error;
  auto reader = TraceReader::from_memory(bytes.data(), bytes.size(), error);
  ASSERT_TRUE(reader) << error;
  const TraceHeader& h = reader->header();
  EXPECT_EQ(h.format_version, kFormatVersion);
  EXPECT_EQ(h.producer_major, 0u);
  EXPECT_EQ(h.producer_minor, 1u);
  EXPECT_EQ(h.producer_patch, 7u);
  EXPECT_EQ(h.pid, 4242u);
  EXPECT_EQ(h.ppid, 1u);
  EXPECT_EQ(h.rank, 3);
  EXPECT_EQ(h.local_rank, 1);
  EXPECT_EQ(h.world_size, 8);
  EXPECT_EQ(h.host, "node-17");
  EXPECT_EQ(h.run_id, "run\0id"sv);
  EXPECT_EQ(h.torch_version, "2.15.0+cu128");
  EXPECT_EQ(h.start_monotonic_ns, 123456789u);
  EXPECT_EQ(h.start_wall_ns, 1700000000000000000ull);
  EXPECT_EQ(h.command_line, "python train.py --steps 3");
}

TEST(RecordRoundTrip, HeaderWithoutRanks) {
  HeaderFields fields;
  TraceBuilder builder(fields);
  const std::vector<uint8_t> bytes = builder.finish(false);
  std::string error;
  auto reader = TraceReader::from_memory(bytes.data(), bytes.size(), error);
  ASSERT_TRUE(reader) << error;
  EXPECT_EQ(reader->header().rank, -1);
  EXPECT_EQ(reader->header().world_size, -1);
  EXPECT_TRUE(reader->header().host.empty());
}

TEST(RecordRoundTrip, RecordHeaderSeqTimeAndStream) {
  const size_t n = round_trip(
      [](TraceBuilder& b) {
        b.add(5, LostRecord{1, 2}, 1000);
        b.add(9, LostRecord{3, 4}, 5000);
        // A time before the previous one: the delta is signed.
        b.add(5, LostRecord{5, 6}, 900);
        b.add(5, LostRecord{7, 8}, kMax - 1);
      },
      [](const Record& r, size_t i) {
        const uint64_t streams[] = {5, 9, 5, 5};
        const uint64_t times[] = {1000, 5000, 900, kMax - 1};
        EXPECT_EQ(r.header.kind, RecordKind::kLost);
        EXPECT_EQ(r.header.seq, i + 1);
        EXPECT_EQ(r.header.stream_id, streams[i]);
        EXPECT_EQ(r.header.time_ns, times[i]);
        EXPECT_EQ(r.lost.records_lost, 2 * i + 1);
        EXPECT_EQ(r.lost.bytes_lost, 2 * i + 2);
      });
  EXPECT_EQ(n, 4u);
}

TEST(RecordRoundTrip, Process) {
  const size_t n = round_trip(
      [](TraceBuilder& b) {
        b.add(0, ProcessRecord{-1, -1, -1, "", ""});
        b.add(0, ProcessRecord{kMax64, kMin64, 0, "2.15.0", "pg\0init"sv});
      },
      [](const Record& r, size_t i) {
        ASSERT_EQ(r.header.kind, RecordKind::kProcess);
        if (i == 0) {
          EXPECT_EQ(r.process.rank, -1);
          EXPECT_EQ(r.process.local_rank, -1);
          EXPECT_EQ(r.process.world_size, -1);
          EXPECT_EQ(r.process.torch_version, "");
          EXPECT_EQ(r.process.note, "");
        } else {
          EXPECT_EQ(r.process.rank, kMax64);
          EXPECT_EQ(r.process.local_rank, kMin64);
          EXPECT_EQ(r.process.world_size, 0);
          EXPECT_EQ(r.process.torch_version, "2.15.0");
          EXPECT_EQ(r.process.note, "pg\0init"sv);
        }
      });
  EXPECT_EQ(n, 2u);
}

TEST(RecordRoundTrip, ThreadModuleString) {
  const std::string long_path(5000, 'p');
  const std::string build_id("\x00\x01\xfe\xff\x00", 5);
  const std::string all_bytes = [] {
    std::string s;
    for (int c = 0; c < 256; ++c) s += static_cast<char>(c);
    return s;
  }();
  const size_t n = round_trip(
      [&](TraceBuilder& b) {
        b.add(1, ThreadRecord{kMax, "pt_autograd_0"});
        b.add(1, ModuleRecord{long_path, 0x7f0000000000ull, kMax, build_id});
        b.add(1, StringRecord{1, all_bytes});
        b.add(1, StringRecord{kMax, ""});
      },
      [&](const Record& r, size_t i) {
        switch (i) {
          case 0:
            ASSERT_EQ(r.header.kind, RecordKind::kThread);
            EXPECT_EQ(r.thread.tid, kMax);
            EXPECT_EQ(r.thread.name, "pt_autograd_0");
            break;
          case 1:
            ASSERT_EQ(r.header.kind, RecordKind::kModule);
            EXPECT_EQ(r.module.path, long_path);
            EXPECT_EQ(r.module.base, 0x7f0000000000ull);
            EXPECT_EQ(r.module.size, kMax);
            EXPECT_EQ(r.module.build_id, build_id);
            break;
          case 2:
            ASSERT_EQ(r.header.kind, RecordKind::kString);
            EXPECT_EQ(r.string.id, 1u);
            EXPECT_EQ(r.string.bytes, all_bytes);
            break;
          case 3:
            ASSERT_EQ(r.header.kind, RecordKind::kString);
            EXPECT_EQ(r.string.id, kMax);
            EXPECT_TRUE(r.string.bytes.empty());
            break;
        }
      });
  EXPECT_EQ(n, 4u);
}

TEST(RecordRoundTrip, FrameAndStack) {
  std::vector<uint64_t> long_native(1000);
  for (size_t i = 0; i < long_native.size(); ++i) long_native[i] = 0x7fff00000000ull + i * 977;
  long_native.back() = kMax;
  const std::vector<uint64_t> python = {3, 1, 4, 1, 5};
  const size_t n = round_trip(
      [&](TraceBuilder& b) {
        b.add(2, FrameRecord{7, 8, 9, 1234567});
        b.add(2, StackRecord{11, {}, {}});
        b.add(2, StackRecord{12, list_of<uint64_t>(python), list_of<uint64_t>(long_native)});
      },
      [&](const Record& r, size_t i) {
        if (i == 0) {
          ASSERT_EQ(r.header.kind, RecordKind::kFrame);
          EXPECT_EQ(r.frame.id, 7u);
          EXPECT_EQ(r.frame.file_string, 8u);
          EXPECT_EQ(r.frame.function_string, 9u);
          EXPECT_EQ(r.frame.line, 1234567u);
        } else if (i == 1) {
          ASSERT_EQ(r.header.kind, RecordKind::kStack);
          EXPECT_EQ(r.stack.id, 11u);
          EXPECT_TRUE(r.stack.python_frames.empty());
          EXPECT_TRUE(r.stack.native_addresses.empty());
        } else {
          ASSERT_EQ(r.header.kind, RecordKind::kStack);
          EXPECT_EQ(r.stack.id, 12u);
          EXPECT_EQ(
              std::vector<uint64_t>(r.stack.python_frames.begin(), r.stack.python_frames.end()),
              python);
          EXPECT_EQ(std::vector<uint64_t>(r.stack.native_addresses.begin(),
                                          r.stack.native_addresses.end()),
                    long_native);
        }
      });
  EXPECT_EQ(n, 3u);
}

TEST(RecordRoundTrip, AllocFreeAddressesDeltasUpDownAndLarge) {
  // Address deltas are per stream and signed: go up, down, wrap around the
  // top of the address space, and interleave streams.
  const uint64_t addresses[] = {0x7f1234560000ull,     0x7f1234561000ull,     0x10,     kMax, 0,
                                0x8000000000000000ull, 0x7fffffffffffffffull, kMax - 15};
  const size_t n = round_trip(
      [&](TraceBuilder& b) {
        for (size_t i = 0; i < std::size(addresses); ++i) {
          b.add(i % 2 ? 7 : 3, AllocRecord{addresses[i], 512 * (i + 1), static_cast<int64_t>(i) - 1,
                                           i, i * 3, i * 5});
        }
        for (size_t i = 0; i < std::size(addresses); ++i) {
          b.add(i % 3 ? 3 : 7,
                FreeRecord{addresses[std::size(addresses) - 1 - i], i == 2 ? 0 : kMax - i,
                           -static_cast<int64_t>(i) - 1, static_cast<FreePhase>(i % 3)});
        }
      },
      [&](const Record& r, size_t i) {
        const size_t count = std::size(addresses);
        if (i < count) {
          ASSERT_EQ(r.header.kind, RecordKind::kAlloc);
          EXPECT_EQ(r.header.stream_id, i % 2 ? 7u : 3u);
          EXPECT_EQ(r.alloc.address, addresses[i]) << i;
          EXPECT_EQ(r.alloc.bytes, 512 * (i + 1));
          EXPECT_EQ(r.alloc.device, static_cast<int64_t>(i) - 1);
          EXPECT_EQ(r.alloc.stream, i);
          EXPECT_EQ(r.alloc.stack_id, i * 3);
          EXPECT_EQ(r.alloc.op_string, i * 5);
        } else {
          const size_t j = i - count;
          ASSERT_EQ(r.header.kind, RecordKind::kFree);
          EXPECT_EQ(r.free.address, addresses[count - 1 - j]) << j;
          EXPECT_EQ(r.free.bytes, j == 2 ? 0 : kMax - j);
          EXPECT_EQ(r.free.device, -static_cast<int64_t>(j) - 1);
          EXPECT_EQ(r.free.phase, static_cast<FreePhase>(j % 3));
        }
      });
  EXPECT_EQ(n, 2 * std::size(addresses));
}

TEST(RecordRoundTrip, SegmentsShareTheAddressDeltaWithAllocs) {
  const size_t n = round_trip(
      [](TraceBuilder& b) {
        b.add_segment(1, true, SegmentRecord{0x7f0000200000ull, 2 << 20, 0, 5});
        b.add(1, AllocRecord{0x7f0000200200ull, 512, 0, 5, 0, 0});
        b.add_segment(1, false, SegmentRecord{0x7f0000200000ull, 2 << 20, 7, kMax});
        b.add_segment(1, true, SegmentRecord{0x1000, 0, -1, 0});
      },
      [](const Record& r, size_t i) {
        const RecordKind kinds[] = {RecordKind::kSegmentAlloc, RecordKind::kAlloc,
                                    RecordKind::kSegmentFree, RecordKind::kSegmentAlloc};
        ASSERT_EQ(r.header.kind, kinds[i]);
        if (i == 0) {
          EXPECT_EQ(r.segment.address, 0x7f0000200000ull);
          EXPECT_EQ(r.segment.bytes, 2u << 20);
          EXPECT_EQ(r.segment.device, 0);
          EXPECT_EQ(r.segment.stream, 5u);
        } else if (i == 1) {
          EXPECT_EQ(r.alloc.address, 0x7f0000200200ull);
        } else if (i == 2) {
          EXPECT_EQ(r.segment.address, 0x7f0000200000ull);
          EXPECT_EQ(r.segment.device, 7);
          EXPECT_EQ(r.segment.stream, kMax);
        } else {
          EXPECT_EQ(r.segment.address, 0x1000u);
          EXPECT_EQ(r.segment.bytes, 0u);
          EXPECT_EQ(r.segment.device, -1);
        }
      });
  EXPECT_EQ(n, 4u);
}

TEST(RecordRoundTrip, Tensor) {
  const std::vector<int64_t> sizes = {4096, 1, 0, kMax64};
  const std::vector<int64_t> strides = {1, -1, kMin64, 0};
  std::vector<int64_t> many(300);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<int64_t>(i) * -7;
  const size_t n = round_trip(
      [&](TraceBuilder& b) {
        TensorRecord t;
        t.tensor_id = 10;
        t.storage_id = 20;
        t.data_address = 0x7f00deadbe00ull;
        t.storage_bytes = 1ull << 40;
        t.storage_offset = 33;
        t.sizes = list_of<int64_t>(sizes);
        t.strides = list_of<int64_t>(strides);
        t.itemsize = 2;
        t.dtype_string = 44;
        t.device = -1;
        t.flags = kTensorIsView | kTensorAliases | kTensorRequiresGrad | kTensorFromInput;
        t.base_tensor_id = 9;
        t.op_string = 55;
        t.stack_id = 66;
        b.add(4, t);
        TensorRecord scalar;  // 0-dim: empty sizes and strides
        scalar.tensor_id = 11;
        scalar.device = 7;
        b.add(4, scalar);
        TensorRecord wide;
        wide.tensor_id = 12;
        wide.sizes = list_of<int64_t>(many);
        wide.strides = list_of<int64_t>(many);
        wide.data_address = kMax;
        b.add(4, wide);
      },
      [&](const Record& r, size_t i) {
        ASSERT_EQ(r.header.kind, RecordKind::kTensor);
        const TensorRecord& t = r.tensor;
        if (i == 0) {
          EXPECT_EQ(t.tensor_id, 10u);
          EXPECT_EQ(t.storage_id, 20u);
          EXPECT_EQ(t.data_address, 0x7f00deadbe00ull);
          EXPECT_EQ(t.storage_bytes, 1ull << 40);
          EXPECT_EQ(t.storage_offset, 33u);
          EXPECT_EQ(std::vector<int64_t>(t.sizes.begin(), t.sizes.end()), sizes);
          EXPECT_EQ(std::vector<int64_t>(t.strides.begin(), t.strides.end()), strides);
          EXPECT_EQ(t.itemsize, 2u);
          EXPECT_EQ(t.dtype_string, 44u);
          EXPECT_EQ(t.device, -1);
          EXPECT_EQ(t.flags, 15u);
          EXPECT_EQ(t.base_tensor_id, 9u);
          EXPECT_EQ(t.op_string, 55u);
          EXPECT_EQ(t.stack_id, 66u);
        } else if (i == 1) {
          EXPECT_EQ(t.tensor_id, 11u);
          EXPECT_TRUE(t.sizes.empty());
          EXPECT_TRUE(t.strides.empty());
          EXPECT_EQ(t.device, 7);
          EXPECT_EQ(t.base_tensor_id, 0u);
        } else {
          EXPECT_EQ(t.tensor_id, 12u);
          EXPECT_EQ(std::vector<int64_t>(t.sizes.begin(), t.sizes.end()), many);
          EXPECT_EQ(std::vector<int64_t>(t.strides.begin(), t.strides.end()), many);
          EXPECT_EQ(t.data_address, kMax);
        }
      });
  EXPECT_EQ(n, 3u);
}

TEST(RecordRoundTrip, OpBeginAndEnd) {
  const std::vector<uint64_t> inputs = {1, 2, kMax};
  std::vector<uint64_t> outputs(500);
  for (size_t i = 0; i < outputs.size(); ++i) outputs[i] = i + 100;
  const size_t n = round_trip(
      [&](TraceBuilder& b) {
        b.add(1, OpBeginRecord{77, 5, 6, list_of<uint64_t>(inputs)});
        b.add(1, OpBeginRecord{78, 5, 0, {}});
        b.add(1, OpEndRecord{78, {}});
        b.add(1, OpEndRecord{77, list_of<uint64_t>(outputs)});
      },
      [&](const Record& r, size_t i) {
        if (i < 2) {
          ASSERT_EQ(r.header.kind, RecordKind::kOpBegin);
          EXPECT_EQ(r.op_begin.op_id, 77 + i);
          EXPECT_EQ(r.op_begin.name_string, 5u);
          EXPECT_EQ(r.op_begin.stack_id, i == 0 ? 6u : 0u);
          const std::vector<uint64_t> got(r.op_begin.inputs.begin(), r.op_begin.inputs.end());
          EXPECT_EQ(got, i == 0 ? inputs : std::vector<uint64_t>{});
        } else {
          ASSERT_EQ(r.header.kind, RecordKind::kOpEnd);
          EXPECT_EQ(r.op_end.op_id, i == 2 ? 78u : 77u);
          const std::vector<uint64_t> got(r.op_end.outputs.begin(), r.op_end.outputs.end());
          EXPECT_EQ(got, i == 2 ? std::vector<uint64_t>{} : outputs);
        }
      });
  EXPECT_EQ(n, 4u);
}

TEST(RecordRoundTrip, CollectiveIssueAndWait) {
  const std::vector<uint64_t> in = {31, 32}, out = {33}, waited = {33, 34, 35};
  const size_t n = round_trip(
      [&](TraceBuilder& b) {
        CollectiveIssueRecord c;
        c.collective_id = 900;
        c.op_string = 1;
        c.group_string = 2;
        c.backend_string = 3;
        c.inputs = list_of<uint64_t>(in);
        c.outputs = list_of<uint64_t>(out);
        c.bytes = 1ull << 33;
        c.stack_id = 4;
        c.nccl_comm = 0x55aa55aa55aa55aaull;
        c.nccl_count = 1 << 20;
        c.nccl_datatype = 7;
        c.stream = 0x7f00aa000000ull;
        c.send_address = 0x7f0011110000ull;
        c.recv_address = kMax;
        c.flags = kCollectiveAsync | kCollectiveFunctional | kCollectiveNccl;
        b.add(3, c);
        b.add(6, CollectiveWaitRecord{900, 8, list_of<uint64_t>(waited), 9, WaitHow::kWorkWait});
        b.add(6, CollectiveWaitRecord{0, 0, {}, 0, WaitHow::kSynchronize});
      },
      [&](const Record& r, size_t i) {
        if (i == 0) {
          ASSERT_EQ(r.header.kind, RecordKind::kCollectiveIssue);
          const CollectiveIssueRecord& c = r.collective_issue;
          EXPECT_EQ(c.collective_id, 900u);
          EXPECT_EQ(c.op_string, 1u);
          EXPECT_EQ(c.group_string, 2u);
          EXPECT_EQ(c.backend_string, 3u);
          EXPECT_EQ(std::vector<uint64_t>(c.inputs.begin(), c.inputs.end()), in);
          EXPECT_EQ(std::vector<uint64_t>(c.outputs.begin(), c.outputs.end()), out);
          EXPECT_EQ(c.bytes, 1ull << 33);
          EXPECT_EQ(c.stack_id, 4u);
          EXPECT_EQ(c.nccl_comm, 0x55aa55aa55aa55aaull);
          EXPECT_EQ(c.nccl_count, 1u << 20);
          EXPECT_EQ(c.nccl_datatype, 7u);
          EXPECT_EQ(c.stream, 0x7f00aa000000ull);
          EXPECT_EQ(c.send_address, 0x7f0011110000ull);
          EXPECT_EQ(c.recv_address, kMax);
          EXPECT_EQ(c.flags, 7u);
        } else {
          ASSERT_EQ(r.header.kind, RecordKind::kCollectiveWait);
          const CollectiveWaitRecord& w = r.collective_wait;
          EXPECT_EQ(w.collective_id, i == 1 ? 900u : 0u);
          EXPECT_EQ(w.op_string, i == 1 ? 8u : 0u);
          EXPECT_EQ(std::vector<uint64_t>(w.tensors.begin(), w.tensors.end()),
                    i == 1 ? waited : std::vector<uint64_t>{});
          EXPECT_EQ(w.stack_id, i == 1 ? 9u : 0u);
          EXPECT_EQ(w.how, i == 1 ? WaitHow::kWorkWait : WaitHow::kSynchronize);
        }
      });
  EXPECT_EQ(n, 3u);
}

TEST(RecordRoundTrip, MarkCensusAndCensusStorage) {
  std::vector<CensusHolder> holders = {{1, 100}, {2, 0}, {kMax, kMax}};
  const size_t n = round_trip(
      [&](TraceBuilder& b) {
        b.add(0, MarkRecord{MarkKind::kStep, 3, 0, 0, 0, 0});
        b.add(0, MarkRecord{MarkKind::kExpectFreed, 4, 12, 13, 0x7f0000001000ull, 14});
        b.add(0, CensusRecord{5, CensusPhase::kBegin, CensusReason::kExit, 4, 123, kUnknownCount});
        b.add(0, CensusStorageRecord{5, 20, 0x7f0000002000ull, 4096, 3, 1,
                                     list_of<CensusHolder>(holders)});
        b.add(0, CensusStorageRecord{5, 21, 0, 0, 0, -1, {}});
        b.add(0, CensusRecord{5, CensusPhase::kEnd, CensusReason::kRequest, 4, 0, 2});
      },
      [&](const Record& r, size_t i) {
        switch (i) {
          case 0:
            ASSERT_EQ(r.header.kind, RecordKind::kMark);
            EXPECT_EQ(r.mark.kind, MarkKind::kStep);
            EXPECT_EQ(r.mark.step, 3u);
            EXPECT_EQ(r.mark.label_string, 0u);
            break;
          case 1:
            ASSERT_EQ(r.header.kind, RecordKind::kMark);
            EXPECT_EQ(r.mark.kind, MarkKind::kExpectFreed);
            EXPECT_EQ(r.mark.step, 4u);
            EXPECT_EQ(r.mark.label_string, 12u);
            EXPECT_EQ(r.mark.storage_id, 13u);
            EXPECT_EQ(r.mark.address, 0x7f0000001000ull);
            EXPECT_EQ(r.mark.stack_id, 14u);
            break;
          case 2:
            ASSERT_EQ(r.header.kind, RecordKind::kCensus);
            EXPECT_EQ(r.census.census_id, 5u);
            EXPECT_EQ(r.census.phase, CensusPhase::kBegin);
            EXPECT_EQ(r.census.reason, CensusReason::kExit);
            EXPECT_EQ(r.census.step, 4u);
            EXPECT_EQ(r.census.live_tensors, 123u);
            EXPECT_EQ(r.census.c10d_unwaited_works, kUnknownCount);
            break;
          case 3: {
            ASSERT_EQ(r.header.kind, RecordKind::kCensusStorage);
            const CensusStorageRecord& c = r.census_storage;
            EXPECT_EQ(c.census_id, 5u);
            EXPECT_EQ(c.storage_id, 20u);
            EXPECT_EQ(c.data_address, 0x7f0000002000ull);
            EXPECT_EQ(c.storage_bytes, 4096u);
            EXPECT_EQ(c.use_count, 3u);
            EXPECT_EQ(c.device, 1);
            ASSERT_EQ(c.holders.size, holders.size());
            for (size_t h = 0; h < holders.size(); ++h) {
              EXPECT_EQ(c.holders[h].tensor_id, holders[h].tensor_id);
              EXPECT_EQ(c.holders[h].reachable_bytes, holders[h].reachable_bytes);
            }
            break;
          }
          case 4:
            ASSERT_EQ(r.header.kind, RecordKind::kCensusStorage);
            EXPECT_EQ(r.census_storage.storage_id, 21u);
            EXPECT_EQ(r.census_storage.device, -1);
            EXPECT_TRUE(r.census_storage.holders.empty());
            break;
          case 5:
            ASSERT_EQ(r.header.kind, RecordKind::kCensus);
            EXPECT_EQ(r.census.phase, CensusPhase::kEnd);
            EXPECT_EQ(r.census.reason, CensusReason::kRequest);
            EXPECT_EQ(r.census.live_tensors, 0u);
            EXPECT_EQ(r.census.c10d_unwaited_works, 2u);
            break;
        }
      });
  EXPECT_EQ(n, 6u);
}

TEST(RecordRoundTrip, OomLostAndEnd) {
  TraceBuilder builder(test_header());
  builder.add(2, OomRecord{3, 1ull << 34, 12345, 80ull << 30});
  builder.add(2, OomRecord{-1, 0, 0, 0});
  builder.add(2, LostRecord{kMax, 1 << 20});
  const std::vector<uint8_t> bytes = builder.finish(true, 137);
  std::string error;
  auto reader = TraceReader::from_memory(bytes.data(), bytes.size(), error);
  ASSERT_TRUE(reader) << error;
  size_t i = 0;
  const ReadStatus status = reader->for_each([&](const Record& r) {
    switch (i++) {
      case 0:
        EXPECT_EQ(r.header.kind, RecordKind::kOom);
        EXPECT_EQ(r.oom.device, 3);
        EXPECT_EQ(r.oom.bytes_requested, 1ull << 34);
        EXPECT_EQ(r.oom.device_free, 12345u);
        EXPECT_EQ(r.oom.device_total, 80ull << 30);
        break;
      case 1:
        EXPECT_EQ(r.oom.device, -1);
        EXPECT_EQ(r.oom.bytes_requested, 0u);
        break;
      case 2:
        EXPECT_EQ(r.header.kind, RecordKind::kLost);
        EXPECT_EQ(r.lost.records_lost, kMax);
        EXPECT_EQ(r.lost.bytes_lost, 1u << 20);
        break;
      case 3:
        EXPECT_EQ(r.header.kind, RecordKind::kEnd);
        EXPECT_EQ(r.header.stream_id, 0u);
        EXPECT_EQ(r.end.exit_status, 137u);
        EXPECT_EQ(r.end.flags, 0u);
        break;
    }
    return true;
  });
  EXPECT_EQ(i, 4u);
  EXPECT_TRUE(status.complete);
  EXPECT_FALSE(status.damaged);
  EXPECT_EQ(status.records, 4u);
  EXPECT_EQ(status.streams, 2u);
  EXPECT_TRUE(status.stop_reason.empty());
}

TEST(RecordRoundTrip, ATraceWithoutEndIsIncompleteButUndamaged) {
  TraceBuilder builder(test_header());
  builder.add(1, LostRecord{1, 1});
  const std::vector<uint8_t> bytes = builder.finish(false);
  std::string error;
  auto reader = TraceReader::from_memory(bytes.data(), bytes.size(), error);
  ASSERT_TRUE(reader) << error;
  const ReadStatus status = reader->for_each([](const Record&) { return true; });
  EXPECT_FALSE(status.complete);
  EXPECT_FALSE(status.damaged);
  EXPECT_EQ(status.records, 1u);
}

TEST(RecordRoundTrip, VisitorCanStopAndReadCanRepeat) {
  TraceBuilder builder(test_header());
  for (uint64_t i = 0; i < 10; ++i) builder.add(i % 3, LostRecord{i, i});
  const std::vector<uint8_t> bytes = builder.finish();
  std::string error;
  auto reader = TraceReader::from_memory(bytes.data(), bytes.size(), error);
  ASSERT_TRUE(reader) << error;
  size_t seen = 0;
  const ReadStatus stopped = reader->for_each([&](const Record&) { return ++seen < 4; });
  EXPECT_EQ(seen, 4u);
  EXPECT_FALSE(stopped.complete);
  seen = 0;
  const ReadStatus full = reader->for_each([&](const Record&) { return ++seen, true; });
  EXPECT_EQ(seen, 11u);
  EXPECT_TRUE(full.complete);
}

TEST(RecordRoundTrip, KindNames) {
  EXPECT_STREQ(record_kind_name(RecordKind::kAlloc), "alloc");
  EXPECT_STREQ(record_kind_name(RecordKind::kSegmentFree), "segment_free");
  EXPECT_STREQ(record_kind_name(RecordKind::kCensusStorage), "census_storage");
  EXPECT_STREQ(record_kind_name(RecordKind::kEnd), "end");
  EXPECT_STREQ(record_kind_name(static_cast<RecordKind>(200)), "unknown");
}

TEST(RecordRoundTrip, TensorDeath) {
  TraceBuilder builder(test_header());
  const uint64_t ids[] = {7, kMax, 1};
  builder.add(3, TensorDeathRecord{DeathHow::kOnlyViewsBase, {ids, 3}});
  builder.add(3, TensorDeathRecord{DeathHow::kDestroyed, {ids, 0}});
  const std::vector<uint8_t> bytes = builder.finish(true, 0);
  std::string error;
  auto reader = TraceReader::from_memory(bytes.data(), bytes.size(), error);
  ASSERT_TRUE(reader) << error;
  std::vector<std::pair<DeathHow, std::vector<uint64_t>>> seen;
  reader->for_each([&](const Record& r) {
    if (r.header.kind == RecordKind::kTensorDeath)
      seen.emplace_back(r.tensor_death.how, std::vector<uint64_t>(r.tensor_death.tensor_ids.begin(),
                                                                  r.tensor_death.tensor_ids.end()));
    return true;
  });
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].first, DeathHow::kOnlyViewsBase);
  EXPECT_EQ(seen[0].second, (std::vector<uint64_t>{7, kMax, 1}));
  EXPECT_EQ(seen[1].first, DeathHow::kDestroyed);
  EXPECT_TRUE(seen[1].second.empty());
  EXPECT_STREQ(record_kind_name(RecordKind::kTensorDeath), "tensor_death");
}

}  // namespace
}  // namespace memlife::format
