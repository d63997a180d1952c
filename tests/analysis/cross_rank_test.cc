// Several ranks (issue 7), CUDA-level waits and raw device leaks (issue 5),
// over synthetic traces.
#include "analysis/cross_rank.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "analysis/incomplete.h"
#include "synthetic.h"

namespace memlife::analysis {
namespace {

using testing::of_kind;
using testing::Synth;

constexpr uint64_t kMiB = 1 << 20;

// One functional all_gather the way torch records it: nccl:AllGather inside
// c10d::allgather_into_tensor_coalesced_ inside the functional op, each
// layer's issue recorded as that layer returns, all with the user's stack.
void layered_all_gather(Synth& s, uint64_t base_id, uint64_t out_tensor, uint64_t stack) {
  s.in_op("_c10d_functional::all_gather_into_tensor", [&] {
    s.in_op("c10d::allgather_into_tensor_coalesced_", [&] {
      s.in_op("record_param_comms", [&] {
        s.issue(base_id, "nccl:AllGather", {}, 4 * kMiB, stack, kCollectiveAsync | kCollectiveNccl,
                "nccl:0x1234 rank 0/1");
      });
      s.issue(base_id + 1, "c10d::allgather_into_tensor_coalesced_", {}, 0, stack, kCollectiveAsync,
              "");
    });
    s.issue(base_id + 2, "_c10d_functional::all_gather_into_tensor", {out_tensor}, 4 * kMiB, stack,
            kCollectiveFunctional);
  });
}

TEST(CudaWaits, LayersOfOneCallMakeOneFindingReleasedBySynchronize) {
  Synth s;
  const uint64_t stack = s.stack("seed001.py", 28, "<module>");
  for (uint64_t i = 0; i < 3; ++i) {
    s.alloc(0x1000 + i * 0x100000, 4 * kMiB, 0, 0);
    s.tensor(10 + i, 20 + i, 0x1000 + i * 0x100000, 4 * kMiB, kMiB);
    layered_all_gather(s, 100 + 10 * i, 10 + i, stack);
  }
  for (uint64_t i = 0; i < 3; ++i)
    s.wait(100 + 10 * i, {}, WaitHow::kSynchronize, "cudaDeviceSynchronize");
  const auto found = of_kind(s.analyze(), kUnwaitedCollective);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].count, 3u);
  EXPECT_EQ(found[0].bytes, 12 * kMiB);
  EXPECT_EQ(found[0].evidence["op"], "_c10d_functional::all_gather_into_tensor");
  EXPECT_EQ(found[0].evidence["released_by"], "synchronize");
  EXPECT_EQ(found[0].evidence["release_op"], "cudaDeviceSynchronize");
  EXPECT_EQ(found[0].evidence["layers"].size(), 2u);
  EXPECT_NE(found[0].evidence["stacks"][0].dump().find("seed001.py"), std::string::npos);
}

TEST(CudaWaits, NeverWaitedIsToldApartFromSynchronized) {
  Synth s;
  const uint64_t stack = s.stack("seed001.py", 28, "<module>");
  s.alloc(0x1000, 4 * kMiB, 0, 0);
  s.tensor(10, 20, 0x1000, 4 * kMiB, kMiB);
  layered_all_gather(s, 100, 10, stack);
  const auto found = of_kind(s.analyze(), kUnwaitedCollective);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].evidence["released_by"], "never");
  EXPECT_NE(found[0].message.find("never waited"), std::string::npos);
}

TEST(CudaWaits, StreamWaitOnTheNcclLayerIsAProgramWait) {
  Synth s;
  const uint64_t stack = s.stack("seed001.py", 30, "<module>");
  s.alloc(0x1000, 4 * kMiB, 0, 0);
  s.tensor(10, 20, 0x1000, 4 * kMiB, kMiB);
  layered_all_gather(s, 100, 10, stack);
  s.wait(100, {}, WaitHow::kStreamWait, "cudaStreamWaitEvent");
  s.wait(100, {}, WaitHow::kStreamWait, "cudaStreamWaitEvent");  // twice: no orphan
  EXPECT_TRUE(of_kind(s.analyze(), kUnwaitedCollective).empty());
}

// DeepCompile's init (C++) broadcasts through c10d and waits the Work in
// C++: memlife sees the async c10d call with its NCCL layer, then only the
// CUDA stream wait on the NCCL kernel's event, then the program's read.
TEST(CudaWaits, StreamWaitOnTheNcclLayerWaitsTheCallForItsReaders) {
  for (const bool waited : {true, false}) {
    Synth s;
    const uint64_t stack = s.stack("init_z3.py", 31, "init_z3");
    const uint64_t read = s.stack("init_z3.py", 32, "init_z3");
    s.alloc(0x1000, 4096, 0, 0);
    s.tensor(10, 20, 0x1000, 4096, 1024);
    s.in_op("c10d::broadcast_", [&] {
      s.issue(100, "nccl:Broadcast", {}, 4096, stack, kCollectiveAsync | kCollectiveNccl,
              "nccl:0x1 rank 0/1");
      s.issue(101, "c10d::broadcast_", {10}, 4096, stack, kCollectiveAsync, "");
    });
    if (waited) s.wait(100, {}, WaitHow::kStreamWait, "cudaStreamWaitEvent");
    s.op("aten::to", {10}, {}, read);
    EXPECT_EQ(of_kind(s.analyze(), kUseBeforeWait).size(), waited ? 0u : 1u) << waited;
  }
}

TEST(CudaWaits, SynchronousCallAdoptsItsNcclLayer) {
  Synth s;
  s.in_op("c10d::allreduce_", [&] {
    s.issue(100, "nccl:AllReduce", {}, kMiB, 0, kCollectiveAsync | kCollectiveNccl,
            "nccl:0x1 rank 0/1");
    s.issue(101, "c10d::allreduce_", {}, kMiB, 0, 0, "");  // completed on return
  });
  EXPECT_TRUE(of_kind(s.analyze(), kUnwaitedCollective).empty());
}

TEST(RawDeviceLeaks, UnfreedCudaMallocsAreLeaksCachedSegmentsAreNot) {
  // tests/gpu/leaky_cuda.cu: 5 cudaMallocs of 1..5 MiB, the last two freed.
  Synth s = Synth::without_torch();
  for (uint64_t i = 0; i < 5; ++i) s.segment(0x7f0000000000 + i * 8 * kMiB, (i + 1) * kMiB);
  s.segment(0x7f0000000000 + 3 * 8 * kMiB, 4 * kMiB, false);
  s.segment(0x7f0000000000 + 4 * 8 * kMiB, 5 * kMiB, false);
  // No framework allocator in this program (a torch process's raw segments
  // are the libraries': LeakedAtExit.RawSegmentsUnderTheCachingAllocator...).
  const ProcessAnalysis p = s.analyze();
  const auto found = of_kind(p, kLeakedAtExit);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].evidence["memory"], "raw_device");
  EXPECT_EQ(found[0].count, 3u);
  EXPECT_EQ(found[0].bytes, 6 * kMiB);  // compute-sanitizer: 6291456 bytes in 3 allocations
  EXPECT_EQ(p.raw_segment_bytes, 6 * kMiB);
}

TEST(RawDeviceLeaks, TruncatedTraceReportsNoLeak) {
  Synth s = Synth::without_torch();
  s.segment(0x7f0000000000, kMiB);
  EXPECT_TRUE(of_kind(s.analyze(/*clean_end=*/false), kLeakedAtExit).empty());
}

// Rank r of a run: `calls` all_reduces (skipping index `skip`), each on
// its own line, then a barrier.
ProcessAnalysis rank_run(int64_t rank, int calls, int skip = -1, bool unwaited = false,
                         uint64_t extra_bytes = 0) {
  Synth s(rank, 1000 + rank);
  const uint64_t reduce_stack = s.stack("train.py", 40, "step");
  const uint64_t barrier_stack = s.stack("train.py", 50, "main");
  s.alloc(0x1000, 8 * kMiB + extra_bytes);
  for (int k = 0; k < calls; ++k) {
    if (k == skip) continue;
    s.in_op("c10d::allreduce_",
            [&] { s.issue(100 + k, "c10d::allreduce_", {}, 4096, reduce_stack, 0, ""); });
  }
  if (unwaited) {
    s.in_op("c10d::allreduce_", [&] {
      s.issue(500, "c10d::allreduce_", {}, 4096, reduce_stack, kCollectiveAsync, "");
    });
  }
  s.in_op("c10d::barrier", [&] { s.issue(900, "c10d::barrier", {}, 0, barrier_stack, 0, ""); });
  s.free(0x1000);
  return s.analyze();
}

std::vector<const ProcessAnalysis*> view(const std::vector<ProcessAnalysis>& ps) {
  std::vector<const ProcessAnalysis*> v;
  for (const auto& p : ps) v.push_back(&p);
  return v;
}

TEST(CrossRank, CleanRunHasNoMismatch) {
  std::vector<ProcessAnalysis> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(rank_run(r, 3));
  for (const Finding& f : cross_rank_findings(ranks, {})) ADD_FAILURE() << f.message;
}

TEST(CrossRank, SkippedAllReduceIsTheFirstDivergenceWithBothStacks) {
  std::vector<ProcessAnalysis> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(rank_run(r, 3, r == 2 ? 1 : -1));
  const auto found = collective_mismatches(view(ranks));
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found[0];
  EXPECT_EQ(f.kind, kCollectiveMismatch);
  EXPECT_EQ(f.evidence["group"], "default");
  // Rank 2's second call is the barrier, the others' an all_reduce: index 2
  // (0-based) where rank 2 ran out? No: rank 2 skipped #1, so its #1 is #2's
  // all_reduce and its #2 is the barrier.
  EXPECT_EQ(f.evidence["index"], 2);
  EXPECT_EQ(f.ranks, (std::vector<int64_t>{0, 1, 2, 3}));
  ASSERT_EQ(f.evidence["stacks"].size(), 2u);
  EXPECT_NE(f.evidence["stacks"][0].dump().find("\"line\":40"), std::string::npos);
  EXPECT_NE(f.evidence["stacks"][1].dump().find("\"line\":50"), std::string::npos);
  EXPECT_NE(f.message.find("rank 2 issued c10d::barrier"), std::string::npos) << f.message;
}

TEST(CrossRank, RankThatNeverIssuedIsNamed) {
  std::vector<ProcessAnalysis> ranks;
  Synth a(0, 1), b(1, 2);
  const uint64_t sa = a.stack("train.py", 40), sb = b.stack("train.py", 40);
  for (int k = 0; k < 2; ++k)
    a.in_op("c10d::allreduce_", [&] { a.issue(100 + k, "c10d::allreduce_", {}, 64, sa, 0, ""); });
  b.in_op("c10d::allreduce_", [&] { b.issue(100, "c10d::allreduce_", {}, 64, sb, 0, ""); });
  ranks.push_back(a.analyze());
  ranks.push_back(b.analyze(/*clean_end=*/false));  // hung, then killed
  const auto found = collective_mismatches(view(ranks));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].evidence["index"], 1);
  EXPECT_NE(found[0].message.find("rank 1 never issued it"), std::string::npos) << found[0].message;
  EXPECT_EQ(found[0].evidence["stacks"].size(), 2u);  // rank 0's #1, rank 1's last call
}

// pytorch-ignite's cifar10 example under torchrun over gloo, its dataset
// unreadable on rank 0: rank 0 raised in get_dataflow (exit status 1) before the barrier rank 1 then entered, and torchrun
// killed rank 1. The exception is the story; rank 0 skipped nothing.
TEST(CrossRank, RankThatFailedBeforeACollectiveDidNotSkipIt) {
  Synth failed(0, 1), waiting(1, 2);
  const uint64_t sa = failed.stack("main.py", 201), sb = waiting.stack("main.py", 201);
  failed.in_op("c10d::barrier", [&] { failed.issue(100, "c10d::barrier", {}, 0, sa, 0, ""); });
  for (int k = 0; k < 2; ++k)
    waiting.in_op("c10d::barrier",
                  [&] { waiting.issue(100 + k, "c10d::barrier", {}, 0, sb, 0, ""); });
  failed.exit_status = 1;
  std::vector<ProcessAnalysis> ranks;
  ranks.push_back(failed.analyze());
  ranks.push_back(waiting.analyze(/*clean_end=*/false));
  EXPECT_EQ(ranks[0].exit_status, 1u);
  for (const Finding& f : collective_mismatches(view(ranks))) ADD_FAILURE() << f.message;
  // The failure is said, as an incomplete recording.
  const auto warnings = incomplete_warnings(ranks);
  EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
    return w.rfind("process_failed: exited with status 1", 0) == 0;
  }));
}

// Three ranks: rank 0 fails, and the launcher kills ranks 1 and 2 wherever
// each was (one all-reduce apart: no hang, just timing). A real divergence
// before the failure is still reported, and names who stopped.
TEST(CrossRank, RanksKilledAfterAPeerFailedStoppedButARealDivergenceStays) {
  auto all_reduces = [](Synth& x, int n) {
    for (int k = 0; k < n; ++k)
      x.in_op("c10d::allreduce_", [&] {
        x.issue(100 + k, "c10d::allreduce_", {}, 64, x.stack("train.py", 40), 0, "");
      });
  };
  Synth s0(0, 10), s1(1, 11), s2(2, 12);
  all_reduces(s0, 1);
  all_reduces(s1, 4);
  all_reduces(s2, 3);
  s0.exit_status = 1;
  std::vector<ProcessAnalysis> ranks;
  ranks.push_back(s0.analyze());
  ranks.push_back(s1.analyze(/*clean_end=*/false));
  ranks.push_back(s2.analyze(/*clean_end=*/false));
  for (const Finding& f : collective_mismatches(view(ranks))) ADD_FAILURE() << f.message;

  // Rank 2's second call was a broadcast where rank 1's was an all-reduce:
  // a divergence, and rank 0 had stopped before it.
  Synth d0(0, 20), d1(1, 21), d2(2, 22);
  all_reduces(d0, 1);
  all_reduces(d1, 2);
  d2.in_op("c10d::allreduce_",
           [&] { d2.issue(100, "c10d::allreduce_", {}, 64, d2.stack("train.py", 40), 0, ""); });
  d2.in_op("c10d::broadcast_",
           [&] { d2.issue(101, "c10d::broadcast_", {}, 64, d2.stack("train.py", 60), 0, ""); });
  d0.exit_status = 1;
  std::vector<ProcessAnalysis> diverged;
  diverged.push_back(d0.analyze());
  diverged.push_back(d1.analyze(/*clean_end=*/false));
  diverged.push_back(d2.analyze(/*clean_end=*/false));
  const auto found = collective_mismatches(view(diverged));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].evidence["index"], 1);
  EXPECT_NE(found[0].message.find("rank 2 issued c10d::broadcast_"), std::string::npos)
      << found[0].message;
  EXPECT_NE(found[0].message.find("rank 0 stopped before it (exited with status 1)"),
            std::string::npos)
      << found[0].message;
}

// A pipeline: rank 0 sends each micro-batch's activations while rank 1
// receives them, between the all-reduces both make (torch.distributed
// .pipelining with a gloo group). Sends and receives pair across ranks, not
// by position in the group's order: no mismatch.
TEST(CrossRank, SendsAndReceivesAreOutsideTheGroupsOrder) {
  std::vector<ProcessAnalysis> ranks;
  for (int r = 0; r < 2; ++r) {
    Synth s(r, 20 + r);
    const uint64_t st = s.stack("pipe.py", 30 + r);
    uint64_t id = 1;
    for (int micro = 0; micro < 4; ++micro) {
      const std::string op = r == 0 ? "c10d::send" : "c10d::recv_";
      s.in_op(op, [&] { s.issue(id++, op, {}, 4096, st, kCollectivePointToPoint, "0"); });
    }
    s.in_op("c10d::allreduce_", [&] { s.issue(id++, "c10d::allreduce_", {}, 64, st, 0, "0"); });
    ranks.push_back(s.analyze());
  }
  for (const Finding& f : collective_mismatches(view(ranks))) ADD_FAILURE() << f.message;
}

// DCP's async_save runs its collectives on its own group from a background
// thread: on each rank they fall between the training's all-reduces at
// another place. Each group keeps its own order; c10d names the default
// group "0", the same group as a trace that named none.
TEST(CrossRank, EachGroupKeepsItsOwnOrder) {
  std::vector<ProcessAnalysis> ranks;
  for (int r = 0; r < 2; ++r) {
    Synth s(r, 30 + r);
    const uint64_t st = s.stack("train.py", 40);
    uint64_t id = 1;
    auto allreduce = [&] {
      s.in_op("c10d::allreduce_", [&] { s.issue(id++, "c10d::allreduce_", {}, 64, st, 0, "0"); });
    };
    auto checkpoint_scatter = [&] {
      s.in_op("c10d::scatter_", [&] { s.issue(id++, "c10d::scatter_", {}, 8, st, 0, "1"); });
    };
    allreduce();
    if (r == 0) checkpoint_scatter();
    allreduce();
    if (r == 1) checkpoint_scatter();
    s.in_op("c10d::barrier", [&] { s.issue(id++, "c10d::barrier", {}, 0, st, 0, ""); });
    ranks.push_back(s.analyze());
  }
  for (const Finding& f : collective_mismatches(view(ranks))) ADD_FAILURE() << f.message;
  // ... and a real divergence on the default group is still found, named so.
  std::vector<ProcessAnalysis> diverged;
  for (int r = 0; r < 2; ++r) {
    Synth s(r, 40 + r);
    s.in_op("c10d::allreduce_",
            [&] { s.issue(1, "c10d::allreduce_", {}, r == 0 ? 64 : 128, 0, 0, "0"); });
    diverged.push_back(s.analyze());
  }
  const auto found = collective_mismatches(view(diverged));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].evidence["group"], "default");
}

TEST(CrossRank, DifferentBytesDiverge) {
  std::vector<ProcessAnalysis> ranks;
  for (int r = 0; r < 2; ++r) {
    Synth s(r, 10 + r);
    s.in_op("c10d::allgather_",
            [&] { s.issue(1, "c10d::allgather_", {}, r == 1 ? 2048 : 1024, 0, 0, "tp"); });
    ranks.push_back(s.analyze());
  }
  const auto found = collective_mismatches(view(ranks));
  ASSERT_EQ(found.size(), 1u);  // on "tp" (the default group is empty on both)
  EXPECT_EQ(found[0].evidence["group"], "tp");
}

TEST(CrossRank, FindingOnEveryRankIsReportedOnceWithItsRanks) {
  std::vector<ProcessAnalysis> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(rank_run(r, 2, -1, /*unwaited=*/true));
  const auto found = cross_rank_findings(ranks, {});
  const auto folded = std::count_if(found.begin(), found.end(),
                                    [](const Finding& f) { return f.kind == kUnwaitedCollective; });
  ASSERT_EQ(folded, 1);
  const Finding& f = *std::find_if(found.begin(), found.end(),
                                   [](const Finding& f) { return f.kind == kUnwaitedCollective; });
  EXPECT_EQ(f.ranks, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(f.count, 4u);
  ASSERT_EQ(f.evidence["per_rank"].size(), 4u);
  EXPECT_EQ(f.evidence["per_rank"][3]["count"], 1);
  for (const auto& p : ranks) EXPECT_TRUE(of_kind(p, kUnwaitedCollective).empty());
}

TEST(CrossRank, FindingOnSomeRanksStaysPerRank) {
  std::vector<ProcessAnalysis> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(rank_run(r, 2, -1, /*unwaited=*/r < 2));
  for (const Finding& f : cross_rank_findings(ranks, {})) EXPECT_NE(f.kind, kUnwaitedCollective);
  EXPECT_EQ(of_kind(ranks[0], kUnwaitedCollective).size(), 1u);
  EXPECT_EQ(of_kind(ranks[3], kUnwaitedCollective).size(), 0u);
}

TEST(CrossRank, RankWithOutlyingPeakIsImbalanced) {
  std::vector<ProcessAnalysis> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(rank_run(r, 1, -1, false, r == 3 ? 24 * kMiB : 0));
  const auto found = rank_imbalances(view(ranks), {});
  ASSERT_EQ(found.size(), 1u) << found.back().message;
  EXPECT_EQ(found[0].evidence["metric"], "peak_bytes");
  EXPECT_EQ(found[0].count, 1u);
  EXPECT_NE(found[0].message.find("rank 3"), std::string::npos);
  std::vector<ProcessAnalysis> even;
  for (int r = 0; r < 4; ++r) even.push_back(rank_run(r, 1));
  EXPECT_TRUE(rank_imbalances(view(even), {}).empty());
}

TEST(CrossRank, RanksOfDifferentRunsAreNotCompared) {
  std::vector<ProcessAnalysis> ranks;
  ranks.push_back(rank_run(0, 3));
  ranks.push_back(rank_run(1, 3, 1));
  ranks[1].header.run_id = "other";
  EXPECT_TRUE(cross_rank_findings(ranks, {}).empty());
}

TEST(RunSelection, NewestRunUnlessOneIsNamed) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("memlife_runs_" + std::to_string(getpid()));
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& run, uint64_t wall) {
    Synth s(0, 1, run, wall);
    const auto bytes = s.bytes();
    FILE* f = std::fopen((dir / name).c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  };
  write("a.mltrace", "old", 100);
  write("b.mltrace", "old", 110);
  write("c.mltrace", "new", 200);
  std::vector<std::string> paths, warnings;
  std::string error;
  ASSERT_TRUE(collect_trace_paths({dir.string()}, paths, error)) << error;
  auto newest = paths;
  ASSERT_TRUE(select_run(newest, "", false, warnings, error));
  ASSERT_EQ(newest.size(), 1u);
  EXPECT_NE(newest[0].find("c.mltrace"), std::string::npos);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("2 trace(s) of run 'old'"), std::string::npos) << warnings[0];
  auto named = paths;
  warnings.clear();
  ASSERT_TRUE(select_run(named, "old", false, warnings, error));
  EXPECT_EQ(named.size(), 2u);
  auto all = paths;
  ASSERT_TRUE(select_run(all, "", true, warnings, error));
  EXPECT_EQ(all.size(), 3u);
  auto missing = paths;
  EXPECT_FALSE(select_run(missing, "nope", false, warnings, error));
  EXPECT_NE(error.find("nope"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace memlife::analysis
