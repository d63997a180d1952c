// The gate: default kinds, --fail-on, --max-bytes, suppressions, baseline,
// JUnit, and the exit codes of `memlife check` itself.
#include "analysis/check.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "analysis/report.h"
#include "synthetic.h"

namespace memlife::analysis::testing {
namespace {

nlohmann::json finding(const std::string& kind, uint64_t bytes, const std::string& file,
                       const std::string& function, int64_t rank = 0) {
  return {{"kind", kind},
          {"severity", default_severity(kind)},
          {"bytes", bytes},
          {"count", 1},
          {"retained_ns", 10},
          {"pid", 7},
          {"rank", rank},
          {"message", kind + " at " + file},
          {"evidence", {{"stacks", {{{{"file", file}, {"line", 3}, {"function", function}}}}}}}};
}

nlohmann::json report(std::vector<nlohmann::json> findings) {
  return {
      {"schema_version", 1}, {"processes", {{{"pid", 7}, {"rank", 0}}}}, {"findings", findings}};
}

TEST(Gate, DefaultFailsErrorsAndWarnsOthers) {
  const auto r =
      report({finding(kResidualView, 100, "a.py", "f"), finding(kLeakedAtExit, 100, "b.py", "g"),
              finding(kUnexplainedHolder, 100, "c.py", "h")});
  const GateResult g = apply_gate(r, {});
  EXPECT_EQ(g.failures, 1u);
  EXPECT_EQ(g.warnings, 2u);
  EXPECT_EQ(g.exit_code(), 1);
}

TEST(Gate, FailOnAndMaxBytes) {
  const auto r =
      report({finding(kResidualView, 100, "a.py", "f"), finding(kLeakedAtExit, 5000, "b.py", "g")});
  GateOptions o;
  std::string error;
  ASSERT_TRUE(parse_fail_kinds("leaked_at_exit", o.fail_kinds, error));
  EXPECT_EQ(apply_gate(r, o).failures, 1u);
  o.max_bytes = 5000;
  EXPECT_EQ(apply_gate(r, o).failures, 0u);
  std::set<std::string> k;
  EXPECT_FALSE(parse_fail_kinds("residual,step_growth", k, error));
  EXPECT_NE(error.find("residual"), std::string::npos);
  k.clear();
  ASSERT_TRUE(parse_fail_kinds("none", k, error));
  GateOptions none;
  none.fail_kinds = k;
  EXPECT_EQ(apply_gate(r, none).failures, 0u);
}

TEST(Suppressions, ParseAndMatchFrames) {
  std::vector<Suppression> rules;
  std::string error;
  ASSERT_TRUE(parse_suppressions("# known\nresidual_view:*registry*  # zero3\n\n*:leaky_fn\n",
                                 rules, error))
      << error;
  ASSERT_EQ(rules.size(), 2u);
  GateOptions o;
  o.suppressions = rules;
  const auto r = report({finding(kResidualView, 1, "/x/registry.py", "release"),
                         finding(kStepGrowth, 1, "t.py", "leaky_fn"),
                         finding(kStepGrowth, 1, "t.py", "other")});
  const GateResult g = apply_gate(r, o);
  EXPECT_EQ(g.verdicts[0], Verdict::kSuppressed);
  EXPECT_EQ(g.verdicts[1], Verdict::kSuppressed);
  EXPECT_EQ(g.verdicts[2], Verdict::kFail);
}

TEST(Suppressions, MalformedLinesAreOneLineErrors) {
  std::vector<Suppression> rules;
  std::string error;
  EXPECT_FALSE(parse_suppressions("residual_view\n", rules, error));
  EXPECT_NE(error.find("line 1"), std::string::npos);
  EXPECT_FALSE(parse_suppressions("ok:\n", rules, error));
  EXPECT_FALSE(parse_suppressions("\nnot_a_kind:foo\n", rules, error));
  EXPECT_NE(error.find("line 2"), std::string::npos);
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(Baseline, OnlyNewFindingsFail) {
  const auto old_finding = finding(kResidualView, 100, "a.py", "f");
  GateOptions o;
  o.has_baseline = true;
  o.baseline.insert(finding_fingerprint(old_finding));
  auto moved = old_finding;
  moved["evidence"]["stacks"][0][0]["line"] = 99;  // an unrelated edit moved it
  const auto r = report({moved, finding(kResidualView, 100, "b.py", "f")});
  const GateResult g = apply_gate(r, o);
  EXPECT_EQ(g.verdicts[0], Verdict::kInBaseline);
  EXPECT_EQ(g.verdicts[1], Verdict::kFail);
}

TEST(JUnit, OneCasePerKindPerProcess) {
  const auto r = report({finding(kResidualView, 100, "a.py", "f")});
  const std::string xml = junit_xml(r, apply_gate(r, {}));
  size_t cases = 0;
  for (size_t p = 0; (p = xml.find("<testcase ", p)) != std::string::npos; ++p) ++cases;
  EXPECT_EQ(cases, all_finding_kinds().size());
  EXPECT_NE(xml.find("name=\"residual_view\">\n      <failure"), std::string::npos) << xml;
  EXPECT_NE(xml.find("failures=\"1\""), std::string::npos);
}

TEST(JUnit, SuitesAreNamedByRankNeverByPid) {
  auto r = report({finding(kResidualView, 100, "a.py", "f")});
  const std::string first = junit_xml(r, apply_gate(r, {}));
  r["processes"][0]["pid"] = 8;  // the next CI run
  r["findings"][0]["pid"] = 8;
  EXPECT_EQ(junit_xml(r, apply_gate(r, {})), first);
  EXPECT_NE(first.find("classname=\"memlife.rank 0\""), std::string::npos) << first;
  EXPECT_EQ(first.find("pid"), std::string::npos) << first;
}

TEST(Fingerprint, SameFindingInAnotherRunOrCheckoutHasTheSameFingerprint) {
  const auto a = finding(kResidualView, 100, "/home/ci/run1/train.py", "step");
  auto b = finding(kResidualView, 4096, "/builds/run2/train.py", "step", 3);
  b["pid"] = 99;
  b["evidence"]["stacks"][0][0]["line"] = 120;
  // Library frames (torch's own) do not place a finding in the program.
  b["evidence"]["stacks"][0].push_back(
      {{"file", "/usr/lib/python3/site-packages/torch/nn/modules/module.py"},
       {"line", 1},
       {"function", "_call_impl"}});
  EXPECT_EQ(finding_fingerprint(a), finding_fingerprint(b));
  EXPECT_EQ(finding_fingerprint(a).size(), 16u);
  EXPECT_NE(finding_fingerprint(a),
            finding_fingerprint(finding(kResidualView, 100, "train.py", "evaluate")));
  EXPECT_NE(finding_fingerprint(a),
            finding_fingerprint(finding(kStepGrowth, 100, "train.py", "step")));
}

TEST(Report, ErrorsFirstThenBytesWithSummaryAndFingerprints) {
  ProcessAnalysis p;
  p.rank = 0;
  auto add = [&](const char* kind, uint64_t bytes, uint64_t retained_ns) {
    Finding f;
    f.kind = kind;
    f.severity = default_severity(kind);
    f.bytes = bytes;
    f.retained_ns = retained_ns;
    p.findings.push_back(f);
  };
  add(kUnexplainedHolder, 16 * 1024, 1'000'000'000);  // a warning held long
  add(kResidualView, 1024, 1);
  add(kStepGrowth, 1200 * 1024, 1);
  const auto r = make_report({p});
  std::vector<std::string> order;
  for (const auto& f : r["findings"]) {
    order.push_back(f["kind"]);
    EXPECT_TRUE(f["fingerprint"].is_string());
  }
  EXPECT_EQ(order, (std::vector<std::string>{kStepGrowth, kResidualView, kUnexplainedHolder}));
  EXPECT_EQ(r["summary"]["findings"], 3);
  EXPECT_EQ(r["summary"]["by_severity"]["error"], 2);
  EXPECT_EQ(r["summary"]["by_severity"]["warning"], 1);
  EXPECT_EQ(r["summary"]["by_kind"][kStepGrowth], 1);
}

TEST(Report, RanksForPeople) {
  EXPECT_EQ(ranks_text({{"rank", 1}}, 2), "1");
  EXPECT_EQ(ranks_text({{"rank", nullptr}}, 2), "-");
  EXPECT_EQ(ranks_text({{"rank", nullptr}, {"ranks", {0, 1}}}, 2), "all (2)");
  EXPECT_EQ(ranks_text({{"rank", nullptr}, {"ranks", {0, 2}}}, 4), "0,2");
}

// The executable: exit codes 0, 1 and 2.
class CheckCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("memlife_check_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  static int run(const std::string& args) {
    const int status =
        std::system((std::string(MEMLIFE_BIN) + " check " + args + " 2>/dev/null").c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::filesystem::path dir_;
};

TEST_F(CheckCli, HelpListsTheExitCodes) {
  const std::string out = (dir_ / "help.txt").string();
  ASSERT_EQ(std::system((std::string(MEMLIFE_BIN) + " check --help > " + out).c_str()), 0);
  std::ifstream in(out);
  const std::string help((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* code : {"0 no finding fails", "1 a finding fails", "2 usage error"})
    EXPECT_NE(help.find(code), std::string::npos) << help;
  EXPECT_NE(help.find("--accept-incomplete"), std::string::npos) << help;
}

TEST_F(CheckCli, ExitCodes) {
  const auto failing =
      write("fail.json", report({finding(kResidualView, 100, "a.py", "f")}).dump());
  const auto clean = write("clean.json", report({finding(kLeakedAtExit, 100, "a.py", "f")}).dump());
  EXPECT_EQ(run(failing), 1);
  EXPECT_EQ(run(clean), 0);
  EXPECT_EQ(run(clean + " --fail-on leaked_at_exit"), 1);
  EXPECT_EQ(run(failing + " --fail-on bogus"), 2);
  EXPECT_EQ(run(write("bad.json", "{not json")), 2);
  EXPECT_EQ(run(write("shape.json", "{\"schema_version\":1}")), 2);
  EXPECT_EQ(run((dir_ / "missing.json").string()), 2);
  const auto sup = write("s.supp", "residual_view:a.py\n");
  EXPECT_EQ(run(failing + " --suppressions " + sup), 0);
  EXPECT_EQ(run(failing + " --suppressions " + write("bad.supp", "garbage\n")), 2);
  EXPECT_EQ(run(failing + " --baseline " + failing), 0);
  EXPECT_EQ(run(failing + " --baseline " + clean), 1);
  const auto junit = (dir_ / "j.xml").string();
  EXPECT_EQ(run(failing + " --junit " + junit), 1);
  EXPECT_TRUE(std::filesystem::exists(junit));
}

TEST_F(CheckCli, AnalyzesTraceFolders) {
  Synth s;
  s.alloc(0x1000, 64);
  s.tensor(1, 1, 0x1000, 64, 16);
  s.issue(1, "c10d::allreduce_", {1}, 64);
  std::filesystem::create_directories(dir_ / "run");
  ASSERT_TRUE(s.builder().write_file((dir_ / "run" / "p1.mltrace").string()));
  EXPECT_EQ(run((dir_ / "run").string()), 1);
  // The all-reduce's output is its finding, not also a leak at exit.
  EXPECT_EQ(run((dir_ / "run").string() + " --fail-on leaked_at_exit"), 0);
  std::filesystem::create_directories(dir_ / "empty");
  EXPECT_EQ(run((dir_ / "empty").string()), 2);
}

}  // namespace
}  // namespace memlife::analysis::testing
