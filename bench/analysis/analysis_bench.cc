// Analyzer speed:
//  - Replay: full analysis (replay + all detectors + report) of a synthetic
//    10 M event trace shaped like a training loop, on one core. Goal
//    >= 5 M events/s and peak RSS <= 2x the trace file. Baseline in the same
//    run: the bare reader decoding the same file (counter `vs_decode`).
//  - Symbolize: 2,000 distinct depth-30 native tracebacks, cold caches.
//    Goal <= 1 s (counter `vs_goal` = seconds / 1 s).
// Times are CPU seconds of this process (the machine is shared).
#include <benchmark/benchmark.h>
#include <link.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <random>

#include "analysis/analyze.h"
#include "analysis/report.h"
#include "format/trace_builder.h"
#include "symbols/symbolizer.h"

namespace {

using namespace memlife;

constexpr uint64_t kEvents = 10'000'000;

// One training step: per layer, an op with an output tensor and a view of
// it, allocations and frees of activations; a step mark and census at the
// end. Writes about kEvents records.
void generate(const std::string& path) {
  format::HeaderFields h;
  h.pid = 1;
  h.host = "bench";
  h.start_monotonic_ns = 1;
  format::TraceBuilder b(h);
  b.set_chunk_bytes(256 * 1024);
  std::vector<std::string> names = {"aten::linear", "aten::relu", "aten::view", "train.py",
                                    "forward"};
  for (uint64_t i = 0; i < names.size(); ++i) b.add(0, format::StringRecord{i + 1, names[i]});
  constexpr uint64_t kSites = 64;
  for (uint64_t s = 1; s <= kSites; ++s) {
    b.add(0, format::FrameRecord{s, 4, 5, 100 + s});
    std::vector<uint64_t> py = {s}, native(24);
    for (size_t k = 0; k < native.size(); ++k) native[k] = 0x400000 + s * 0x1000 + k * 16;
    b.add(0,
          format::StackRecord{s, format::list_of<uint64_t>(py), format::list_of<uint64_t>(native)});
  }
  uint64_t events = 0, tensor = 0, storage = 0, op = 0, step = 0;
  std::vector<int64_t> sizes = {64, 64}, strides = {64, 1};
  std::vector<uint64_t> live;  // addresses of this step's activations
  while (events < kEvents) {
    for (uint64_t layer = 0; layer < 256 && events < kEvents; ++layer) {
      const uint64_t addr = 0x7f0000000000 + (layer << 16);
      const uint64_t site = 1 + layer % kSites;
      b.add(1, format::OpBeginRecord{
                   ++op, 1, site,
                   format::list_of<uint64_t>(live.empty() ? std::vector<uint64_t>{}
                                                          : std::vector<uint64_t>{tensor})});
      b.add(1, format::AllocRecord{addr, 16384, -1, 0, site, 1});
      format::TensorRecord t;
      t.tensor_id = ++tensor;
      t.storage_id = ++storage;
      t.data_address = addr;
      t.storage_bytes = 16384;
      t.sizes = format::list_of<int64_t>(sizes);
      t.strides = format::list_of<int64_t>(strides);
      t.itemsize = 4;
      t.op_string = 1;
      t.stack_id = site;
      b.add(1, t);
      std::vector<uint64_t> out = {tensor};
      b.add(1, format::OpEndRecord{op, format::list_of<uint64_t>(out)});
      t.tensor_id = ++tensor;
      t.flags = kTensorIsView;
      t.base_tensor_id = tensor - 1;
      t.op_string = 3;
      b.add(1, t);
      live.push_back(addr);
      events += 5;
    }
    for (uint64_t addr : live) b.add(1, format::FreeRecord{addr, 16384, -1, FreePhase::kFree});
    events += live.size();
    live.clear();
    b.add(1, format::MarkRecord{MarkKind::kStep, ++step, 0, 0, 0, 0});
    b.add(1, format::CensusRecord{step, CensusPhase::kBegin, CensusReason::kStep, step, 0,
                                  format::kUnknownCount});
    b.add(1, format::CensusRecord{step, CensusPhase::kEnd, CensusReason::kStep, step, 0,
                                  format::kUnknownCount});
    events += 3;
  }
  if (!b.write_file(path)) std::abort();
}

const std::string& trace_path() {
  static const std::string path = [] {
    std::string p = (std::filesystem::temp_directory_path() /
                     ("memlife_bench_" + std::to_string(getpid()) + ".mltrace"))
                        .string();
    // In a child, so that the builder's buffers do not count in our RSS.
    const pid_t child = fork();
    if (child == 0) {
      generate(p);
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return p;
  }();
  return path;
}

// CPU time of this process: the machine is shared, wall time is not ours.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

long max_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss * 1024L;
}

void BM_Replay10M(benchmark::State& state) {
  const std::string& path = trace_path();
  const double file_bytes = static_cast<double>(std::filesystem::file_size(path));
  double decode_s = 0, analyze_s = 0;
  uint64_t records = 0;
  for (auto _ : state) {
    std::string error;
    auto reader = format::TraceReader::open(path, error);
    const double t0 = cpu_seconds();
    const format::ReadStatus st = reader->for_each([](const format::Record&) { return true; });
    reader.reset();  // its mapping would count twice in the RSS
    const double rss_decode = static_cast<double>(max_rss_bytes());
    state.counters["decode_rss_MB"] = rss_decode / 1e6;
    const double t1 = cpu_seconds();
    const analysis::ProcessAnalysis p = analysis::analyze_trace(path, {});
    benchmark::DoNotOptimize(analysis::make_report({p}));
    const double t2 = cpu_seconds();
    decode_s = t1 - t0;
    analyze_s = t2 - t1;
    records = st.records;
  }
  const double rss = static_cast<double>(max_rss_bytes());
  state.counters["records"] = static_cast<double>(records);
  state.counters["events_per_s"] = records / analyze_s;
  state.counters["decode_events_per_s"] = records / decode_s;
  state.counters["vs_decode"] = analyze_s / decode_s;
  state.counters["file_MB"] = file_bytes / 1e6;
  state.counters["peak_rss_MB"] = rss / 1e6;
  state.counters["rss_vs_file"] = rss / file_bytes;
}
BENCHMARK(BM_Replay10M)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// Executable segments of everything loaded here: real code with real
// symbols and (for this binary) line tables.
std::vector<analysis::Module> modules_and_text(std::vector<std::pair<uint64_t, uint64_t>>& text) {
  struct Ctx {
    std::vector<analysis::Module> mods;
    std::vector<std::pair<uint64_t, uint64_t>>* text;
  } ctx{{}, &text};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* arg) {
        auto* c = static_cast<Ctx*>(arg);
        std::string path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "";
        if (path.empty()) {
          char buf[4096];
          const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
          if (n <= 0) return 0;
          path.assign(buf, static_cast<size_t>(n));
        }
        if (path.find("linux-vdso") != std::string::npos) return 0;
        uint64_t hi = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          hi = std::max<uint64_t>(hi, ph.p_vaddr + ph.p_memsz);
          if (ph.p_flags & PF_X) c->text->emplace_back(info->dlpi_addr + ph.p_vaddr, ph.p_memsz);
        }
        c->mods.push_back({path, info->dlpi_addr, hi, ""});
        return 0;
      },
      &ctx);
  return ctx.mods;
}

void BM_Symbolize2000x30(benchmark::State& state) {
  std::vector<std::pair<uint64_t, uint64_t>> text;
  const auto modules = modules_and_text(text);
  std::mt19937_64 rng(42);
  std::vector<std::vector<uint64_t>> traces(2000, std::vector<uint64_t>(30));
  for (auto& t : traces)
    for (auto& a : t) {
      const auto& seg = text[rng() % text.size()];
      a = seg.first + 1 + rng() % (seg.second - 1);
    }
  double seconds = 0;
  size_t named = 0, total = 0;
  for (auto _ : state) {
    const double t0 = cpu_seconds();
    symbols::Symbolizer sym(modules);  // cold: opens every module again
    for (const auto& t : traces)
      for (size_t i = 0; i < t.size(); ++i) {
        const auto& f = sym.symbolize(t[i], i > 0);
        named += f.function.rfind("0x", 0) != 0;
        ++total;
      }
    seconds = cpu_seconds() - t0;
  }
  state.counters["frames"] = static_cast<double>(total / state.iterations());
  state.counters["named_fraction"] = static_cast<double>(named) / static_cast<double>(total);
  state.counters["seconds"] = seconds;
  state.counters["vs_goal"] = seconds / 1.0;
  state.counters["modules"] = static_cast<double>(modules.size());
}
BENCHMARK(BM_Symbolize2000x30)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::filesystem::remove(trace_path());
  return 0;
}
