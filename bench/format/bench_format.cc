// Writer hot path and reader throughput of the trace format. Each benchmark
// reports `x_goal`: its rate divided by the issue-2 goal of 20 M records/s
// (>= 1 meets it), alongside Google Benchmark's items_per_second.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "format/crc32c.h"
#include "format/encoder.h"
#include "format/reader.h"
#include "format/trace_builder.h"

namespace {

using namespace memlife;
using namespace memlife::format;

constexpr double kGoalRecordsPerSecond = 20e6;

void report(benchmark::State& state, int64_t records) {
  state.SetItemsProcessed(records);
  state.counters["x_goal"] = benchmark::Counter(
      static_cast<double>(records) / kGoalRecordsPerSecond, benchmark::Counter::kIsRate);
}

// Addresses in the shape of a caching allocator's: a few hundred blocks in
// a few MiB, so deltas take 2-4 bytes and go both ways.
std::vector<uint64_t> block_addresses() {
  std::mt19937_64 rng(1);
  std::vector<uint64_t> out(1024);
  for (auto& a : out) a = 0x7f3a00000000ull + (rng() % 8192) * 512;
  return out;
}

// A per-thread-buffer sized region that the encoder wraps around in, as the
// recorder's block buffers do.
struct Buffer {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(1 << 20);
  uint8_t* out = bytes.data();
  uint8_t* room_for(size_t bound) {
    if (out + bound > bytes.data() + bytes.size()) out = bytes.data();
    return out;
  }
};

void BM_EncodeAlloc(benchmark::State& state) {
  const std::vector<uint64_t> addresses = block_addresses();
  Buffer buffer;
  StreamState stream;
  uint64_t seq = 1000, time = 1'000'000'000, i = 0;
  for (auto _ : state) {
    const AllocRecord r{addresses[i++ & 1023], 4096, 0, 0, 0, 0};
    uint8_t* out = buffer.room_for(bound_bytes(r));
    buffer.out = encode_record(out, stream, seq += 3, time += 180, r);
  }
  benchmark::DoNotOptimize(buffer.out);
  benchmark::ClobberMemory();
  report(state, static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_EncodeAlloc);

void BM_EncodeFree(benchmark::State& state) {
  const std::vector<uint64_t> addresses = block_addresses();
  Buffer buffer;
  StreamState stream;
  uint64_t seq = 1000, time = 1'000'000'000, i = 0;
  for (auto _ : state) {
    const FreeRecord r{addresses[i++ & 1023], 4096, 0, FreePhase::kFree};
    uint8_t* out = buffer.room_for(bound_bytes(r));
    buffer.out = encode_record(out, stream, seq += 3, time += 180, r);
  }
  benchmark::DoNotOptimize(buffer.out);
  benchmark::ClobberMemory();
  report(state, static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_EncodeFree);

// A typical op output: a 2-D fp32 tensor, fresh storage, interned stack.
void BM_EncodeTensor(benchmark::State& state) {
  const std::vector<int64_t> sizes = {1024, 4096}, strides = {4096, 1};
  Buffer buffer;
  StreamState stream;
  uint64_t seq = 1000, time = 1'000'000'000, id = 50'000;
  for (auto _ : state) {
    TensorRecord t;
    t.tensor_id = ++id;
    t.storage_id = id + 1;
    t.data_address = 0x7f3a00000000ull + (id & 4095) * 16384;
    t.storage_bytes = 16 << 20;
    t.sizes = list_of<int64_t>(sizes);
    t.strides = list_of<int64_t>(strides);
    t.itemsize = 4;
    t.dtype_string = 17;
    t.device = 0;
    t.op_string = 23;
    t.stack_id = 311;
    uint8_t* out = buffer.room_for(bound_bytes(t));
    buffer.out = encode_record(out, stream, seq += 3, time += 400, t);
  }
  benchmark::DoNotOptimize(buffer.out);
  benchmark::ClobberMemory();
  report(state, static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_EncodeTensor);

// One op: begin with two inputs, end with one output (two records).
void BM_EncodeOpPair(benchmark::State& state) {
  Buffer buffer;
  StreamState stream;
  uint64_t seq = 1000, time = 1'000'000'000, id = 90'000;
  for (auto _ : state) {
    const uint64_t inputs[] = {id - 7, id - 3};
    const uint64_t outputs[] = {id + 1};
    const OpBeginRecord begin{++id, 23, 311, List<uint64_t>{inputs, 2}};
    const OpEndRecord end{id, List<uint64_t>{outputs, 1}};
    uint8_t* out = buffer.room_for(bound_bytes(begin) + bound_bytes(end));
    out = encode_record(out, stream, seq += 2, time += 300, begin);
    buffer.out = encode_record(out, stream, seq += 2, time += 900, end);
  }
  benchmark::DoNotOptimize(buffer.out);
  benchmark::ClobberMemory();
  report(state, 2 * static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_EncodeOpPair);

// A synthetic trace shaped like a training step loop: mostly alloc/free and
// tensor/op records, some strings, stacks and marks, over 4 threads.
const std::vector<uint8_t>& mixed_trace(int64_t records) {
  static std::vector<uint8_t> bytes;
  static int64_t built_for = -1;
  if (built_for == records) return bytes;
  TraceBuilder builder(HeaderFields{});
  std::mt19937_64 rng(7);
  const std::vector<uint64_t> addresses = block_addresses();
  const std::vector<int64_t> sizes = {1024, 4096}, strides = {4096, 1};
  const std::vector<uint64_t> frames = {1, 2, 3, 4, 5, 6, 7, 8};
  uint64_t time = 1'000'000'000, id = 1;
  for (int64_t i = 0; i < records; ++i) {
    const uint64_t stream = (i / 64) % 4;  // bursts per thread, like a real trace
    time += 150 + rng() % 100;
    const uint64_t address = addresses[rng() & 1023];
    const uint64_t pick = rng() % 100;
    if (pick < 35) {
      builder.add(stream, AllocRecord{address, uint64_t{4096} << (rng() % 8), 0, 0, 0, 12}, time);
    } else if (pick < 70) {
      builder.add(stream, FreeRecord{address, 4096, 0, FreePhase::kFree}, time);
    } else if (pick < 82) {
      TensorRecord t;
      t.tensor_id = ++id;
      t.storage_id = id / 2;
      t.data_address = address;
      t.storage_bytes = 16 << 20;
      t.sizes = list_of<int64_t>(sizes);
      t.strides = list_of<int64_t>(strides);
      t.itemsize = 4;
      t.dtype_string = 17;
      t.device = 0;
      t.op_string = 23;
      t.stack_id = 311;
      builder.add(stream, t, time);
    } else if (pick < 91) {
      const uint64_t inputs[] = {id - 1, id};
      builder.add(stream, OpBeginRecord{++id, 23, 311, List<uint64_t>{inputs, 2}}, time);
    } else if (pick < 97) {
      const uint64_t outputs[] = {id};
      builder.add(stream, OpEndRecord{id, List<uint64_t>{outputs, 1}}, time);
    } else if (pick < 98) {
      builder.add(stream, StackRecord{++id, list_of<uint64_t>(frames), {}}, time);
    } else if (pick < 99) {
      builder.add(stream, StringRecord{++id, "aten::_to_copy"}, time);
    } else {
      builder.add_segment(stream, true, SegmentRecord{address, 2 << 20, 0, 0}, time);
    }
  }
  bytes = builder.finish();
  built_for = records;
  return bytes;
}

class CountingVisitor final : public RecordVisitor {
 public:
  bool on_record(const Record& r) override {
    ++records;
    // Touch one field per record so decoding cannot be skipped.
    sum += r.header.seq ^ r.alloc.address ^ r.tensor.tensor_id;
    return true;
  }
  uint64_t records = 0, sum = 0;
};

void BM_ReadMixed(benchmark::State& state) {
  const std::vector<uint8_t>& bytes = mixed_trace(state.range(0));
  std::string error;
  auto reader = TraceReader::from_memory(bytes.data(), bytes.size(), error);
  if (!reader) {
    state.SkipWithError(error.c_str());
    return;
  }
  int64_t records = 0;
  for (auto _ : state) {
    CountingVisitor visitor;
    const ReadStatus status = reader->read(visitor);
    if (status.damaged) state.SkipWithError(status.stop_reason.c_str());
    benchmark::DoNotOptimize(visitor.sum);
    records += static_cast<int64_t>(visitor.records);
  }
  report(state, records);
  state.SetBytesProcessed(static_cast<int64_t>(bytes.size()) * state.iterations());
  state.counters["bytes_per_record"] =
      static_cast<double>(bytes.size()) / static_cast<double>(state.range(0));
}
BENCHMARK(BM_ReadMixed)->Arg(3'000'000)->Unit(benchmark::kMillisecond);

// For context: the share of reading spent on checksums.
void BM_Crc32c64KiB(benchmark::State& state) {
  std::vector<uint8_t> chunk(64 * 1024, 0x5a);
  for (auto _ : state) benchmark::DoNotOptimize(crc32c(chunk.data(), chunk.size()));
  state.SetBytesProcessed(static_cast<int64_t>(chunk.size()) * state.iterations());
}
BENCHMARK(BM_Crc32c64KiB);

}  // namespace

BENCHMARK_MAIN();
