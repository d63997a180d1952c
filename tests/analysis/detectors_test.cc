// Each detector over synthetic traces shaped like the recorder's output.
#include <gtest/gtest.h>

#include "analysis/replay.h"
#include "memlife/memlife.h"
#include "synthetic.h"

namespace memlife::analysis::testing {
namespace {

constexpr uint64_t kPadded = 12'595'200;  // the ZeRO-3 padded buffer (seed 000)
constexpr uint64_t kA = 0x10000;
constexpr uint64_t kB = 0x800000;

// Registry buffer, a true-shape view handed out, then the registry lets go
// either with `t.data = torch.empty(0)` or by resizing the storage to 0.
Synth zero3(bool release_by_resize) {
  Synth s;
  const uint64_t alloc_stack = s.stack("registry.py", 10, "allgather");
  const uint64_t view_stack = s.stack("model.py", 42, "forward");
  const uint64_t release_stack = s.stack("registry.py", 20, "release");
  s.step(1);
  s.alloc(kA, kPadded, alloc_stack);
  s.tensor(1, 1, kA, kPadded, kPadded / 4, 0, 0, "aten::empty", alloc_stack);
  s.tensor(2, 1, kA, kPadded, 3'000'000, kTensorIsView, 1, "aten::view", view_stack);
  if (release_by_resize) {
    s.free(kA, kPadded);
  } else {
    s.tensor(3, 2, 0, 0, 0, 0, 0, "aten::empty", release_stack);
    s.op(std::string(kSetDataOp), {1, 3}, {}, release_stack);
  }
  s.op("aten::mm", {2});
  s.step(2);
  // The census after the step: tensor 1 now on storage 2.
  if (!release_by_resize) s.tensor(1, 2, 0, 0, 0);
  s.census(
      2, {{1, release_by_resize ? 0 : kA, release_by_resize ? 0 : kPadded, 1, {{2, 12'000'000}}}});
  s.step(3);
  s.census(
      3, {{1, release_by_resize ? 0 : kA, release_by_resize ? 0 : kPadded, 1, {{2, 12'000'000}}}});
  if (!release_by_resize) s.free(kA, kPadded);
  return s;
}

TEST(ResidualView, SetDataEmptyLeavesPaddedBufferHeldByView) {
  Synth s = zero3(false);
  const ProcessAnalysis p = s.analyze();
  const auto found = of_kind(p, kResidualView);
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found[0];
  EXPECT_EQ(f.bytes, kPadded);
  EXPECT_EQ(f.evidence["reachable_bytes"], 12'000'000u);
  EXPECT_EQ(f.evidence["wasted_bytes"], kPadded - 12'000'000u);
  EXPECT_GE(f.evidence["retained_steps"].get<uint64_t>(), 2u);
  const auto& view = f.evidence["tensors"][0];
  EXPECT_EQ(view["op"], "aten::view");
  EXPECT_EQ(view["stack"][0]["line"], 42);
  EXPECT_EQ(view["stack"][0]["file"], "model.py");
  const auto& owner = f.evidence["tensors"][1];
  EXPECT_EQ(owner["let_go"], "rebound");
  EXPECT_EQ(owner["stack"][0]["line"], 20);
  EXPECT_NE(f.message.find("model.py:42"), std::string::npos) << f.message;
  EXPECT_GT(f.retained_ns, 0u);
}

TEST(ResidualView, StorageResizeToZeroIsNotAFinding) {
  Synth s = zero3(true);
  EXPECT_TRUE(of_kind(s.analyze(), kResidualView).empty());
}

TEST(ResidualView, OwnerDeadAtCensusWhileSmallViewHoldsStorage) {
  Synth s;
  const uint64_t view_stack = s.stack("a.py", 7);
  s.alloc(kA, 4 << 20);
  s.tensor(1, 1, kA, 4 << 20, 1 << 20);
  s.tensor(2, 1, kA, 4 << 20, 16, kTensorIsView, 1, "aten::slice", view_stack);
  s.step(1);
  // Owner absent from every holder list; the view's reach comes from its
  // geometry when the census does not say: 16 floats = 64 bytes.
  s.census(1, {{1, kA, 4 << 20, 1, {{2, 0}}}});
  const auto found = of_kind(s.analyze(), kResidualView);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].evidence["reachable_bytes"], 64u);
  EXPECT_EQ(found[0].evidence["tensors"][1]["let_go"], "died");
}

TEST(ResidualView, SmallWasteOnceIsNoFindingAPatternThatRecursIs) {
  // A view of a 128 KiB temporary kept once (a dataset's split of a
  // permutation made in its constructor) is no bug; the same view made
  // each step, each keeping that step's storage, is a pattern to fix.
  for (const uint64_t times : {1, 3}) {
    Synth s;
    const uint64_t view_stack = s.stack("data.py", 86, "Split.__init__");
    for (uint64_t i = 0; i < times; ++i) {
      const uint64_t address = kA + i * 0x100000, storage = 1 + i, owner = 10 + i;
      s.alloc(address, 128 << 10);
      s.tensor(owner, storage, address, 128 << 10, 32 << 10);
      s.tensor(owner + 10, storage, address, 128 << 10, 1024, kTensorIsView, owner, "aten::slice",
               view_stack);
      s.step(i + 1);
      s.census(i + 1, {{storage, address, 128 << 10, 1, {{owner + 10, 0}}}});
    }
    const auto found = of_kind(s.analyze(), kResidualView);
    if (times == 1) {
      EXPECT_TRUE(found.empty()) << found[0].message;
      continue;
    }
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].count, times);
    EXPECT_EQ(found[0].evidence["wasted_bytes"], (128u << 10) * times - 4096u * times);
  }
}

TEST(ResidualView, WasteOfStoragesHeldOneAfterAnotherIsTheirTotal) {
  // Transformer-XL memories as x-transformers returns them: each step keeps
  // a slice of that step's concatenated hidden states until the next
  // step's slice replaces it. One storage is held at a time; the waste
  // reported is every storage's, as total_bytes and reachable_bytes are.
  Synth s;
  const uint64_t view_stack = s.stack("x_transformers.py", 4697, "TransformerWrapper.forward");
  const uint64_t bytes = 288 << 10, reach = 32 << 10, times = 4;
  for (uint64_t i = 0; i < times; ++i) {
    const uint64_t address = kA + i * 0x100000, storage = 1 + i, owner = 10 + i;
    s.alloc(address, bytes);
    s.tensor(owner, storage, address, bytes, bytes / 4);
    s.tensor(owner + 10, storage, address, bytes, reach / 4, kTensorIsView, owner, "aten::slice",
             view_stack);
    if (i > 0) s.free(address - 0x100000, bytes);  // the last step's slice replaced
    s.step(i + 1);
    s.census(i + 1, {{storage, address, bytes, 1, {{owner + 10, 0}}}});
  }
  const auto found = of_kind(s.analyze(), kResidualView);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].bytes, bytes);
  EXPECT_EQ(found[0].evidence["total_bytes"], times * bytes);
  EXPECT_EQ(found[0].evidence["reachable_bytes"], times * reach);
  EXPECT_EQ(found[0].evidence["wasted_bytes"], times * (bytes - reach));
}

TEST(ResidualView, OnePartOfASplitKeptIsNoFindingASampleOfABatchIs) {
  // Each step keeps a view of one part of a 1 MiB storage whose owner died:
  // one half (gpytorch's decoupled variational strategy keeps the variance
  // half of each step's interp_term) or a third (v of a qkv projection) is
  // how tensors are split; a quarter or less keeps 4 times what it uses.
  for (const uint64_t parts : {2, 3, 4, 128}) {
    Synth s;
    const uint64_t view_stack = s.stack("model.py", 40, "Model.forward");
    const uint64_t bytes = 1 << 20, reach = bytes / parts;
    for (uint64_t i = 0; i < 3; ++i) {
      const uint64_t address = kA + i * 0x200000, storage = 1 + i, owner = 10 + i;
      s.alloc(address, bytes);
      s.tensor(owner, storage, address, bytes, bytes / 4);
      s.tensor(owner + 10, storage, address, bytes, reach / 4, kTensorIsView, owner, "aten::select",
               view_stack);
      s.step(i + 1);
      s.census(i + 1, {{storage, address, bytes, 1, {{owner + 10, 0}}}});
    }
    const auto found = of_kind(s.analyze(), kResidualView);
    if (parts < 4) {
      EXPECT_TRUE(found.empty()) << parts << ": " << found[0].message;
      continue;
    }
    ASSERT_EQ(found.size(), 1u) << parts;
    EXPECT_EQ(found[0].evidence["reachable_bytes"], 3 * reach) << parts;
  }
}

TEST(ResidualView, AliasReachingWholeStorageIsNoWaste) {
  Synth s;
  s.alloc(kA, 4096);
  s.tensor(1, 1, kA, 4096, 1024);
  s.tensor(2, 1, kA, 4096, 1024, kTensorAliases, 1, "aten::detach");
  s.step(1);
  s.census(1, {{1, kA, 4096, 1, {{2, 4096}}}});
  EXPECT_TRUE(of_kind(s.analyze(), kResidualView).empty());
}

TEST(ResidualView, SetDataWhileViewsReachTheWholeStorageIsReported) {
  // Seed 000 with a shard size that needs no padding: the view reaches every
  // byte, but the release was meant to free the buffer and did not.
  Synth s;
  s.alloc(kA, 4096);
  s.tensor(1, 1, kA, 4096, 1024, 0, 0, "aten::empty");
  s.tensor(2, 1, kA, 4096, 1024, kTensorIsView, 1, "aten::view");
  s.tensor(3, 2, 0, 0, 0);
  s.op(std::string(kSetDataOp), {1, 3});
  s.step(1);
  s.tensor(1, 2, 0, 0, 0);
  s.census(1, {{1, kA, 4096, 1, {{2, 4096}}}});
  const auto found = of_kind(s.analyze(), kResidualView);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].bytes, 4096);
}

TEST(ResidualView, FreedLaterThanSetDataWithoutCensus) {
  Synth s;
  const uint64_t release = s.stack("r.py", 5);
  s.alloc(kA, 8192);
  s.tensor(1, 1, kA, 8192, 2048);
  s.tensor(2, 1, kA, 8192, 100, kTensorIsView, 1, "aten::narrow");
  s.tensor(3, 2, 0, 0, 0);
  s.op(std::string(kSetDataOp), {1, 3}, {}, release);
  s.op("aten::relu", {2});
  s.free(kA, 8192);
  const auto found = of_kind(s.analyze(), kResidualView);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].bytes, 8192u);
  EXPECT_EQ(found[0].evidence["reachable_bytes"], 400u);
}

TEST(ResidualView, SetDataOnLastReferenceFreesAtOnce) {
  Synth s;
  s.alloc(kA, 8192);
  s.tensor(1, 1, kA, 8192, 2048);
  s.tensor(2, 1, kA, 8192, 100, kTensorIsView, 1, "aten::narrow");
  s.tensor(3, 2, 0, 0, 0);
  s.op(std::string(kSetDataOp), {1, 3});
  s.free(kA, 8192);  // the owner's own release: nothing else held it
  EXPECT_TRUE(of_kind(s.analyze(), kResidualView).empty());
}

// DeepCompile 0.19.1 (H200 traces in traces/gpu/deepspeed): a custom op
// allocates a parameter's buffer and returns views of it; another custom op
// rebinds the buffer's tensor (set_data in C++) while the compiled graph
// still holds the views, which die with the graph, after the release op
// ended and with no op in between. One finding for every parameter and
// every call site of the compiled code; none when the release frees the
// buffer while it runs (0.19.2).
TEST(ResidualView, ReleaseInsideACustomOpIsOnePatternWhateverTheCallSite) {
  for (const bool freed_inside_release : {false, true}) {
    Synth s;
    for (uint64_t p = 0; p < 3; ++p) {
      const uint64_t address = kA + p * 0x100000, buffer = 10 * p + 1, view = 10 * p + 2;
      const uint64_t gather_line = s.stack("/tmp/torchinductor_root/ab/cab.py", 100 + p, "call");
      const uint64_t release_line = s.stack("/tmp/torchinductor_root/ab/cab.py", 200 + p, "call");
      s.in_op("dc::allgather_param", [&] {
        s.alloc(address, 8192);
        s.tensor(buffer, buffer, address, 8192, 2048, 0, 0, "aten::empty");
        s.tensor(view, buffer, address, 8192, 2048, kTensorIsView, buffer, "aten::slice",
                 gather_line);
      });
      s.op("aten::mm", {view});
      s.in_op("dc::release_param", [&] {
        s.tensor(view + 5, view + 5, 0, 0, 0);
        s.op(std::string(kSetDataOp), {buffer, view + 5}, {}, release_line);
        if (freed_inside_release) s.free(address, 8192);
      });
      if (!freed_inside_release) s.free(address, 8192);  // the graph drops its views
    }
    const auto found = of_kind(s.analyze(), kResidualView);
    if (freed_inside_release) {
      EXPECT_TRUE(found.empty());
      continue;
    }
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].count, 3u);
    EXPECT_EQ(found[0].evidence["total_bytes"], 3u * 8192);
    EXPECT_EQ(found[0].evidence["bytes_per_step"], 3u * 8192);
    EXPECT_EQ(found[0].bytes, 8192u);  // one buffer held at a time
    const auto& tensors = found[0].evidence["tensors"];
    EXPECT_EQ(tensors[0]["made_in_op"], "dc::allgather_param");
    EXPECT_EQ(tensors.back()["let_go_in_op"], "dc::release_param");
    EXPECT_NE(found[0].message.find("inside dc::release_param"), std::string::npos);
  }
}

TEST(UnwaitedCollective, CountsIssuesNeverWaited) {
  Synth s(0);
  const uint64_t issue_stack = s.stack("train.py", 30, "step");
  for (uint64_t i = 0; i < 3; ++i) {
    s.alloc(kA + i * 0x1000, 1024);
    s.tensor(10 + i, 10 + i, kA + i * 0x1000, 1024, 256);
    s.op("c10d::allreduce_", {10 + i});
    s.issue(100 + i, "c10d::allreduce_", {10 + i}, 1024, issue_stack);
  }
  s.wait(100, {10});
  s.step(1);
  const ProcessAnalysis p = s.analyze();
  const auto found = of_kind(p, kUnwaitedCollective);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].count, 2u);
  EXPECT_EQ(found[0].bytes, 2048u);
  EXPECT_EQ(found[0].evidence["op"], "c10d::allreduce_");
  EXPECT_EQ(found[0].evidence["stacks"][0][0]["line"], 30);
  EXPECT_EQ(p.rank, 0);
}

TEST(UnwaitedCollective, WaitedByStorageIsClean) {
  Synth s;
  s.alloc(kA, 1024);
  s.tensor(10, 10, kA, 1024, 256);
  s.issue(0, "_c10d_functional::all_gather_into_tensor", {10}, 1024, 0, kCollectiveFunctional);
  s.tensor(11, 10, kA, 1024, 256, kTensorIsView, 10, "aten::view");  // view.dtype of the output
  s.wait(0, {11}, WaitHow::kWaitTensor);
  s.step(1);
  s.step(2);
  EXPECT_TRUE(of_kind(s.analyze(), kUnwaitedCollective).empty());
}

TEST(UnwaitedCollective, WaitOnACopyIsUnmatchedEvidence) {
  Synth s;
  s.alloc(kA, 1024);
  s.tensor(10, 10, kA, 1024, 256);
  s.issue(0, "_c10d_functional::all_gather_into_tensor", {10}, 1024, 0, kCollectiveFunctional);
  s.alloc(kA + 0x1000, 1024);
  s.tensor(12, 12, kA + 0x1000, 1024, 256);  // the bitcast copy (seed 001)
  s.wait(0, {12}, WaitHow::kWaitTensor);
  const auto found = of_kind(s.analyze(), kUnwaitedCollective);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].evidence["unmatched_wait_count"], 1u);
}

TEST(UnwaitedCollective, SyncCollectivesAreNotTracked) {
  Synth s;
  s.alloc(kA, 1024);
  s.tensor(10, 10, kA, 1024, 256);
  s.issue(5, "c10d::allreduce_", {10}, 1024, 0, 0);
  s.step(1);
  EXPECT_TRUE(of_kind(s.analyze(), kUnwaitedCollective).empty());
}

TEST(UseBeforeWait, NonViewOpReadsOutputInFlight) {
  Synth s;
  const uint64_t use = s.stack("train.py", 50);
  s.alloc(kA, 1024);
  s.tensor(10, 10, kA, 1024, 256);
  s.issue(7, "_c10d_functional::all_gather_into_tensor", {10}, 1024, 0, kCollectiveFunctional);
  s.tensor(11, 10, kA, 1024, 256, kTensorIsView, 10, "aten::view");
  s.op("aten::view.dtype", {10}, {11});  // metadata only
  s.op("aten::mul", {11}, {}, use);      // reads the data
  s.wait(7, {11}, WaitHow::kWaitTensor);
  s.op("aten::mul", {11}, {}, use);  // fine after the wait
  const auto found = of_kind(s.analyze(), kUseBeforeWait);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].count, 1u);
  EXPECT_EQ(found[0].evidence["op"], "aten::mul");
  EXPECT_EQ(found[0].evidence["stacks"][0][0]["line"], 50);
}

TEST(UseBeforeWait, OpsNestedInTheCollectiveAreIgnored) {
  Synth s;
  s.alloc(kA, 1024);
  s.tensor(10, 10, kA, 1024, 256);
  s.issue(7, "c10d::allreduce_", {10}, 1024);
  auto& b = s.builder();
  const uint64_t outer = 1000, inner = 1001;
  std::vector<uint64_t> in = {10}, none;
  b.add(1,
        format::OpBeginRecord{outer, s.str("c10d::allreduce_"), 0, format::list_of<uint64_t>(in)});
  b.add(1, format::OpBeginRecord{inner, s.str("aten::copy_"), 0, format::list_of<uint64_t>(in)});
  b.add(1, format::OpEndRecord{inner, format::list_of<uint64_t>(none)});
  b.add(1, format::OpEndRecord{outer, format::list_of<uint64_t>(none)});
  s.wait(7, {10});
  EXPECT_TRUE(of_kind(s.analyze(), kUseBeforeWait).empty());
}

TEST(StepGrowth, LossKeptInAListGrowsEveryStep) {
  Synth s;
  const uint64_t fwd = s.stack("train.py", 12, "forward");
  const uint64_t tmp = s.stack("train.py", 13, "forward");
  for (uint64_t step = 1; step <= 8; ++step) {
    s.alloc(kA + step * 0x10000, 4096, fwd);  // kept alive by the loss list
    s.alloc(0x900000, 65536, tmp);
    s.free(0x900000);
    s.step(step);
  }
  const auto found = of_kind(s.analyze(), kStepGrowth);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].evidence["bytes_per_step"], 4096u);
  EXPECT_EQ(found[0].evidence["stacks"][0][0]["line"], 12);
  EXPECT_EQ(found[0].count, 5u);  // marks 3..8 after two warm-up steps
}

TEST(StepGrowth, NamesTheLineThatKeepsTheMemory) {
  // The holder walk names the container and the program lines that store
  // into it; the finding names them beside the allocation site.
  Synth s;
  const uint64_t fwd = s.stack("train.py", 12, "forward");
  for (uint64_t step = 1; step <= 8; ++step) {
    s.alloc(kA + step * 0x10000, 4096, fwd);
    if (step == 4)
      for (uint64_t kept = 1; kept <= 4; ++kept)
        s.holder(kA + kept * 0x10000,
                 "__main__.history[" + std::to_string(kept - 1) + "]\ntrain.py:20\ntrain.py:31",
                 step);
    s.step(step);
  }
  const auto found = of_kind(s.analyze(), kStepGrowth);
  ASSERT_EQ(found.size(), 1u);
  const auto& held = found[0].evidence["held_by"];
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0]["path"], "__main__.history[*]");
  EXPECT_EQ(held[0]["stored_at"], nlohmann::json({"train.py:20", "train.py:31"}));
  EXPECT_NE(
      found[0].message.find("held by __main__.history[*], stored at train.py:20, train.py:31"),
      std::string::npos)
      << found[0].message;
}

// Eight steps of growth at one site; at step 8 the walk finds `bounded`
// of the allocations under `bounded_path` (a container with a declared
// bound) and the rest in a list.
ProcessAnalysis growth_held_partly_by(const std::string& bounded_path, uint64_t bounded) {
  Synth s;
  const uint64_t fwd = s.stack("train.py", 12, "forward");
  for (uint64_t step = 1; step <= 8; ++step) {
    s.alloc(kA + step * 0x10000, 4096, fwd);
    if (step == 8)
      for (uint64_t kept = 1; kept <= 8; ++kept)
        s.holder(kA + kept * 0x10000,
                 (kept <= bounded ? bounded_path : std::string("__main__.seen")) + "[" +
                     std::to_string(kept - 1) + "]",
                 step);
    s.step(step);
  }
  return s.analyze();
}

ProcessAnalysis growth_held_partly_by_a_bounded_deque(uint64_t bounded) {
  return growth_held_partly_by("__main__.buffer<deque maxlen=100>", bounded);
}

TEST(StepGrowth, GrowthABoundedContainerHoldsIsSetAside) {
  const ProcessAnalysis p = growth_held_partly_by_a_bounded_deque(8);
  EXPECT_TRUE(p.findings.empty());
  ASSERT_EQ(p.growth_set_aside.size(), 1u);
  EXPECT_EQ(p.growth_set_aside[0]["bound"], "maxlen=100");
  EXPECT_EQ(p.growth_set_aside[0]["path"], "__main__.buffer<deque maxlen=100>[*]");
}

TEST(StepGrowth, AnyDeclaredBoundCounts) {
  // The walk writes every bound as <Type key=N>: LBFGS keeps its last
  // history_size curvature pairs.
  const ProcessAnalysis p =
      growth_held_partly_by("main().opt<LBFGS history_size=100>.state[<Parameter>]['old_dirs']", 8);
  EXPECT_TRUE(p.findings.empty());
  ASSERT_EQ(p.growth_set_aside.size(), 1u);
  EXPECT_EQ(p.growth_set_aside[0]["bound"], "history_size=100");
}

// Growth that is a leak: one step_growth finding, nothing set aside.
void expect_growth_reported(const ProcessAnalysis& p) {
  EXPECT_EQ(of_kind(p, kStepGrowth).size(), 1u);
  EXPECT_TRUE(p.growth_set_aside.empty());
}

// Growth a container with a bound holds is set aside, with what bounds it.
void expect_set_aside_as(const std::string& bounded_path, const std::string& reason) {
  const ProcessAnalysis p = growth_held_partly_by(bounded_path, 8);
  EXPECT_TRUE(p.findings.empty()) << bounded_path;
  ASSERT_EQ(p.growth_set_aside.size(), 1u) << bounded_path;
  EXPECT_EQ(p.growth_set_aside[0]["reason"], reason);
}

TEST(StepGrowth, EpochWiseIgniteMetricIsBoundedByItsEngine) {
  // An ignite EpochMetric attached to an engine keeps the epoch's batches;
  // the engine resets it at the next epoch's start (ignite_epoch_metric_
  // one_epoch in the corpus: one epoch, so still held at exit).
  expect_set_aside_as(
      "__main__.trainer._event_handlers[*][*][*]<method started>.__self__<ROC_AUC "
      "epoch_length=48>._predictions",
      "bounded: its trainer resets it at each epoch's start (an ignite engine, a fastai Learner's "
      "Recorder), epoch_length=48");
}

TEST(StepGrowth, FastaiLearnersMetricsAreBoundedByItsEpoch) {
  // One epoch of fastai scoring its training set (Recorder(train_metrics=
  // True)): an AccumMetric keeps the epoch's predictions, reset by the
  // Recorder at the next epoch's start.
  expect_set_aside_as("__main__.learn._metrics<L epoch_length=16>.items[*].preds",
                      "bounded: its trainer resets it at each epoch's start (an ignite engine, a "
                      "fastai Learner's Recorder), epoch_length=16");
}

TEST(StepGrowth, DatasetsPerSampleCacheIsBoundedByItsLength) {
  // A short run over a Dataset that memoizes samples by index
  // (dataset_memo_cache_short_run in the corpus).
  expect_set_aside_as("main().data.cache<dict dataset_len=2048>",
                      "bounded: a dataset's cache keyed by sample index, one entry per sample at "
                      "most, dataset_len=2048");
}

TEST(StepGrowth, ContainerALoopMakesAnewIsBoundedByThatLoop) {
  // One epoch that keeps its detached outputs to score them at its end
  // (`for epoch ...: preds = []`): the run's only pass of the loop
  // (epoch_outputs_plain_loop in the corpus).
  expect_set_aside_as("main().preds<list loop_line=11>",
                      "bounded: the program makes it anew (or empties it) at each pass of a "
                      "running loop (its function's or its caller's, at line 11), so it holds one "
                      "pass's worth (an epoch's outputs), loop_line=11");
}

TEST(StepGrowth, WhatAnEpochStartHookMakesAnewIsBoundedByTheEpoch) {
  // One epoch of a LightningModule whose on_train_epoch_start starts fresh
  // lists (lightning_epoch_start_outputs_one_epoch in the corpus).
  expect_set_aside_as(
      "main().trainer.profiler._lightning_module.epoch_preds<list epoch_hook_line=28>",
      "bounded: the program makes it anew in an epoch-start hook of its class (Lightning's "
      "on_train_epoch_start, SpeechBrain's on_stage_start, on_epoch_begin, ..., at line 28), so it "
      "holds one epoch's worth, epoch_hook_line=28");
}

TEST(StepGrowth, AMetricComputedAfterItsLastUpdateIsBoundedByThatCompute) {
  // One epoch scored at its end with torchmetrics and no reset
  // (torchmetrics_one_epoch_scored_at_end in the corpus).
  expect_set_aside_as(
      "main().auroc<BinaryAUROC computed_after_updates=40>.target",
      "bounded: a metric's state (torchmetrics, torcheval), first computed after its last update "
      "(update 40): "
      "a list-state metric keeps every update until the program computes it, and nothing was "
      "added after that compute (one computed and then updated again without reset() grows on, "
      "and is reported), computed_after_updates=40");
}

TEST(StepGrowth, GraphsAComputedMetricKeepsAreStillALeak) {
  // A metric updated with outputs that still carry their graphs.
  const ProcessAnalysis p = growth_held_partly_by(
      "main().metric<MeanMetric computed_after_updates=40>.values[0].grad_fn<AddmmBackward0>", 8);
  expect_growth_reported(p);
}

TEST(StepGrowth, GraphsKeptForAnEpochHooksListAreStillALeak) {
  const ProcessAnalysis p = growth_held_partly_by(
      "main().model.epoch_preds<list epoch_hook_line=28>[0].grad_fn<AddmmBackward0>", 8);
  expect_growth_reported(p);
}

TEST(StepGrowth, ALoopsBoundOutlivesTheLoop) {
  // A script's module-level epoch loop: the walks while it runs write the
  // bound; the exit walk, after the loop ended, finds the same list without.
  Synth s;
  const uint64_t fwd = s.stack("train.py", 12, "<module>");
  for (uint64_t step = 1; step <= 8; ++step) {
    s.alloc(kA + step * 0x10000, 4096, fwd);
    for (uint64_t kept = 1; kept <= step; ++kept)
      s.holder(kA + kept * 0x10000,
               "__main__.preds<list loop_line=8>[" + std::to_string(kept - 1) + "]", step);
    s.step(step);
  }
  for (uint64_t kept = 1; kept <= 8; ++kept)
    s.holder(kA + kept * 0x10000, "__main__.preds[" + std::to_string(kept - 1) + "]", 8);
  const ProcessAnalysis p = s.analyze();
  EXPECT_TRUE(p.findings.empty());
  ASSERT_EQ(p.growth_set_aside.size(), 1u);
  EXPECT_EQ(p.growth_set_aside[0]["bound"], "loop_line=8");
}

TEST(StepGrowth, GraphsKeptForALoopsPassAreStillALeak) {
  // Outputs kept with their autograd graphs (an evaluation without no_grad,
  // pytorch#64586): the list is made anew per epoch, but each entry keeps
  // its graph's saved tensors, which grow with the epoch's length.
  const ProcessAnalysis p =
      growth_held_partly_by("main().preds<list loop_line=11>[0].grad_fn<AddmmBackward0>", 8);
  expect_growth_reported(p);
}

// Each step keeps `kept_bytes` in `kept_in` and reads a 16 KiB batch made
// at the same line, freed at the next step; the walks name each batch while
// it is current.
ProcessAnalysis growth_beside_batches(const std::string& kept_in, uint64_t kept_bytes = 4096) {
  Synth s;
  const uint64_t line = s.stack("train.py", 13, "main");
  for (uint64_t step = 1; step <= 8; ++step) {
    if (step > 1) s.free(kB + (step - 1) * 0x10000, 16384);
    s.alloc(kB + step * 0x10000, 16384, line);
    s.alloc(kA + step * 0x10000, kept_bytes, line);
    s.holder(kB + step * 0x10000, "main().xb", step);
    for (uint64_t kept = 1; kept <= step; ++kept)
      s.holder(kA + kept * 0x10000, kept_in + "[" + std::to_string(kept) + "]", step);
    s.step(step);
  }
  return s.analyze();
}

TEST(StepGrowth, ADetachedNumberPerStepIsARecordOfTheRun) {
  // fastai's Recorder.losses: one detached 0-d loss per step, for plotting.
  const ProcessAnalysis p = growth_beside_batches("__main__.learn.recorder.losses", 4);
  EXPECT_TRUE(of_kind(p, kStepGrowth).empty());
  ASSERT_EQ(p.growth_set_aside.size(), 1u);
  EXPECT_EQ(p.growth_set_aside[0]["why"], "numbers");
  EXPECT_EQ(p.growth_set_aside[0]["path"], "__main__.learn.recorder.losses[*]");
  EXPECT_NE(p.growth_set_aside[0]["reason"].get<std::string>().find("4 B per step"),
            std::string::npos);
}

TEST(StepGrowth, NumbersKeptWithTheirGraphsAreStillALeak) {
  // `losses.append(loss)` after backward (PyTorch's FAQ): backward freed
  // the saved tensors, but each loss keeps its graph's nodes.
  const ProcessAnalysis p = growth_beside_batches("main().losses<with grad_fn>", 4);
  expect_growth_reported(p);
}

TEST(StepGrowth, MoreThanANumberPerAllocationIsNoRecordOfNumbers) {
  const ProcessAnalysis p = growth_beside_batches("main().outputs", 16);
  expect_growth_reported(p);
}

TEST(StepGrowth, NumbersNoWalkNamedAreStillAFinding) {
  Synth s;
  const uint64_t line = s.stack("train.py", 21, "main");
  for (uint64_t step = 1; step <= 8; ++step) {
    s.alloc(kA + step * 0x10000, 4, line);
    s.step(step);
  }
  const ProcessAnalysis p = s.analyze();
  expect_growth_reported(p);
}

TEST(StepGrowth, BatchesFreedBeforeTheLastStepAreNoPartOfWhatGrew) {
  const ProcessAnalysis p = growth_beside_batches("main().history");
  const std::vector<Finding> growth = of_kind(p, kStepGrowth);
  ASSERT_EQ(growth.size(), 1u);
  // Only the last step's batch is still held when the growth ends.
  for (const nlohmann::json& h : growth[0].evidence["held_by"]) {
    if (h["path"] == "main().xb") {
      EXPECT_EQ(h["allocations"], 1u) << h.dump();
    }
  }
}

TEST(StepGrowth, TheLastBatchDoesNotKeepABoundedContainersGrowthAFinding) {
  // The loop-bounded list holds all that grew; the batch beside it did not grow.
  const ProcessAnalysis p = growth_beside_batches("main().preds<list loop_line=11>");
  EXPECT_TRUE(p.findings.empty());
  ASSERT_EQ(p.growth_set_aside.size(), 1u);
  EXPECT_EQ(p.growth_set_aside[0]["bound"], "loop_line=11");
}

TEST(StepGrowth, SummarySaysWhatGrowthWasSetAside) {
  std::vector<ProcessAnalysis> ps = {growth_held_partly_by_a_bounded_deque(8)};
  const nlohmann::json r = make_report(ps);
  std::string error;
  ASSERT_TRUE(validate_report(r, error)) << error;
  EXPECT_NE(summary_table(r).find("growth set aside (bounded: its container evicts by itself, "
                                  "maxlen=100): 32.0 KiB held by "
                                  "__main__.buffer<deque maxlen=100>[*]"),
            std::string::npos)
      << summary_table(r);
}

TEST(StepGrowth, GrowthMostlyOutsideTheBoundedContainerIsStillALeak) {
  // 7 of 8 allocations (87.5 %) in the deque: the rest grows unbounded.
  const ProcessAnalysis p = growth_held_partly_by_a_bounded_deque(7);
  expect_growth_reported(p);
}

// Eight steps, each all-reducing a new buffer that stays live (waited).
enum class BufferHolder {
  kNone,         // only the backend, until its watchdog reaps the works
  kCurrentSlot,  // the parameter's .grad while it was current, when a walk ran
  kList,         // the program appends each to a list the walk names
};
ProcessAnalysis collective_buffers_growing(BufferHolder holder) {
  Synth s;
  const uint64_t hook =
      s.stack("torch/distributed/algorithms/ddp_comm_hooks/default_hooks.py", 90, "_compress_hook");
  for (uint64_t step = 1; step <= 8; ++step) {
    const uint64_t address = kA + step * 0x10000;
    s.alloc(address, 4096, hook);
    s.tensor(step, step, address, 4096, 1024);
    s.issue(step, "c10d::allreduce_", {step}, 4096, hook);
    s.wait(step, {step});
    if (holder == BufferHolder::kCurrentSlot && step == 4)
      s.holder(address, "main().model.0.weight.grad", step);
    if (holder == BufferHolder::kList && step == 8)
      for (uint64_t k = 1; k <= 8; ++k)
        s.holder(kA + k * 0x10000, "__main__.losses[" + std::to_string(k - 1) + "]", step);
    s.step(step);
  }
  return s.analyze();
}

TEST(StepGrowth, CollectiveBuffersTheBackendHasYetToReapAreSetAside) {
  // ProcessGroupNCCL keeps a waited work's buffers until its watchdog reaps
  // the work: no Python path holds them.
  const ProcessAnalysis p = collective_buffers_growing(BufferHolder::kNone);
  EXPECT_TRUE(p.findings.empty());
  ASSERT_EQ(p.growth_set_aside.size(), 1u);
  EXPECT_EQ(p.growth_set_aside[0]["why"], "collective_buffers");
}

TEST(StepGrowth, CollectiveBuffersAWalkSawAsTheCurrentGradientAreSetAside) {
  // opt.zero_grad(); loss.backward(); all_reduce(p.grad, async_op=True)
  // waited through its future: ProcessGroupNCCL stashes each step's
  // gradient until the watchdog reaps the work. A walk that ran while one
  // of them was still `p.grad` named that slot: one allocation, the
  // current one, which holds none of the growth (dist_futures_wait_all on
  // an H100).
  const ProcessAnalysis p = collective_buffers_growing(BufferHolder::kCurrentSlot);
  EXPECT_TRUE(p.findings.empty()) << p.findings[0].message;
  ASSERT_EQ(p.growth_set_aside.size(), 1u);
  EXPECT_EQ(p.growth_set_aside[0]["why"], "collective_buffers");
}

TEST(StepGrowth, CollectiveBuffersTheProgramKeepsAreALeak) {
  // dist.all_reduce(loss); losses.append(loss): the walk names the list.
  const ProcessAnalysis p = collective_buffers_growing(BufferHolder::kList);
  const auto found = of_kind(p, kStepGrowth);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].evidence["held_by"][0]["path"], "__main__.losses[*]");
  EXPECT_TRUE(p.growth_set_aside.empty());
}

// A torchmetrics list-state metric (AUROC) updated at each of one epoch's
// steps keeps every batch's predictions. Under Lightning its reset() at the
// epoch's end frees them (lightning_auroc_one_epoch in the corpus); never
// reset, they stay (torchmetrics#1949, torchmetrics_never_reset).
ProcessAnalysis metric_state_growing(bool reset_at_the_end,
                                     const char* begin = MEMLIFE_METRIC_RESET_BEGIN,
                                     const char* end = MEMLIFE_METRIC_RESET_END) {
  Synth s;
  const uint64_t update = s.stack("train.py", 15, "training_step");
  for (uint64_t step = 1; step <= 8; ++step) {
    s.alloc(kA + step * 0x10000, 4096, update);
    s.step(step);
  }
  if (reset_at_the_end) s.label(begin);
  for (uint64_t step = 1; step <= 8; ++step) s.free(kA + step * 0x10000);
  if (reset_at_the_end) s.label(end);
  return s.analyze();
}

TEST(StepGrowth, MetricStateItsResetFreedIsSetAside) {
  const ProcessAnalysis p = metric_state_growing(true);
  EXPECT_TRUE(p.findings.empty());
  ASSERT_EQ(p.growth_set_aside.size(), 1u);
  EXPECT_EQ(p.growth_set_aside[0]["why"], "metric_reset");
}

// Lightning's documented self.training_step_outputs, cleared in
// on_train_epoch_end (lightning_epoch_outputs_one_epoch in the corpus).
TEST(StepGrowth, WhatAnEpochsEndFreedIsSetAside) {
  const ProcessAnalysis p =
      metric_state_growing(true, MEMLIFE_EPOCH_END_BEGIN, MEMLIFE_EPOCH_END_END);
  EXPECT_TRUE(p.findings.empty());
  ASSERT_EQ(p.growth_set_aside.size(), 1u);
  EXPECT_EQ(p.growth_set_aside[0]["why"], "epoch_end");
}

TEST(StepGrowth, MetricStateNoResetFreedIsALeak) {
  const ProcessAnalysis p = metric_state_growing(false);
  expect_growth_reported(p);
}

TEST(StepGrowth, HolderWithoutStoreLinesNamesThePathOnly) {
  Synth s;
  const uint64_t fwd = s.stack("train.py", 12, "forward");
  for (uint64_t step = 1; step <= 8; ++step) {
    s.alloc(kA + step * 0x10000, 4096, fwd);
    if (step == 4) s.holder(kA + 4 * 0x10000, "__main__.history[3]", step);
    s.step(step);
  }
  const auto found = of_kind(s.analyze(), kStepGrowth);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FALSE(found[0].evidence["held_by"][0].contains("stored_at"));
  EXPECT_EQ(found[0].message.find("stored at"), std::string::npos);
}

// A walk made after the growth was freed (the exit walk, once a test's
// frame and the mock keeping every call's arguments were gone: gpytorch's
// test_lowrank_gp_regression.py) reached nothing because nothing was
// left: the finding claims nothing of where its memory was held.
TEST(StepGrowth, WalkAfterTheGrowthWasFreedClaimsNothing) {
  for (const bool freed : {false, true}) {
    Synth s;
    const uint64_t fwd = s.stack("test_lowrank.py", 101, "test_mean_abs_error");
    for (uint64_t step = 1; step <= 8; ++step) {
      s.alloc(kA + step * 0x10000, 4096, fwd);
      s.step(step);
    }
    if (freed)
      for (uint64_t step = 1; step <= 8; ++step) s.free(kA + step * 0x10000, 4096);
    s.holder(0x900000, "__main__.model.weight", 8);
    s.walk_end(true);
    const auto found = of_kind(s.analyze(), kStepGrowth);
    ASSERT_EQ(found.size(), 1u) << freed;
    EXPECT_EQ(found[0].evidence.contains("holder_search"), !freed) << found[0].message;
    EXPECT_EQ(found[0].message.find("no Python reference path") == std::string::npos, freed)
        << found[0].message;
  }
}

// Growth no walk reaches (a C++ object holds it): the finding says which
// walk looked and where no walk looks. Without a walk, or when only a walk
// its budget cut short ran, it claims nothing.
TEST(StepGrowth, GrowthNoWalkReachedSaysWhereTheWalkDoesNotLook) {
  for (const int walk : {0, 1, 2}) {  // none, cut short, complete
    Synth s;
    const uint64_t fwd = s.stack("train.py", 12, "forward");
    for (uint64_t step = 1; step <= 8; ++step) {
      s.alloc(kA + step * 0x10000, 4096, fwd);
      if (step == 5 && walk != 0) {
        s.holder(0x900000, "__main__.model.weight", step);  // something else it reached
        s.walk_end(walk == 2);
      }
      s.step(step);
    }
    const auto found = of_kind(s.analyze(), kStepGrowth);
    ASSERT_EQ(found.size(), 1u) << walk;
    const nlohmann::json& evidence = found[0].evidence;
    if (walk != 2) {
      EXPECT_FALSE(evidence.contains("holder_search")) << walk;
      EXPECT_EQ(found[0].message.find("no Python reference path"), std::string::npos);
      continue;
    }
    ASSERT_TRUE(evidence.contains("holder_search")) << evidence.dump();
    EXPECT_EQ(evidence["holder_search"]["walk_step"], 4u);  // ended before step 5's mark
    // The growth's allocations made before the walk: steps 4 and 5 (growth
    // counts from the mark after the warm-up).
    EXPECT_EQ(evidence["holder_search"]["allocations"], 2u);
    EXPECT_EQ(evidence["holder_search"]["bytes"], 2u * 4096u);
    EXPECT_NE(found[0].message.find("; no Python reference path reached it at the walk of step 4 "
                                    "(held where the walk does not look: a C++ object"),
              std::string::npos)
        << found[0].message;
  }
}

// Inside a memlife.record() block a walk at step 2 names what the program
// holds; then the program drops it but the memory stays (a frozen
// TorchScript module's constants, which its compilation unit keeps). The
// walk at the block's end reaches everything and no longer finds it: the
// block's leak names no stale holder. A walk its budget cut short proves
// nothing: the older path stays.
TEST(LeakedByBlock, PathAWalkAtTheEndNoLongerFindsIsNotTheHolder) {
  for (const bool complete : {false, true}) {
    Synth s;
    const uint64_t init = s.stack("prog.py", 17, "Net.__init__");
    s.label(MEMLIFE_BLOCK_BEGIN_PREFIX "1");
    s.alloc(kA, 20480, init);
    s.step(1);
    s.holder(kA, "main().scripted.fc.weight", 2);
    s.walk_end(true);
    s.step(2);
    s.walk_end(complete);  // the block's last walk: found nothing
    s.label(MEMLIFE_BLOCK_END_PREFIX "1");
    AnalysisOptions options;
    options.block = 1;
    const auto found = of_kind(s.analyze(true, options), kLeakedByBlock);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].evidence.contains("held_by"), !complete) << found[0].evidence.dump();
    EXPECT_EQ(found[0].message.find("main().scripted") == std::string::npos, complete)
        << found[0].message;
  }
}

// A framework keeping its last call's results (Lightning's predict loop):
// block 2's predictions, made by the same code as block 1's and held by
// the same container, replace block 1's, which block 2 freed: one call's
// worth, set aside (why: replaced). Kept by another container instead (a
// list of the program's), or made by other code, or with less freed than
// kept, it is the block's leak.
TEST(LeakedByBlock, WhatReplacesAnEarlierCallsResultsInTheSameContainerIsSetAside) {
  enum Case { kReplaced, kOtherHolder, kOtherCode, kLessFreed };
  for (const Case c : {kReplaced, kOtherHolder, kOtherCode, kLessFreed}) {
    Synth s;
    const std::string loop = "/venv/lib/python3.12/site-packages/lightning/loops/predict.py";
    const auto made_at = [&](const std::string& test_line_file, uint64_t line) {
      return s.stack(
          {{"/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", 125, "forward"},
           {"/work/model.py", line, "Net.predict_step"},
           {loop, 260, "_predict_step"},
           {test_line_file, 14, "test"}});
    };
    const uint64_t first = made_at("/work/test_a.py", 30);
    const uint64_t second = made_at("/work/test_b.py", c == kOtherCode ? 31 : 30);
    const std::string loop_slot = "main().trainer.predict_loop._predictions[*][*]";
    s.label(MEMLIFE_BLOCK_BEGIN_PREFIX "1");
    s.alloc(kA, 16384, first);
    s.holder(kA, loop_slot, 0);
    s.walk_end(true);
    s.label(MEMLIFE_BLOCK_END_PREFIX "1");
    s.label(MEMLIFE_BLOCK_BEGIN_PREFIX "2");
    s.free(kA);
    s.alloc(kA + 0x10000, c == kLessFreed ? 32768 : 16384, second);
    s.holder(kA + 0x10000, c == kOtherHolder ? "main().kept[*]" : loop_slot, 0);
    s.walk_end(true);
    s.label(MEMLIFE_BLOCK_END_PREFIX "2");
    AnalysisOptions options;
    options.block = 2;
    const ProcessAnalysis out = s.analyze(true, options);
    const auto found = of_kind(out, kLeakedByBlock);
    if (c == kReplaced) {
      EXPECT_TRUE(found.empty()) << found[0].message;
      ASSERT_EQ(out.growth_set_aside.size(), 1u);
      EXPECT_EQ(out.growth_set_aside[0]["why"], "replaced");
      EXPECT_EQ(out.growth_set_aside[0]["bytes"], 16384u);
    } else {
      ASSERT_EQ(found.size(), 1u) << c;
      EXPECT_TRUE(out.growth_set_aside.empty()) << c;
    }
  }
}

TEST(LeakedByBlock, MemoryAnUncollectableCycleKeepsNamesTheCycle) {
  // The walk at a block's end names what a cycle through C++ keeps under
  // MEMLIFE_HOLDER_CYCLE_ROOT: the message names the cycle itself (its
  // shortest path, back to the parameter), not the larger optimizer state
  // hanging off it; held_by has both.
  Synth s;
  const uint64_t init = s.stack("prog.py", 12, "main");
  const uint64_t state = s.stack("prog.py", 17, "main.<locals>.step_in_backward");
  s.label(MEMLIFE_BLOCK_BEGIN_PREFIX "1");
  s.alloc(kA, 4096, init);
  s.alloc(kA + 0x10000, 8192, state);
  const std::string cycle = MEMLIFE_HOLDER_CYCLE_ROOT
      ".Parameter._post_accumulate_grad_hooks[0]<function step_in_backward>.optimizers";
  s.holder(kA, cycle + ".keys()", 3);
  s.holder(kA + 0x10000, cycle + "[<Parameter>].state[<Parameter>]['exp_avg']", 3);
  s.walk_end(true);
  s.label(MEMLIFE_BLOCK_END_PREFIX "1");
  AnalysisOptions options;
  options.block = 1;
  const auto found = of_kind(s.analyze(true, options), kLeakedByBlock);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].bytes, 4096u + 8192u);
  const std::string& message = found[0].message;
  EXPECT_NE(message.find("held by a reference cycle that gc.collect() could not free"),
            std::string::npos)
      << message;
  EXPECT_TRUE(message.ends_with(
      ": Parameter._post_accumulate_grad_hooks[*]<function step_in_backward>.optimizers.keys()"))
      << message;
  EXPECT_EQ(found[0].evidence["held_by"].size(), 2u) << found[0].evidence.dump();
}

TEST(LeakedByBlock, ACreateGraphGradientCycleSaysHowToBreakIt) {
  // The cycle PyTorch warns of (pytorch/pytorch#7343): parameter -> .grad
  // -> its graph -> AccumulateGrad -> parameter. The message names it and
  // says the fix PyTorch's warning gives.
  Synth s;
  const uint64_t backward = s.stack("fit.py", 30, "fit");
  s.label(MEMLIFE_BLOCK_BEGIN_PREFIX "1");
  s.alloc(kA, 4096, backward);
  s.alloc(kA + 0x10000, 65536, backward);
  const std::string cycle = MEMLIFE_HOLDER_CYCLE_ROOT
      ".Tensor.grad.grad_fn<CopyBackwards>.next_functions[1]<TanhBackward0>"
      ".next_functions[0]<AccumulateGrad>.variable";
  s.holder(kA, cycle, 3);  // the parameter
  s.holder(kA + 0x10000, cycle + ".grad.grad_fn<TanhBackwardBackward0>._saved_output", 3);
  s.walk_end(true);
  s.label(MEMLIFE_BLOCK_END_PREFIX "1");
  AnalysisOptions options;
  options.block = 1;
  const auto found = of_kind(s.analyze(true, options), kLeakedByBlock);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].bytes, 4096u + 65536u);
  const std::string& message = found[0].message;
  EXPECT_NE(message.find(": Tensor.grad.grad_fn<CopyBackwards>.next_functions[*]<TanhBackward0>"
                         ".next_functions[*]<AccumulateGrad>.variable (a gradient made by "
                         "backward(create_graph=True)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("set the parameter's .grad to None after use"), std::string::npos)
      << message;
}

TEST(LeakedAtExit, TensorMemoryOnlyAnUncollectableCycleKeepsIsALeak) {
  // At exit tensor memory is still reachable (module globals), except what
  // the exit walk found kept only by a cycle gc.collect() could not free.
  // A cycle an earlier walk saw and the exit walk did not is not named.
  const std::string cycle = MEMLIFE_HOLDER_CYCLE_ROOT
      ".Parameter._post_accumulate_grad_hooks[0]<function step_in_backward>.optimizers";
  for (const bool at_exit : {true, false}) {
    Synth s;
    const uint64_t init = s.stack("sweep.py", 20, "trial");
    s.alloc(kA, 4096, init);
    s.alloc(kA + 0x10000, 8192, init);  // a module global's: still reachable
    s.step(1);
    s.holder(kA, cycle + ".keys()", 1);
    s.holder(kA + 0x10000, "__main__.model.weight", 1);
    s.walk_end(true);
    if (!at_exit) {
      s.step(2);
      s.holder(kA + 0x10000, "__main__.model.weight", 2);
      s.walk_end(true);  // the exit walk no longer finds the cycle
    }
    const auto found = of_kind(s.analyze(), kLeakedAtExit);
    if (!at_exit) {
      EXPECT_TRUE(found.empty()) << found[0].message;
      continue;
    }
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].bytes, 4096u);
    EXPECT_EQ(found[0].evidence["memory"], "uncollectable_cycle");
    EXPECT_TRUE(found[0].message.ends_with(
        "unreachable at exit; held by a reference cycle that gc.collect() could not free (one of "
        "its references is held in C++, where the collector cannot see it): "
        "Parameter._post_accumulate_grad_hooks[*]<function step_in_backward>.optimizers.keys()"))
        << found[0].message;
  }
}

TEST(StepGrowth, SteadyLoopDoesNotTrigger) {
  Synth s;
  const uint64_t fwd = s.stack("train.py", 12);
  const uint64_t opt = s.stack("train.py", 20);
  for (uint64_t step = 1; step <= 10; ++step) {
    if (step == 1) s.alloc(0x500000, 1 << 20, opt);  // optimizer state, once
    s.alloc(kA + (step % 2) * 0x10000, 4096, fwd);
    s.free(kA + (step % 2) * 0x10000);
    s.step(step);
  }
  EXPECT_TRUE(of_kind(s.analyze(), kStepGrowth).empty());
}

TEST(StepGrowth, GrowthOnlyDuringWarmupIsIgnored) {
  Synth s;
  const uint64_t fwd = s.stack("train.py", 12);
  for (uint64_t step = 1; step <= 8; ++step) {
    if (step <= 3) s.alloc(kA + step * 0x10000, 4096, fwd);
    s.step(step);
  }
  AnalysisOptions o;
  o.warmup_steps = 3;
  EXPECT_TRUE(of_kind(s.analyze(true, o), kStepGrowth).empty());
}

TEST(StepGrowth, SameFramesOnTwoThreadsAreOneSite) {
  Synth s;
  const uint64_t a = s.stack("train.py", 12);
  const uint64_t b = s.stack("train.py", 12);  // other thread, other id
  for (uint64_t step = 1; step <= 7; ++step) {
    s.alloc(kA + step * 0x10000, 1000, step % 2 ? a : b);
    s.step(step);
  }
  const auto found = of_kind(s.analyze(), kStepGrowth);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].evidence["bytes_per_step"], 1000u);
}

TEST(Census, ACensusOfChangesReadsAsTheWholeCensus) {
  // The recorder lists only what changed since the previous census (a
  // dataset's tensors, unchanged, are written once): the analyzer rebuilds
  // each census and finds what the whole censuses show. Here a view keeps
  // 4 MiB after its owner lets go at the third of four censuses, while a
  // small storage is listed, unchanged, then freed.
  auto findings_of = [](bool censuses_of_changes) {
    Synth s;
    s.censuses_of_changes = censuses_of_changes;
    s.alloc(kA, 4 << 20);
    s.tensor(1, 1, kA, 4 << 20, 1 << 20);
    s.tensor(2, 1, kA, 4 << 20, 16, kTensorIsView, 1, "aten::slice", s.stack("a.py", 7));
    s.alloc(kB, 4096);
    s.tensor(3, 2, kB, 4096, 1024);
    for (uint64_t step = 1; step <= 4; ++step) {
      s.step(step);
      // The owner lets go after the second census.
      std::vector<Synth::Holder> listed = {
          step <= 2 ? Synth::Holder{1, kA, 4 << 20, 2, {{1, 4 << 20}, {2, 64}}}
                    : Synth::Holder{1, kA, 4 << 20, 1, {{2, 64}}}};
      if (step < 3) listed.push_back({2, kB, 4096, 1, {{3, 4096}}});
      if (step == 3) s.free(kB);
      s.census(step, listed);
    }
    std::vector<std::string> out;
    for (const Finding& f : s.analyze().findings)
      out.push_back(f.kind + " " + std::to_string(f.bytes) + " " + std::to_string(f.count) + " " +
                    f.message);
    return out;
  };
  const auto whole = findings_of(false);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].rfind(kResidualView, 0), 0u) << whole[0];
  EXPECT_EQ(findings_of(true), whole);
}

TEST(UnexplainedHolder, GapAloneIsNoFinding) {
  // Autograd's saved tensors, a Python storage object, a state_dict: torch
  // holds storages in ways memlife does not see, and none of them is a bug.
  Synth s;
  s.alloc(kA, 4096);
  s.tensor(1, 1, kA, 4096, 1024);
  s.step(1);
  s.census(1, {{1, kA, 4096, 3, {{1, 4096}}}});
  EXPECT_TRUE(s.analyze().findings.empty());
}

TEST(UnexplainedHolder, GapIsEvidenceOfTheFindingThatRetainsTheStorage) {
  // One storage, one finding: the unwaited collective keeps its output,
  // and the census's unexplained reference (the Work) is its evidence.
  Synth s;
  s.alloc(kA, 4096);
  s.tensor(1, 1, kA, 4096, 1024);
  s.issue(7, "_c10d_functional::all_gather_into_tensor", {1}, 4096, 0,
          kCollectiveAsync | kCollectiveFunctional);
  s.step(1);
  s.census(1, {{1, kA, 4096, 3, {{1, 4096}}}});
  const ProcessAnalysis p = s.analyze();
  ASSERT_EQ(p.findings.size(), 1u);
  const Finding& f = p.findings[0];
  EXPECT_EQ(f.kind, kUnwaitedCollective);
  EXPECT_EQ(f.bytes, 4096u);
  ASSERT_TRUE(f.evidence.contains("also_seen_as"));
  ASSERT_EQ(f.evidence["also_seen_as"].size(), 1u);
  EXPECT_EQ(f.evidence["also_seen_as"][0]["kind"], kUnexplainedHolder);
  EXPECT_EQ(f.evidence["also_seen_as"][0]["gap"], 2u);
}

TEST(UnexplainedHolder, ExplainedStorageIsClean) {
  Synth s;
  s.alloc(kA, 4096);
  s.tensor(1, 1, kA, 4096, 1024);
  s.tensor(2, 1, kA, 4096, 1024, kTensorAliases, 1);
  s.census(1, {{1, kA, 4096, 2, {{1, 4096}, {2, 4096}}}});
  EXPECT_TRUE(of_kind(s.analyze(), kUnexplainedHolder).empty());
}

TEST(ExpectFreed, StillHeldAtNextCensus) {
  Synth s;
  const uint64_t hold = s.stack("cache.py", 9);
  s.alloc(kA, 4096);
  s.tensor(1, 1, kA, 4096, 1024, 0, 0, "aten::empty", hold);
  s.expect_freed(kA, "activations");
  s.census(1, {{1, kA, 4096, 1, {{1, 4096}}}});
  const auto found = of_kind(s.analyze(), kExpectFreed);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].bytes, 4096u);
  EXPECT_EQ(found[0].evidence["label"], "activations");
  EXPECT_EQ(found[0].evidence["tensors"][0]["stack"][0]["line"], 9);
}

TEST(ExpectFreed, FreedBeforeCensusIsClean) {
  Synth s;
  s.alloc(kA, 4096);
  s.tensor(1, 1, kA, 4096, 1024);
  s.expect_freed(kA, "x");
  s.free(kA);
  s.census(1, {});
  EXPECT_TRUE(of_kind(s.analyze(), kExpectFreed).empty());
}

TEST(ExpectFreed, AliveAtEndWithoutCensus) {
  Synth s;
  s.alloc(kA, 4096);
  s.expect_freed(kA, "x");
  EXPECT_EQ(of_kind(s.analyze(), kExpectFreed).size(), 1u);
}

TEST(LeakedAtExit, TensorMemoryAtExitIsStillReachable) {
  // Module globals are not freed when CPython exits: what is allocated at
  // a clean exit is counted by site in the process entry, not reported.
  Synth s;
  const uint64_t site = s.stack("g.py", 3);
  s.alloc(kA, 100, site);
  s.alloc(kA + 0x1000, 200, site);
  s.alloc(kA + 0x2000, 300, s.stack("h.py", 4));
  s.free(kA + 0x2000);
  const ProcessAnalysis p = s.analyze();
  EXPECT_TRUE(p.findings.empty());
  EXPECT_EQ(p.still_reachable_at_exit["bytes"], 300u);
  EXPECT_EQ(p.still_reachable_at_exit["allocations"], 2u);
  EXPECT_EQ(p.still_reachable_at_exit["top_sites"][0]["site"], "g.py:3 in f");
}

TEST(LeakedAtExit, RawDeviceMemoryNobodyFreedIsLeaked) {
  // A program without a framework allocator (compute-sanitizer's case).
  Synth s = Synth::without_torch();
  s.segment(0x7000000, 1 << 20);  // cudaMalloc, never freed
  s.segment(0x8000000, 1 << 20, false);
  const auto found = of_kind(s.analyze(), kLeakedAtExit);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].bytes, 1u << 20);
  EXPECT_EQ(found[0].evidence["memory"], "raw_device");
}

TEST(LeakedAtExit, RawSegmentsUnderTheCachingAllocatorAreTheFrameworks) {
  // torch's process: cuBLAS/NCCL workspaces and pinned blocks are raw
  // segments nobody frees; counted, not reported.
  Synth s;
  s.segment(0x7000000, 14 << 20);                   // a library's workspace
  s.segment(0x9000000, 2 << 20);                    // the caching allocator's
  s.alloc(0x9000000, 4096, s.stack("m.py", 1), 0);  // block inside it
  const ProcessAnalysis p = s.analyze();
  EXPECT_TRUE(of_kind(p, kLeakedAtExit).empty());
  EXPECT_EQ(p.raw_segment_bytes, 14u << 20);
  EXPECT_EQ(p.cached_segment_bytes, 2u << 20);
}

TEST(StepGrowth, GrowthEverySecondStepIsFound) {
  // A list appended to on every second step (pytorch forum reports of
  // "memory grows slowly"): never three rises in a row, still a leak.
  Synth s;
  const uint64_t site = s.stack("train.py", 30, "train");
  uint64_t address = kA;
  for (uint64_t step = 1; step <= 12; ++step) {
    if (step % 2 == 0) s.alloc(address += 0x10000, 4096, site);
    s.step(step);
  }
  const auto found = of_kind(s.analyze(), kStepGrowth);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].evidence["stacks"][0][0]["line"], 30);
}

TEST(StepGrowth, SitesKeptTogetherAreOneLeakThoughOneStartsAMarkLater) {
  // metric.update(probs, y) keeps both: y is made before the step's mark,
  // probs after it, so probs's site first rises one mark later.
  Synth s;
  const uint64_t target = s.stack("train.py", 36, "main");
  const uint64_t preds = s.stack("train.py", 42, "main");
  uint64_t address = kA;
  for (uint64_t step = 1; step <= 12; ++step) {
    s.alloc(address += 0x10000, 4096, target);
    s.step(step);
    s.alloc(address += 0x10000, 2048, preds);
  }
  const auto found = of_kind(s.analyze(true, {.warmup_steps = 0}), kStepGrowth);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].evidence["sites"].size(), 2u);
}

TEST(StepGrowth, CacheFilledInTheFirstEpochThenFlatIsSteady) {
  // A Dataset memoizing its samples: one per step for the first 16 steps
  // (a third of the run), flat for the 32 after. Rising at a third of the
  // steps, but no longer growing.
  Synth s;
  const uint64_t site = s.stack("data.py", 20, "__getitem__");
  uint64_t address = kA;
  for (uint64_t step = 1; step <= 48; ++step) {
    if (step <= 16) s.alloc(address += 0x10000, 4096, site);
    s.step(step);
  }
  EXPECT_TRUE(of_kind(s.analyze(true, {.warmup_steps = 0}), kStepGrowth).empty());
}

// One allocation per step, all freed after every `cycle` steps for the
// first `cycles` cycles; then `tail` more steps without a release.
ProcessAnalysis accumulate_and_release(uint64_t cycle, uint64_t cycles, uint64_t tail) {
  Synth s;
  const uint64_t site = s.stack("train.py", 24, "main");
  std::vector<uint64_t> live;
  uint64_t address = kA, step = 0;
  for (uint64_t c = 0; c < cycles; ++c) {
    for (uint64_t i = 0; i < cycle; ++i) {
      s.alloc(address += 0x10000, 512, site);
      live.push_back(address);
      s.step(++step);
    }
    for (uint64_t a : live) s.free(a);  // metric.reset() at the epoch's end
    live.clear();
  }
  for (uint64_t i = 0; i < tail; ++i) {
    s.alloc(address += 0x10000, 512, site);
    s.step(++step);
  }
  return s.analyze();
}

TEST(StepGrowth, EpochLevelMetricStateResetEachEpochIsACycle) {
  // torchmetrics' AUROC keeps each batch's predictions until compute() and
  // reset(): 12 steps up, all released, 12 up again, ...
  EXPECT_TRUE(of_kind(accumulate_and_release(12, 2, 12), kStepGrowth).empty());
}

TEST(StepGrowth, GrowthPastAnEarlierReleasedLevelIsALeak) {
  // Released once after 6 steps, then growing for 18: twice the level
  // ever released.
  EXPECT_EQ(of_kind(accumulate_and_release(6, 1, 18), kStepGrowth).size(), 1u);
}

TEST(StepGrowth, StateMadeOnceAndSawtoothAreSteady) {
  Synth s;
  const uint64_t state = s.stack("optim.py", 5, "step");
  const uint64_t batch = s.stack("train.py", 8, "train");
  for (uint64_t step = 1; step <= 12; ++step) {
    if (step == 4) s.alloc(kA, 1 << 20, state);  // optimizer state, once
    if (step % 2 == 0)
      s.alloc(kA + 0x100000, 4096, batch);
    else if (step > 1)
      s.free(kA + 0x100000);
    s.step(step);
  }
  EXPECT_TRUE(of_kind(s.analyze(), kStepGrowth).empty());
}

TEST(StepGrowth, SiteWithoutPythonFrameIsNotJudged) {
  Synth s;
  uint64_t address = kA;
  for (uint64_t step = 1; step <= 10; ++step) {
    s.alloc(address += 0x10000, 4096);  // no stack: cannot be placed
    s.step(step);
  }
  EXPECT_TRUE(of_kind(s.analyze(), kStepGrowth).empty());
}

TEST(StepGrowth, GradientsTheEngineThreadAllocatesTakeTheBackwardCallsStack) {
  // CUDA's autograd engine runs the nodes on its own thread (stream 2),
  // which runs no Python, and the caching allocator's tracker records no
  // stack inside an op: a program keeping each step's gradient (a hook
  // appending it to a list) had growth with no site. The backward call's
  // marks (stream 1) give those allocations its stack; an allocation of
  // that thread outside an engine node, or made while no backward runs,
  // gets none.
  Synth s;
  const uint64_t call =
      s.stack({{"/usr/lib/python3/dist-packages/torch/_tensor.py", 625, "backward"},
               {"train.py", 40, "main"}});
  const std::string node = "autograd::engine::evaluate_function: MmBackward0";
  uint64_t address = kA;
  for (uint64_t step = 1; step <= 8; ++step) {
    s.stream = 1;
    s.label(MEMLIFE_BACKWARD_BEGIN, call);
    s.stream = 2;
    s.in_op(node, [&] { s.alloc(address += 0x10000, 4096, 0, 0, s.str(node)); });
    s.alloc(address += 0x10000, 512, 0, 0);  // outside any node: no stack
    s.stream = 1;
    s.label(MEMLIFE_BACKWARD_END, call);
    s.stream = 2;
    s.in_op(node, [&] { s.alloc(address += 0x10000, 1024, 0, 0, s.str(node)); });  // none open
    s.stream = 1;
    s.step(step);
  }
  const auto found = of_kind(s.analyze(), kStepGrowth);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].evidence["bytes_per_step"], 4096u);
  EXPECT_EQ(found[0].evidence["stacks"][0][1]["line"], 40);
  EXPECT_EQ(found[0].evidence["sites"][0], "train.py:40 in main (autograd node MmBackward0)");
}

TEST(StepGrowth, GrowthInsideBackwardCountsOnlyTheNodeThatGrows) {
  // One `loss.backward()` allocates every gradient under one stack: the
  // parameters' (made again each step, freed by zero_grad) and the one a
  // hook keeps each step. Only the kept node's bytes are the leak's.
  Synth s;
  const uint64_t call = s.stack("train.py", 40, "main");
  const std::string weight_node = "autograd::engine::evaluate_function: AddmmBackward0";
  const std::string kept_node = "autograd::engine::evaluate_function: ReluBackward0";
  uint64_t address = kA;
  for (uint64_t step = 1; step <= 8; ++step) {
    s.free(0x900000);  // zero_grad(set_to_none=True)
    s.in_op(weight_node, [&] { s.alloc(0x900000, 1 << 20, call, -1, s.str(weight_node)); });
    s.in_op(kept_node, [&] { s.alloc(address += 0x10000, 4096, call, -1, s.str(kept_node)); });
    s.step(step);
  }
  const auto found = of_kind(s.analyze(), kStepGrowth);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].bytes, 8u * 4096u);
  EXPECT_EQ(found[0].evidence["sites"].size(), 1u);
  EXPECT_EQ(found[0].evidence["sites"][0], "train.py:40 in main (autograd node ReluBackward0)");
}

TEST(Attribution, LeakSeenByTwoDetectorsIsOneFinding) {
  // A residual view's storage that also grows per step is reported once,
  // as the residual view, with the growth in its evidence.
  Synth s = zero3(false);
  const ProcessAnalysis p = s.analyze();
  EXPECT_EQ(of_kind(p, kResidualView).size(), 1u);
  for (const Finding& f : p.findings) EXPECT_NE(f.kind, kLeakedAtExit);
}

TEST(CollectiveWaits, CollectiveThatCxxIssuedIsNotJudged) {
  // DDP's reducer issues its all-reduces from C++ inside backward and
  // waits them there: the innermost Python frame is torch's own.
  Synth s;
  const uint64_t backward = s.stack("/usr/lib/python3/dist-packages/torch/autograd/graph.py", 829,
                                    "_engine_run_backward");
  s.alloc(kA, 4096);
  s.tensor(1, 1, kA, 4096, 1024);
  s.issue(1, "c10d::allreduce_", {1}, 4096, backward);
  s.op("aten::copy_", {1});
  s.step(1);
  s.step(2);
  const ProcessAnalysis p = s.analyze();
  EXPECT_TRUE(p.findings.empty());
  EXPECT_EQ(p.collectives_waited_by_libraries, 1u);
}

// An async all-reduce of a 4 KiB tensor (id `n`) never waited.
void issue_allreduce(Synth& s, uint64_t n, uint64_t stack_id) {
  const uint64_t address = kA + (n - 1) * 0x10000;
  s.alloc(address, 4096);
  s.tensor(n, n, address, 4096, 1024);
  s.issue(n, "c10d::allreduce_", {n}, 4096, stack_id);
}

// After two steps: one unwaited all-reduce judged, the other left to the
// library that issued it.
void expect_one_judged_one_left_to_a_library(Synth& s) {
  s.step(1);
  s.step(2);
  const ProcessAnalysis p = s.analyze();
  const auto found = of_kind(p, kUnwaitedCollective);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].count, 1u);
  EXPECT_EQ(p.collectives_waited_by_libraries, 1u);
}

TEST(CollectiveWaits, CollectiveALibraryIssuesThroughTheC10dApiIsNotJudged) {
  // DDP inside torch.distributed.algorithms.join.Join: every forward, Join's
  // notify_join_context calls dist.all_reduce(ones, async_op=True) and hands
  // the Work to the reducer, which waits it in C++ or drops it at the next
  // forward. The same call stack under the program's own line is judged.
  Synth s;
  const std::string c10d = "/usr/lib/python3/dist-packages/torch/distributed/";
  const uint64_t join = s.stack({{c10d + "distributed_c10d.py", 2800, "all_reduce"},
                                 {c10d + "c10d_logger.py", 83, "wrapper"},
                                 {c10d + "algorithms/join.py", 330, "notify_join_context"},
                                 {"train.py", 30, "main"}});
  const uint64_t user = s.stack({{c10d + "distributed_c10d.py", 2800, "all_reduce"},
                                 {c10d + "c10d_logger.py", 83, "wrapper"},
                                 {"train.py", 31, "main"}});
  issue_allreduce(s, 1, join);
  issue_allreduce(s, 2, user);
  expect_one_judged_one_left_to_a_library(s);
}

TEST(CollectiveWaits, CollectiveIssuedInsideADdpCommHookIsWaitedByTheReducer) {
  // A DDP communication hook (default_hooks.fp16_compress_hook) issues an
  // async all-reduce from Python and returns its future to the reducer,
  // which waits it in C++. The same call outside a hook is still judged.
  Synth s;
  const uint64_t hook = s.stack(
      "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", 2800, "all_reduce");
  s.label(MEMLIFE_COMM_HOOK_BEGIN);
  issue_allreduce(s, 1, hook);
  s.label(MEMLIFE_COMM_HOOK_END);
  issue_allreduce(s, 2, hook);
  expect_one_judged_one_left_to_a_library(s);
}

TEST(CollectiveWaits, CollectiveFromTheProgramIsStillJudged) {
  Synth s;
  const uint64_t user = s.stack("train.py", 12, "main");
  s.alloc(kA, 4096);
  s.tensor(1, 1, kA, 4096, 1024);
  s.issue(1, "c10d::allreduce_", {1}, 4096, user);
  s.step(1);
  s.step(2);
  EXPECT_EQ(of_kind(s.analyze(), kUnwaitedCollective).size(), 1u);
}

TEST(CollectiveWaits, RawNcclCallIsOrderedByItsStream) {
  // DeepCompile's all-gather: ncclAllGather from a custom op, then work on
  // the same stream and a final synchronize. Not unwaited, no read before.
  Synth s;
  const uint64_t op = s.stack("deepspeed/compile/fx.py", 40, "forward");
  s.alloc(kA, 4096, 0, 0);
  s.tensor(1, 1, kA, 4096, 1024);
  s.issue(1, "nccl:AllGather", {1}, 4096, op, kCollectiveAsync | kCollectiveNccl, "");
  s.op("aten::mm", {1});
  s.step(1);
  s.step(2);
  s.wait(1, {1}, WaitHow::kSynchronize, "cudaDeviceSynchronize");
  EXPECT_TRUE(s.analyze().findings.empty());
}

TEST(CollectiveWaits, SynchronousCallCompletesItsNcclLayer) {
  // broadcast_(async_op=False) at init: the NCCL call inside it is done
  // when the c10d call returns; a read after it is no use before wait.
  Synth s;
  const uint64_t user = s.stack("train.py", 3, "main");
  s.alloc(kA, 4096, 0, 0);
  s.tensor(1, 1, kA, 4096, 1024);
  s.in_op("c10d::broadcast_", [&] {
    s.issue(1, "nccl:Broadcast", {1}, 4096, user, kCollectiveAsync | kCollectiveNccl, "");
    s.issue(2, "c10d::broadcast_", {1}, 4096, user, 0);
  });
  s.op("aten::add_", {1});
  s.step(1);
  s.step(2);
  EXPECT_TRUE(s.analyze().findings.empty());
}

TEST(Truncated, FindingsUpToTheCutAndProcessMarked) {
  Synth s = zero3(false);
  s.alloc(0x777000, 64);
  const ProcessAnalysis p = s.analyze(/*clean_end=*/false);
  EXPECT_TRUE(p.truncated);
  EXPECT_EQ(of_kind(p, kResidualView).size(), 1u);
  EXPECT_TRUE(of_kind(p, kLeakedAtExit).empty());  // it did not exit
  // No end record, no exit status: not the 0 of a clean exit (a rank
  // torchrun killed with SIGTERM read "exit_status": 0 before).
  std::vector<ProcessAnalysis> ps = {p};
  const nlohmann::json r = make_report(ps);
  std::string error;
  ASSERT_TRUE(validate_report(r, error)) << error;
  EXPECT_TRUE(r["processes"][0]["exit_status"].is_null());
  EXPECT_EQ(r["processes"][0]["stop_reason"], "no end record");
}

TEST(Truncated, CutInsideAChunk) {
  Synth s = zero3(false);
  std::vector<uint8_t> data = s.bytes(true);
  data.resize(data.size() - 5);  // tear the last chunk
  std::string error;
  auto reader = format::TraceReader::from_memory(data.data(), data.size(), error);
  ASSERT_TRUE(reader) << error;
  const ProcessAnalysis p = analyze_reader(*reader, {});
  EXPECT_TRUE(p.truncated);
  EXPECT_FALSE(p.stop_reason.empty());
}

TEST(Report, SchemaFieldsAndSortedByWeight) {
  Synth s = zero3(false);
  // A small unwaited collective, sorted after the residual view.
  s.alloc(0x777000, 64);
  s.tensor(9, 9, 0x777000, 64, 16);
  s.issue(9, "_c10d_functional::all_reduce", {9}, 64, 0, kCollectiveAsync | kCollectiveFunctional);
  std::vector<ProcessAnalysis> ps = {s.analyze()};
  const nlohmann::json r = make_report(ps);
  std::string error;
  ASSERT_TRUE(validate_report(r, error)) << error;
  EXPECT_EQ(r["schema_version"], kReportSchemaVersion);
  ASSERT_EQ(r["processes"].size(), 1u);
  const auto& p = r["processes"][0];
  EXPECT_EQ(p["pid"], 4242);
  EXPECT_TRUE(p["rank"].is_null());
  EXPECT_EQ(p["host"], "testhost");
  EXPECT_EQ(p["steps"], 3);
  EXPECT_EQ(p["peak_bytes"], kPadded);  // the buffer was freed before the leak
  EXPECT_EQ(p["truncated"], false);
  EXPECT_EQ(p["exit_status"], 0);
  EXPECT_EQ(p["per_step"].size(), 3u);
  ASSERT_GE(r["findings"].size(), 2u);
  EXPECT_EQ(r["findings"][0]["kind"], kResidualView);
  for (size_t i = 1; i < r["findings"].size(); ++i) {
    auto w = [&](size_t k) {
      const auto& f = r["findings"][k];
      return f["bytes"].get<double>() * std::max<double>(1, f["retained_ns"].get<double>());
    };
    EXPECT_GE(w(i - 1), w(i));
  }
  EXPECT_NE(summary_table(r).find("residual_view"), std::string::npos);
}

}  // namespace
}  // namespace memlife::analysis::testing
