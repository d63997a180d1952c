// Runs the NCCL probes (which call the NCCL test double) under the preload
// library and checks the collective_issue records it wrote, and that every
// call still reached the "real" NCCL.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
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

struct Issue {
  std::string op, group, backend;
  uint64_t bytes, comm, count, datatype, stream, send, recv, flags;
};

struct Traced {
  int exit_status = -1;
  std::string stdout_text;
  std::vector<Issue> issues;
  std::vector<std::string> labels;
  bool clean = false;
};

class NcclInterposeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/memlife-nccl-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Traced run(std::vector<std::string> args) {
    memlife::testing::ChildRun child = memlife::testing::run_child(
        MEMLIFE_PRELOAD_PATH, dir_, std::move(args), {"MEMLIFE_STACKS=native"}, /*capture_fd=*/1);
    Traced t;
    t.exit_status = WIFEXITED(child.status) ? WEXITSTATUS(child.status) : -1;
    t.stdout_text = std::move(child.captured);
    for (const fs::path& trace : child.traces) read(trace, t);
    EXPECT_EQ(child.traces.size(), 1u);
    return t;
  }

  static void read(const fs::path& path, Traced& t) {
    std::string error;
    auto reader = TraceReader::open(path, error);
    ASSERT_NE(reader, nullptr) << error;
    std::map<uint64_t, std::string> strings;
    bool ended = false;
    auto status = reader->for_each([&](const Record& r) {
      switch (r.header.kind) {
        case RecordKind::kString:
          strings[r.string.id] = std::string(r.string.bytes);
          break;
        case RecordKind::kCollectiveIssue: {
          const auto& c = r.collective_issue;
          t.issues.push_back({strings[c.op_string], strings[c.group_string],
                              strings[c.backend_string], c.bytes, c.nccl_comm, c.nccl_count,
                              c.nccl_datatype, c.stream, c.send_address, c.recv_address, c.flags});
          break;
        }
        case RecordKind::kMark:
          t.labels.push_back(strings[r.mark.label_string]);
          break;
        case RecordKind::kEnd:
          ended = true;
          break;
        default:
          break;
      }
      return true;
    });
    t.clean = status.complete && !status.damaged && ended;
  }

  fs::path dir_;
};

const Issue* find(const Traced& t, const std::string& op) {
  for (const Issue& i : t.issues)
    if (i.op == op) return &i;
  return nullptr;
}

TEST_F(NcclInterposeTest, EveryEntryPointIsRecordedAndForwarded) {
  Traced t = run({NCCL_PROBE_PATH, "direct"});
  ASSERT_EQ(t.exit_status, 0);
  EXPECT_TRUE(t.clean);
  // Seven collectives reached the double: memlife forwarded each one.
  EXPECT_EQ(t.stdout_text, "calls=7\n");
  ASSERT_EQ(t.issues.size(), 7u);

  const Issue* ag = find(t, "nccl:AllGather");
  ASSERT_NE(ag, nullptr);
  EXPECT_EQ(ag->send, 0x1000u);
  EXPECT_EQ(ag->recv, 0x2000u);
  EXPECT_EQ(ag->count, 1024u);
  EXPECT_EQ(ag->datatype, 7u);            // ncclFloat32
  EXPECT_EQ(ag->bytes, 1024u * 4u * 2u);  // gathered from 2 ranks
  EXPECT_EQ(ag->stream, 0x11u);
  EXPECT_EQ(ag->backend, "nccl");
  EXPECT_NE(ag->group.find("rank 1/2"), std::string::npos) << ag->group;
  EXPECT_TRUE(ag->flags & memlife::kCollectiveNccl);
  EXPECT_NE(ag->comm, 0u);

  const Issue* rs = find(t, "nccl:ReduceScatter");
  ASSERT_NE(rs, nullptr);
  EXPECT_EQ(rs->bytes, 512u * 2u * 2u);  // bf16, input of 2 shards
  const Issue* ar = find(t, "nccl:AllReduce");
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(ar->bytes, 800u);  // 100 int64
  EXPECT_EQ(ar->stream, 0x22u);
  ASSERT_NE(find(t, "nccl:Broadcast"), nullptr);
  EXPECT_EQ(find(t, "nccl:Reduce")->bytes, 64u);  // 8 float64
  const Issue* send = find(t, "nccl:Send");
  ASSERT_NE(send, nullptr);
  EXPECT_EQ(send->send, 0x7000u);
  EXPECT_EQ(send->recv, 0u);
  EXPECT_EQ(send->bytes, 64u);  // 32 float16
  EXPECT_EQ(find(t, "nccl:Recv")->recv, 0x7100u);
  for (const Issue& i : t.issues) EXPECT_EQ(i.comm, ag->comm) << i.op;

  // Communicator lifetime is visible as labels: one InitRank, two from
  // InitAll, one destroy.
  int inits = 0, destroys = 0;
  for (const auto& l : t.labels) {
    if (l.rfind("nccl_comm_init", 0) == 0) ++inits;
    if (l.rfind("nccl_comm_destroy", 0) == 0) ++destroys;
  }
  EXPECT_EQ(inits, 3);
  EXPECT_EQ(destroys, 1);
}

TEST_F(NcclInterposeTest, NcclLoadedLocallyThroughALibraryIsStillInterposed) {
  // As in Python: libtorch_cuda (here nccl_user) is dlopened RTLD_LOCAL and
  // pulls in libnccl, which RTLD_NEXT cannot see from the preload.
  Traced t = run({NCCL_DLOPEN_PROBE_PATH, "dlopen", NCCL_USER_PATH});
  ASSERT_EQ(t.exit_status, 0);
  EXPECT_TRUE(t.clean);
  EXPECT_EQ(t.stdout_text, "calls=6\n");
  ASSERT_EQ(t.issues.size(), 6u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(t.issues[i].op, "nccl:AllGather");
    EXPECT_EQ(t.issues[i].bytes, 256u * 4u * 4u);  // 4 ranks
    EXPECT_NE(t.issues[i].group.find("rank 3/4"), std::string::npos) << t.issues[i].group;
  }
  EXPECT_EQ(t.issues[5].op, "nccl:AllReduce");
  EXPECT_EQ(t.issues[5].bytes, 20u);  // 10 bf16
}

}  // namespace
