// Issue 7: `memlife analyze DIR` over 64 synthetic rank traces of one run,
// with 1 and 2 jobs (wall time: the point is spreading traces over cores).
// Each rank: steps of allocations, tensors, ops and async all_reduces that
// are waited, then the cross-rank checks over all 64. Counters: events/s and,
// for jobs=2, `speedup` against jobs=1 measured in the same run.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "analysis/analyze.h"
#include "analysis/cross_rank.h"
#include "analysis/report.h"
#include "analysis/run.h"
#include "format/trace_builder.h"

namespace {

using namespace memlife;

constexpr int kRanks = 64;
constexpr uint64_t kStepsPerRank = 400;
constexpr uint64_t kLayers = 64;

uint64_t write_rank(const std::string& path, int rank) {
  format::HeaderFields h;
  h.pid = 1000 + rank;
  h.rank = rank;
  h.world_size = kRanks;
  h.host = "bench";
  h.run_id = "bench-run";
  h.start_monotonic_ns = 1;
  format::TraceBuilder b(h);
  b.set_chunk_bytes(256 * 1024);
  const std::vector<std::string> names = {"aten::linear", "c10d::allreduce_", "train.py", "step",
                                          "wait"};
  for (uint64_t i = 0; i < names.size(); ++i) b.add(0, format::StringRecord{i + 1, names[i]});
  b.add(0, format::FrameRecord{1, 3, 4, 42});
  std::vector<uint64_t> py = {1}, native;
  b.add(0,
        format::StackRecord{1, format::list_of<uint64_t>(py), format::list_of<uint64_t>(native)});
  std::vector<int64_t> sizes = {256}, strides = {1};
  uint64_t id = 0, events = 0;
  for (uint64_t step = 1; step <= kStepsPerRank; ++step) {
    for (uint64_t layer = 0; layer < kLayers; ++layer) {
      const uint64_t addr = 0x7f0000000000 + (layer << 16), op = ++id, t = ++id, s = ++id;
      std::vector<uint64_t> none, out = {t};
      b.add(1, format::OpBeginRecord{op, 1, 1, format::list_of<uint64_t>(none)});
      b.add(1, format::AllocRecord{addr, 1024, -1, 0, 1, 1});
      format::TensorRecord tr;
      tr.tensor_id = t;
      tr.storage_id = s;
      tr.data_address = addr;
      tr.storage_bytes = 1024;
      tr.sizes = format::list_of<int64_t>(sizes);
      tr.strides = format::list_of<int64_t>(strides);
      tr.itemsize = 4;
      b.add(1, tr);
      b.add(1, format::OpEndRecord{op, format::list_of<uint64_t>(out)});
      if (layer % 8 == 0) {
        const uint64_t c = ++id, cop = ++id;
        b.add(1, format::OpBeginRecord{cop, 2, 1, format::list_of<uint64_t>(out)});
        format::CollectiveIssueRecord ci;
        ci.collective_id = c;
        ci.op_string = 2;
        ci.inputs = ci.outputs = format::list_of<uint64_t>(out);
        ci.bytes = 1024;
        ci.stack_id = 1;
        ci.flags = kCollectiveAsync;
        b.add(1, ci);
        b.add(1, format::OpEndRecord{cop, format::list_of<uint64_t>(none)});
        b.add(1, format::CollectiveWaitRecord{c, 5, format::list_of<uint64_t>(out), 1,
                                              WaitHow::kWorkWait});
        events += 4;
      }
      b.add(1, format::FreeRecord{addr, 1024, -1, FreePhase::kFree});
      events += 5;
    }
    b.add(1, format::MarkRecord{MarkKind::kStep, step, 0, 0, 0, 0});
    ++events;
  }
  b.write_file(path);
  return events;
}

struct Corpus {
  std::filesystem::path dir;
  std::vector<std::string> paths;
  uint64_t events = 0;
  Corpus() {
    dir =
        std::filesystem::temp_directory_path() / ("memlife_multirank_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    for (int r = 0; r < kRanks; ++r) {
      paths.push_back((dir / ("rank" + std::to_string(r) + ".mltrace")).string());
      events += write_rank(paths.back(), r);
    }
  }
  ~Corpus() { std::filesystem::remove_all(dir); }
};

Corpus& corpus() {
  static Corpus c;
  return c;
}

double g_one_job_rate = 0;  // events/s with jobs=1, the baseline of jobs=2

void BM_AnalyzeRun(benchmark::State& state) {
  Corpus& c = corpus();
  const unsigned jobs = static_cast<unsigned>(state.range(0));
  size_t findings = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    analysis::TraceSelection selection;
    analysis::RunOptions options;
    options.jobs = jobs;
    nlohmann::json report;
    std::string error;
    if (!analysis::select_traces({c.dir.string()}, {}, selection, error) ||
        !analysis::analyze_run(selection, options, report, error)) {
      state.SkipWithError(error.c_str());
      return;
    }
    findings = report["findings"].size();
    benchmark::DoNotOptimize(findings);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double rate =
      static_cast<double>(c.events) * static_cast<double>(state.iterations()) / seconds;
  if (jobs == 1) g_one_job_rate = rate;
  state.counters["traces"] = kRanks;
  state.counters["events"] = static_cast<double>(c.events);
  state.counters["events_per_s"] = rate;
  if (jobs > 1 && g_one_job_rate > 0) state.counters["speedup_vs_1_job"] = rate / g_one_job_rate;
  state.counters["findings"] = static_cast<double>(findings);
}
BENCHMARK(BM_AnalyzeRun)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2);

}  // namespace

BENCHMARK_MAIN();
