// The incomplete-recording warnings: one per cause and process, named by the
// one list of kinds, and found again by that list in a report's warnings.
// (tests/analysis/e2e/test_incomplete.py makes each from a real recording.)
#include "analysis/incomplete.h"

#include <gtest/gtest.h>

#include "analysis/analyze.h"
#include "analysis/report.h"

namespace memlife::analysis::testing {
namespace {

ProcessAnalysis process(uint64_t pid) {
  ProcessAnalysis p;
  p.path = "p" + std::to_string(pid) + ".mltrace";
  p.header.pid = pid;
  return p;
}

TEST(Incomplete, CompleteProcessHasNoWarning) {
  ProcessAnalysis p = process(1);
  p.plugin_note = "torch plugin loaded: built for and running torch 2.15.0";
  EXPECT_TRUE(incomplete_warnings({p}).empty());
  EXPECT_TRUE(make_report({p})["warnings"].empty());
}

TEST(Incomplete, EachCauseIsNamed) {
  ProcessAnalysis plugin = process(1), cut = process(2), damaged = process(3), lost = process(4);
  plugin.plugin_note = "torch plugin not loaded: none configured";
  cut.truncated = true;
  cut.damaged = true;
  cut.stop_reason = "truncated chunk (10 of 400 payload bytes)";
  damaged.truncated = damaged.damaged = true;
  damaged.stop_reason = "chunk CRC mismatch";
  lost.records_lost = 3;
  lost.rank = 1;
  const auto warnings = incomplete_warnings({plugin, cut, damaged, lost});
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_STREQ(incomplete_kind_of(warnings[0]), "torch_plugin_not_loaded");
  EXPECT_STREQ(incomplete_kind_of(warnings[1]), "truncated_trace");
  EXPECT_STREQ(incomplete_kind_of(warnings[2]), "damaged_trace");
  EXPECT_STREQ(incomplete_kind_of(warnings[3]), "records_lost");
  EXPECT_NE(warnings[3].find("3 records lost (pid 4, rank 1, p4.mltrace)"), std::string::npos)
      << warnings[3];
  // The report carries them ahead of the caller's own warnings.
  const auto report = make_report({lost}, {}, {"left out 1 trace(s) of run 'x'"});
  ASSERT_EQ(report["warnings"].size(), 2u);
  EXPECT_STREQ(incomplete_kind_of(report["warnings"][0].get<std::string>()), "records_lost");
  EXPECT_EQ(incomplete_kind_of(report["warnings"][1].get<std::string>()), nullptr);
}

TEST(Incomplete, RanksWithoutATraceAreNamedPerRun) {
  ProcessAnalysis r0 = process(1), r2 = process(2), other = process(3), launcher = process(4);
  r0.rank = 0, r2.rank = 2, other.rank = 0;
  r0.world_size = r2.world_size = 3;
  other.world_size = 1;
  r0.header.run_id = r2.header.run_id = "a";
  other.header.run_id = "b";
  const auto warnings = incomplete_warnings({launcher, r0, r2, other});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "missing_trace: no trace of rank 1 of 3 (run a)");
  EXPECT_STREQ(incomplete_kind_of(warnings[0]), "missing_trace");
}

TEST(Incomplete, ABlockOfOneRankMissesNoOtherRank) {
  // Under torchrun each rank runs its own memlife.record() block and
  // analyzes its own trace: rank 0's block is complete without rank 1's.
  ProcessAnalysis r0 = process(1);
  r0.rank = 0, r0.world_size = 2, r0.header.run_id = "a";
  r0.block = 1;
  EXPECT_TRUE(incomplete_warnings({r0}).empty());
  r0.block = 0;
  ASSERT_EQ(incomplete_warnings({r0}).size(), 1u);
}

TEST(Incomplete, KindsAreOneList) {
  for (const IncompleteKind& k : incomplete_kinds())
    EXPECT_STREQ(incomplete_kind_of(std::string(k.name) + ": x"), k.name);
  EXPECT_EQ(incomplete_kind_of("no_such_kind: x"), nullptr);
}

}  // namespace
}  // namespace memlife::analysis::testing
