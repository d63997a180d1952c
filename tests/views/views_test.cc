// Unit tests of the views' building blocks, against traces written with
// TraceBuilder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "format/trace_builder.h"
#include "views/html_report.h"
#include "views/perfetto.h"
#include "views/pickle_writer.h"
#include "views/script_json.h"
#include "views/torch_snapshot.h"
#include "views/trace_timeline.h"
#include "views/utf8.h"

namespace memlife::views {
namespace {

using format::AllocRecord;
using format::FreeRecord;
using format::MarkRecord;
using format::SegmentRecord;
using nlohmann::json;

constexpr uint64_t kMs = 1'000'000;

std::string temp_trace(const std::string& name, format::TraceBuilder& b, bool clean = true) {
  const std::string path =
      ::testing::TempDir() + "/" + name + "-" + std::to_string(getpid()) + ".mltrace";
  EXPECT_TRUE(b.write_file(path, clean));
  return path;
}

format::HeaderFields header() {
  format::HeaderFields h;
  h.pid = 77;
  h.start_monotonic_ns = 10 * kMs;
  return h;
}

TEST(Utf8, ReplacesInvalidSequencesOnly) {
  EXPECT_EQ(valid_utf8("plain"), "plain");
  EXPECT_EQ(valid_utf8("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(valid_utf8("a\xff"
                       "b"),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(valid_utf8("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");                  // overlong '/'
  EXPECT_EQ(valid_utf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // surrogate
  EXPECT_EQ(valid_utf8("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");                  // cut short
}

TEST(ScriptJson, NothingCanCloseTheScriptElement) {
  const json j = {{"file", "</script><script>alert(1)</script>&<!--"},
                  {"sep",
                   "a\xe2\x80\xa8"
                   "b\xe2\x80\xa9"}};
  const std::string text = script_safe_json(j);
  EXPECT_EQ(text.find('<'), std::string::npos);
  EXPECT_EQ(text.find('>'), std::string::npos);
  EXPECT_EQ(text.find('&'), std::string::npos);
  EXPECT_EQ(text.find("\xe2\x80\xa8"), std::string::npos);
  EXPECT_NE(text.find("\\u2028"), std::string::npos);
  // Still the same data once parsed.
  EXPECT_EQ(json::parse(text), j);
}

TEST(PickleWriter, EncodesIntegersAtEveryWidth) {
  PickleWriter w;
  w.integer(5);          // K
  w.integer(300);        // M
  w.integer(-1);         // J
  w.integer(1ll << 40);  // LONG1, 6 bytes
  w.unsigned_integer(~0ull);
  const std::string p = w.finish();
  EXPECT_EQ(p.substr(0, 2), std::string("\x80\x02", 2));
  EXPECT_EQ(p.substr(2, 2), std::string("K\x05", 2));
  EXPECT_EQ(p.substr(4, 3), std::string("M\x2c\x01", 3));
  EXPECT_EQ(p.substr(7, 5), std::string("J\xff\xff\xff\xff", 5));
  EXPECT_EQ(p.substr(12, 8), std::string("\x8a\x06\x00\x00\x00\x00\x00\x01", 8));
  EXPECT_EQ(p.substr(20, 11), std::string("\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00", 11));
  EXPECT_EQ(p.back(), '.');
}

TEST(Downsample, KeepsThePeakOfEveryBucket) {
  std::vector<BytesPoint> points;
  for (uint64_t i = 0; i < 10000; ++i) points.push_back({i, i == 6789 ? 1'000'000 : i % 7});
  const auto out = downsample_keep_peaks(points, 100);
  EXPECT_LE(out.size(), 102u);
  uint64_t peak = 0;
  for (const auto& p : out) peak = std::max(peak, p.bytes);
  EXPECT_EQ(peak, 1'000'000u);
  EXPECT_EQ(downsample_keep_peaks(points, 20000).size(), points.size());
}

TEST(Timeline, FollowsLiveAndReservedBytesPerDevice) {
  format::TraceBuilder b(header());
  b.add_segment(0, true, SegmentRecord{0x7000, 1 << 20, 0, 0}, 11 * kMs);
  b.add(0, AllocRecord{0x7000, 4096, 0, 0, 0, 0}, 12 * kMs);
  b.add(0, AllocRecord{0x100, 100, -1, 0, 0, 0}, 13 * kMs);
  b.add(0, MarkRecord{MarkKind::kStep, 1, 0, 0, 0, 0}, 14 * kMs);
  b.add(0, FreeRecord{0x7000, 0, 0, FreePhase::kRequested}, 15 * kMs);
  b.add(0, FreeRecord{0x7000, 4096, 0, FreePhase::kCompleted}, 16 * kMs);
  const std::string path = temp_trace("timeline", b, /*clean=*/false);
  TraceTimeline t;
  std::string error;
  ASSERT_TRUE(load_timeline(path, TimelineOptions{.keep_events = true}, t, error)) << error;
  EXPECT_TRUE(t.truncated);
  ASSERT_EQ(t.devices.size(), 2u);
  EXPECT_EQ(t.devices[0].device, -1);
  EXPECT_EQ(t.devices[0].peak_live, 100u);
  EXPECT_FALSE(t.devices[0].has_segments);
  const DeviceTimeline& cuda = t.devices[1];
  EXPECT_TRUE(cuda.has_segments);
  EXPECT_EQ(cuda.peak_live, 4096u);
  EXPECT_EQ(cuda.live.back().bytes, 0u);
  EXPECT_EQ(cuda.live.back().t_ns, 5 * kMs);  // dropped at the request
  EXPECT_EQ(cuda.peak_reserved, 1u << 20);
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].t_ns, 4 * kMs);
  // One alloc plus requested and completed for the CUDA block; one alloc on CPU.
  EXPECT_EQ(t.events.size(), 5u);
  ASSERT_EQ(t.live_blocks.size(), 1u);
  EXPECT_EQ(t.live_blocks[0].addr, 0x100u);
  ASSERT_EQ(t.live_segments.size(), 1u);
  unlink(path.c_str());
}

TEST(Timeline, RejectsAFileThatIsNotATrace) {
  TraceTimeline t;
  std::string error;
  EXPECT_FALSE(load_timeline("/nonexistent/x.mltrace", TimelineOptions{}, t, error));
  EXPECT_NE(error.find("/nonexistent/x.mltrace"), std::string::npos);
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(FindingTimes, StepsMapToTheirSpans) {
  TraceTimeline t;
  t.end_ns = 100;
  t.steps = {{1, 10}, {2, 20}, {3, 30}};
  EXPECT_EQ(finding_time_range(t, {{"evidence", {{"steps", {2, 2}}}}}).begin_ns, 20u);
  EXPECT_EQ(finding_time_range(t, {{"evidence", {{"steps", {2, 2}}}}}).end_ns, 30u);
  EXPECT_EQ(finding_time_range(t, {{"evidence", {{"steps", {1, 3}}}}}).end_ns, 100u);
  EXPECT_EQ(finding_time_range(t, {{"evidence", {{"steps", json::array()}}}}).begin_ns, 100u);
}

TEST(FindingTimes, FindingWithoutStepsCoversItsRetainedIntervalToTheEnd) {
  TraceTimeline t;
  t.end_ns = 100;
  const TimeRange r = finding_time_range(t, {{"retained_ns", 30}, {"evidence", json::object()}});
  EXPECT_EQ(r.begin_ns, 70u);
  EXPECT_EQ(r.end_ns, 100u);
}

TEST(Timeline, WorkStartsAtTheFirstAllocationOrOp) {
  format::TraceBuilder b(header());
  b.add(0, format::ThreadRecord{1, "python3"}, 11 * kMs);  // the interpreter starting
  b.add(0, AllocRecord{0x100, 100, -1, 0, 0, 0}, 40 * kMs);
  b.add(0, FreeRecord{0x100, 100, -1, FreePhase::kFree}, 50 * kMs);
  const std::string path = temp_trace("work-start", b);
  TraceTimeline t;
  std::string error;
  ASSERT_TRUE(load_timeline(path, TimelineOptions{}, t, error)) << error;
  EXPECT_EQ(t.work_start_ns, 30 * kMs);
  unlink(path.c_str());
}

TEST(Timeline, StacksTheSitesThatPeakHighestOnTheBusiestDevice) {
  format::TraceBuilder b(header());
  const auto stack = [&](uint64_t id, uint64_t line) {
    b.add(0, format::StringRecord{id, "train.py"});
    b.add(0, format::FrameRecord{id, id, 0, line});
    const std::vector<uint64_t> py = {id}, native;
    b.add(0, format::StackRecord{id, format::list_of<uint64_t>(py),
                                 format::list_of<uint64_t>(native)});
  };
  stack(1, 10);
  stack(2, 20);
  stack(3, 30);
  b.add(0, AllocRecord{0x100, 1000, -1, 0, 3, 0}, 11 * kMs);  // CPU: not the busiest
  b.add(0, AllocRecord{0x7000, 4096, 0, 0, 1, 0}, 12 * kMs);
  b.add(0, AllocRecord{0x9000, 8192, 0, 0, 2, 0}, 13 * kMs);
  b.add(0, FreeRecord{0x7000, 4096, 0, FreePhase::kFree}, 14 * kMs);
  const std::string path = temp_trace("stacked", b);
  TraceTimeline t;
  std::string error;
  ASSERT_TRUE(load_timeline(path, TimelineOptions{.stacked_sites = 1}, t, error)) << error;
  ASSERT_EQ(t.stacked_sites.size(), 1u);
  EXPECT_EQ(t.stacked_sites[0].device, 0);
  EXPECT_EQ(t.stacked_sites[0].peak_bytes, 8192u);
  ASSERT_FALSE(t.stacked_sites[0].frames.empty());
  EXPECT_EQ(t.stacked_sites[0].frames[0].line, 20u);
  ASSERT_EQ(t.stacked_sites[0].live.size(), 1u);
  EXPECT_EQ(t.stacked_sites[0].live[0].bytes, 8192u);
  unlink(path.c_str());
}

TEST(HtmlReport, BusiestProcessComesFirst) {
  TraceTimeline launcher, rank;
  launcher.header.pid = 1;
  rank.header.pid = 2;
  DeviceTimeline cpu;
  cpu.peak_live = 4096;
  rank.devices.push_back(cpu);
  const json data = report_page_data({launcher, rank}, json(), HtmlOptions{});
  EXPECT_EQ(data["processes"][0]["pid"], 2u);
  EXPECT_EQ(data["processes"][1]["pid"], 1u);
}

TEST(HtmlReport, SaysWhatTheReportJudgedNoLeak) {
  // Growth set aside and memory still reachable at exit go to their
  // process's section (by pid); a process the report names without a trace
  // still gets one.
  TraceTimeline traced;
  traced.header.pid = 7;
  const json set_aside = json::array({{{"why", "bounded"}, {"bytes", 4096}}});
  const json reachable = {{"bytes", 100}, {"allocations", 1}, {"top_sites", json::array()}};
  const json report = {
      {"processes",
       {{{"pid", 8}, {"growth_set_aside", json::array()}},
        {{"pid", 7}, {"growth_set_aside", set_aside}, {"still_reachable_at_exit", reachable}}}},
      {"findings", json::array()}};
  const json data = report_page_data({traced}, report, HtmlOptions{});
  ASSERT_EQ(data["processes"].size(), 2u);
  const json& seven =
      data["processes"][0]["pid"] == 7u ? data["processes"][0] : data["processes"][1];
  EXPECT_EQ(seven["growth_set_aside"], set_aside);
  EXPECT_EQ(seven["still_reachable_at_exit"], reachable);
  const json& eight =
      data["processes"][0]["pid"] == 8u ? data["processes"][0] : data["processes"][1];
  EXPECT_TRUE(eight.value("missing_trace", false));
}

TEST(HtmlReport, EmbedsDataOnlyInTheJsonBlock) {
  format::HeaderFields h = header();
  h.host = "<img src=x onerror=alert(1)>";
  format::TraceBuilder b(h);
  b.add(0, AllocRecord{0x100, 100, -1, 0, 0, 0});
  const std::string path = temp_trace("html", b);
  TraceTimeline t;
  std::string error;
  ASSERT_TRUE(load_timeline(path, TimelineOptions{}, t, error)) << error;
  const json report = {{"processes", json::array()},
                       {"findings",
                        {{{"kind", "leaked_at_exit"},
                          {"severity", "warning"},
                          {"bytes", 100},
                          {"pid", 77},
                          {"message", "</script><script>alert(2)</script>"}}}}};
  const std::string page = html_report({t}, report, HtmlOptions{});
  EXPECT_EQ(page.find("<img src=x"), std::string::npos);
  EXPECT_EQ(page.find("alert(2)</script>"), std::string::npos);
  EXPECT_EQ(page.find("/*MEMLIFE_DATA*/"), std::string::npos);
  // Nothing is fetched: no external script, style sheet or URL.
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  const json data = report_page_data({t}, report, HtmlOptions{});
  EXPECT_EQ(data["processes"][0]["host"], "<img src=x onerror=alert(1)>");
  EXPECT_EQ(data["findings"][0]["time_range_ns"][0], t.end_ns);
  unlink(path.c_str());
}

}  // namespace
}  // namespace memlife::views
