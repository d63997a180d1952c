// Runs recorder_probe under the preload library and reads back what it
// recorded. These tests exercise the real injected library in real child
// processes; they are not built with sanitizers (nothing injected is).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "format/reader.h"
#include "support/traced_child.h"

extern char** environ;

namespace fs = std::filesystem;
using memlife::RecordKind;
using memlife::format::Record;
using memlife::format::TraceReader;

namespace {

struct RunResult {
  int status = 0;  // raw waitpid status
  std::string stderr_text;
  std::vector<fs::path> traces;
};

struct Summary;

class RecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/memlife-recorder-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { fs::remove_all(dir_); }

  RunResult run(std::vector<std::string> args, bool traced = true) {
    args.insert(args.begin(), MEMLIFE_PROBE_PATH);
    memlife::testing::ChildRun child =
        memlife::testing::run_child(traced ? MEMLIFE_PRELOAD_PATH : "", dir_, std::move(args),
                                    {"MEMLIFE_STACKS=none"}, /*capture_fd=*/2);
    return RunResult{child.status, std::move(child.captured), std::move(child.traces)};
  }
  // Runs the probe, which must exit with `status`, and reads its one trace,
  // whose end record must say that status.
  Summary exited_with(std::vector<std::string> args, int status);

  fs::path dir_;
};

struct Summary {
  memlife::format::ReadStatus status;
  uint64_t pid = 0;
  std::map<RecordKind, uint64_t> kinds;
  std::set<uint64_t> alloc_addresses;
  std::set<uint64_t> free_addresses;
  bool every_free_after_its_alloc = true;
  std::vector<std::string> step_labels;
  std::optional<uint64_t> exit_status;  // the end record's
};

Summary read_trace(const fs::path& path) {
  Summary s;
  std::string error;
  auto reader = TraceReader::open(path, error);
  EXPECT_NE(reader, nullptr) << error;
  if (!reader) return s;
  s.pid = reader->header().pid;
  std::map<uint64_t, std::string> strings;
  uint64_t last_seq = 0;
  s.status = reader->for_each([&](const Record& r) {
    EXPECT_GT(r.header.seq, last_seq);
    last_seq = r.header.seq;
    ++s.kinds[r.header.kind];
    if (r.header.kind == RecordKind::kString) strings[r.string.id] = std::string(r.string.bytes);
    if (r.header.kind == RecordKind::kAlloc) s.alloc_addresses.insert(r.alloc.address);
    if (r.header.kind == RecordKind::kFree) {
      if (!s.alloc_addresses.count(r.free.address)) s.every_free_after_its_alloc = false;
      s.free_addresses.insert(r.free.address);
    }
    if (r.header.kind == RecordKind::kMark) s.step_labels.push_back(strings[r.mark.label_string]);
    if (r.header.kind == RecordKind::kEnd) s.exit_status = r.end.exit_status;
    return true;
  });
  return s;
}

Summary RecorderTest::exited_with(std::vector<std::string> args, int status) {
  RunResult r = run(std::move(args));
  EXPECT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), status);
  EXPECT_EQ(r.traces.size(), 1u);
  if (r.traces.size() != 1) return {};
  Summary s = read_trace(r.traces[0]);
  EXPECT_TRUE(s.status.complete);
  EXPECT_EQ(s.exit_status, static_cast<uint64_t>(status));
  return s;
}

TEST_F(RecorderTest, UntracedProcessWritesNothing) {
  RunResult r = run({"idle"}, /*traced=*/true);
  EXPECT_TRUE(WIFEXITED(r.status));
  EXPECT_TRUE(r.traces.empty()) << "a process that records nothing must leave no trace file";
}

TEST_F(RecorderTest, SixteenThreadsLoseNoRecord) {
  constexpr int kThreads = 16;
  // CI records 16 x 100k pairs; MEMLIFE_STRESS_PAIRS=1000000 gives the
  // issue's 16 x 1 M (a minute and ~2 GB of checker memory).
  const char* pairs_env = std::getenv("MEMLIFE_STRESS_PAIRS");
  const long kPairs = pairs_env != nullptr ? std::atol(pairs_env) : 100000;
  RunResult r = run({"threads", std::to_string(kThreads), std::to_string(kPairs)});
  ASSERT_TRUE(WIFEXITED(r.status)) << r.stderr_text;
  ASSERT_EQ(WEXITSTATUS(r.status), 0) << r.stderr_text;
  ASSERT_EQ(r.traces.size(), 1u);
  Summary s = read_trace(r.traces[0]);
  EXPECT_TRUE(s.status.complete);
  EXPECT_FALSE(s.status.damaged) << s.status.stop_reason;
  EXPECT_EQ(s.kinds[RecordKind::kAlloc], uint64_t(kThreads * kPairs));
  EXPECT_EQ(s.kinds[RecordKind::kFree], uint64_t(kThreads * kPairs));
  EXPECT_EQ(s.alloc_addresses.size(), size_t(kThreads * kPairs));
  EXPECT_TRUE(s.every_free_after_its_alloc)
      << "global order lost: a free replayed before its alloc";
  EXPECT_EQ(s.kinds[RecordKind::kLost], 0u);
  EXPECT_GE(s.kinds[RecordKind::kThread], uint64_t(kThreads));
  // The trace is owner-only: it holds paths and stack contents.
  struct stat st {};
  ASSERT_EQ(stat(r.traces[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(RecorderTest, ForkedChildGetsItsOwnTrace) {
  RunResult r = run({"fork"});
  ASSERT_TRUE(WIFEXITED(r.status)) << r.stderr_text;
  ASSERT_EQ(WEXITSTATUS(r.status), 0) << r.stderr_text;
  ASSERT_EQ(r.traces.size(), 2u);
  Summary a = read_trace(r.traces[0]), b = read_trace(r.traces[1]);
  Summary& parent = a.kinds[RecordKind::kAlloc] > b.kinds[RecordKind::kAlloc] ? a : b;
  Summary& child = &parent == &a ? b : a;
  EXPECT_TRUE(parent.status.complete);
  EXPECT_TRUE(child.status.complete);
  EXPECT_FALSE(parent.status.damaged || child.status.damaged);
  EXPECT_EQ(parent.kinds[RecordKind::kAlloc], 200000u);
  EXPECT_EQ(child.kinds[RecordKind::kAlloc], 1000u);
  EXPECT_EQ(parent.step_labels, (std::vector<std::string>{"before-fork", "after-fork"}));
  EXPECT_EQ(child.step_labels, (std::vector<std::string>{"in-child"}));
}

TEST_F(RecorderTest, KilledProcessKeepsWhatWasFlushed) {
  RunResult r = run({"kill"});
  ASSERT_TRUE(WIFSIGNALED(r.status));
  EXPECT_EQ(WTERMSIG(r.status), SIGKILL);
  ASSERT_EQ(r.traces.size(), 1u);
  Summary s = read_trace(r.traces[0]);
  EXPECT_FALSE(s.status.complete) << "no end record after SIGKILL";
  EXPECT_FALSE(s.status.damaged) << s.status.stop_reason;
  EXPECT_EQ(s.kinds[RecordKind::kAlloc], 1000u);
}

TEST_F(RecorderTest, CrashKeepsRecordsUpToTheCrash) {
  RunResult r = run({"segv"});
  ASSERT_TRUE(WIFSIGNALED(r.status)) << "the crash must stay a crash";
  EXPECT_EQ(WTERMSIG(r.status), SIGSEGV);
  ASSERT_EQ(r.traces.size(), 1u);
  Summary s = read_trace(r.traces[0]);
  EXPECT_FALSE(s.status.complete) << "a crashed process is marked truncated";
  EXPECT_FALSE(s.status.damaged) << s.status.stop_reason;
  EXPECT_EQ(s.kinds[RecordKind::kAlloc], 1000u) << "the crash handler flushes what was recorded";
}

TEST_F(RecorderTest, SignalStormDuringRecordingLosesNothing) {
  RunResult r = run({"signals"});
  ASSERT_TRUE(WIFEXITED(r.status)) << r.stderr_text;
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  ASSERT_EQ(r.traces.size(), 1u);
  Summary s = read_trace(r.traces[0]);
  EXPECT_TRUE(s.status.complete);
  EXPECT_EQ(s.kinds[RecordKind::kAlloc], 4u * 50000u);
}

TEST_F(RecorderTest, ModulesAreReportedAgainAfterDlopen) {
  RunResult r = run({"dlopen"});
  ASSERT_TRUE(WIFEXITED(r.status)) << r.stderr_text;
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  ASSERT_EQ(r.traces.size(), 1u);
  std::string error;
  auto reader = TraceReader::open(r.traces[0], error);
  ASSERT_NE(reader, nullptr) << error;
  std::set<std::string> modules;
  reader->for_each([&](const Record& rec) {
    if (rec.header.kind == RecordKind::kModule) {
      modules.insert(fs::path(std::string(rec.module.path)).filename().string());
      EXPECT_GT(rec.module.size, 0u);
    }
    return true;
  });
  EXPECT_TRUE(modules.count("libz.so.1"))
      << "a library loaded while recording gets a module record";
  EXPECT_TRUE(modules.count("recorder_probe"));
}

TEST_F(RecorderTest, ALibraryFindsItsSiblingThroughItsOwnSearchPath) {
  // dlopen("libcaller_search_sibling.so") from a library whose RUNPATH
  // (or RPATH) is $ORIGIN/sibling, as cuDNN 9 opens its sub-libraries:
  // found without memlife; under the dlopen interposer the loader took the
  // preload library for the caller and failed ("cannot open shared object
  // file"), or found another copy elsewhere (the H200 image's older cuDNN).
  for (const char* loader : {MEMLIFE_CALLER_SEARCH_RUNPATH, MEMLIFE_CALLER_SEARCH_RPATH}) {
    for (bool traced : {false, true}) {
      RunResult r = run({"sibling", loader}, traced);
      ASSERT_TRUE(WIFEXITED(r.status)) << r.stderr_text;
      EXPECT_EQ(WEXITSTATUS(r.status), 0)
          << loader << (traced ? " traced: " : ": ") << r.stderr_text;
    }
  }
}

TEST_F(RecorderTest, UnderscoreExitClosesTheTrace) {
  const Summary s = exited_with({"exit_"}, 5);
  EXPECT_EQ(s.kinds.at(RecordKind::kAlloc), 1000u);
}

// exit(N) tells atexit handlers nothing; the analyzer needs N to know the
// process failed (a rank that gave up skipped no collective).
TEST_F(RecorderTest, ExitStatusReachesTheEndRecord) { exited_with({"exit7"}, 7); }

TEST_F(RecorderTest, FullDiskWarnsOnceAndKeepsTheProgramRunning) {
  RunResult r = run({"disk_full"});
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  size_t warnings = 0;
  for (size_t at = r.stderr_text.find("trace is incomplete"); at != std::string::npos;
       at = r.stderr_text.find("trace is incomplete", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 1u) << r.stderr_text;
  ASSERT_EQ(r.traces.size(), 1u);
  Summary s = read_trace(r.traces[0]);
  EXPECT_GT(s.kinds[RecordKind::kAlloc], 0u) << "what fit on disk stays readable";
  EXPECT_LT(s.kinds[RecordKind::kAlloc], 200000u);
}

}  // namespace
