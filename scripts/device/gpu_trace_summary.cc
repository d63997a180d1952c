// gpu_trace_summary TRACE [--from LABEL] [--to LABEL] [--events OUT.json]
// Summarises the GPU side of one trace as JSON on stdout: raw device
// segments still live at exit (framework-free leak check), caching-allocator
// events, NCCL collectives and the CUDA waits that released them. With
// --from/--to only records between two memlife_mark labels count (the
// oracle window); --events writes alloc/free counts per "address:size".
// Depends on the trace reader only, so it builds where the analyzer's
// dependencies are missing.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "format/reader.h"

using memlife::RecordKind;
using memlife::format::Record;
using memlife::format::TraceReader;

namespace {

std::string key(uint64_t address, uint64_t bytes) {
  return std::to_string(address) + ":" + std::to_string(bytes);
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gpu_trace_summary TRACE [--from L] [--to L] [--events OUT]\n");
    return 2;
  }
  std::string from, to, events_path;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--from"))
      from = argv[i + 1];
    else if (!std::strcmp(argv[i], "--to"))
      to = argv[i + 1];
    else if (!std::strcmp(argv[i], "--events"))
      events_path = argv[i + 1];
  }
  std::string error;
  auto reader = TraceReader::open(argv[1], error);
  if (!reader) {
    std::fprintf(stderr, "gpu_trace_summary: %s\n", error.c_str());
    return 1;
  }
  std::map<uint64_t, std::string> strings;
  std::map<uint64_t, std::pair<uint64_t, int64_t>> live_segments;  // address -> bytes, device
  uint64_t segment_allocs = 0, segment_frees = 0;
  std::map<std::string, uint64_t> allocs, frees_requested, frees_completed;
  uint64_t alloc_count = 0, free_req_count = 0, free_done_count = 0, ooms = 0;
  std::map<std::string, uint64_t> issues_by_op, waits_by_how;
  std::map<uint64_t, std::pair<std::string, uint64_t>> nccl_issued;  // id -> op, bytes
  std::set<uint64_t> waited;
  uint64_t torch_collectives = 0, torch_waits = 0;
  bool ended = false, in_window = from.empty();
  auto status = reader->for_each([&](const Record& r) {
    switch (r.header.kind) {
      case RecordKind::kString:
        strings[r.string.id] = std::string(r.string.bytes);
        return true;
      case RecordKind::kMark:
        if (!from.empty() && strings[r.mark.label_string] == from) in_window = true;
        if (!to.empty() && strings[r.mark.label_string] == to) in_window = false;
        return true;
      case RecordKind::kEnd:
        ended = true;
        return true;
      case RecordKind::kSegmentAlloc:
        // Raw segments are judged over the whole run (leak at exit).
        ++segment_allocs;
        live_segments[r.segment.address] = {r.segment.bytes, r.segment.device};
        return true;
      case RecordKind::kSegmentFree:
        ++segment_frees;
        live_segments.erase(r.segment.address);
        return true;
      default:
        break;
    }
    if (!in_window) return true;
    switch (r.header.kind) {
      case RecordKind::kAlloc:
        if (r.alloc.device >= 0) {
          ++allocs[key(r.alloc.address, r.alloc.bytes)];
          ++alloc_count;
        }
        break;
      case RecordKind::kFree:
        if (r.free.device < 0) break;
        if (r.free.phase == memlife::FreePhase::kRequested) {
          ++frees_requested[key(r.free.address, r.free.bytes)];
          ++free_req_count;
        } else {
          ++frees_completed[key(r.free.address, r.free.bytes)];
          ++free_done_count;
        }
        break;
      case RecordKind::kOom:
        ++ooms;
        break;
      case RecordKind::kCollectiveIssue: {
        const auto& c = r.collective_issue;
        const std::string op = strings[c.op_string];
        ++issues_by_op[op];
        if (c.flags & memlife::kCollectiveNccl)
          nccl_issued[c.collective_id] = {op, c.bytes};
        else
          ++torch_collectives;
        break;
      }
      case RecordKind::kCollectiveWait: {
        const auto& w = r.collective_wait;
        static const char* kHow[] = {"wait_tensor", "work_wait", "stream_wait", "synchronize"};
        const auto how = static_cast<unsigned>(w.how);
        ++waits_by_how[how < 4 ? kHow[how] : "other"];
        if (nccl_issued.count(w.collective_id))
          waited.insert(w.collective_id);
        else
          ++torch_waits;
        break;
      }
      default:
        break;
    }
    return true;
  });
  uint64_t leaked_bytes = 0, leaked_device_count = 0, leaked_device_bytes = 0;
  for (const auto& [address, s] : live_segments) {
    leaked_bytes += s.first;
    if (s.second >= 0) {
      ++leaked_device_count;
      leaked_device_bytes += s.first;
    }
  }
  uint64_t unwaited = 0, unwaited_bytes = 0;
  for (const auto& [id, issue] : nccl_issued) {
    if (!waited.count(id)) {
      ++unwaited;
      unwaited_bytes += issue.second;
    }
  }
  std::printf("{\"trace\": \"%s\", \"ended\": %s, \"read_ok\": %s,\n", json_escape(argv[1]).c_str(),
              ended ? "true" : "false", !status.damaged ? "true" : "false");
  std::printf(
      " \"segments\": {\"allocs\": %llu, \"frees\": %llu, \"live_at_exit\": %zu, "
      "\"live_at_exit_bytes\": %llu, \"live_device_at_exit\": %llu, "
      "\"live_device_at_exit_bytes\": %llu},\n",
      (unsigned long long)segment_allocs, (unsigned long long)segment_frees, live_segments.size(),
      (unsigned long long)leaked_bytes, (unsigned long long)leaked_device_count,
      (unsigned long long)leaked_device_bytes);
  std::printf(
      " \"allocator\": {\"alloc\": %llu, \"free_requested\": %llu, \"free_completed\": "
      "%llu, \"oom\": %llu},\n",
      (unsigned long long)alloc_count, (unsigned long long)free_req_count,
      (unsigned long long)free_done_count, (unsigned long long)ooms);
  std::printf(" \"collectives\": {");
  const char* sep = "";
  for (const auto& [op, n] : issues_by_op) {
    std::printf("%s\"%s\": %llu", sep, json_escape(op).c_str(), (unsigned long long)n);
    sep = ", ";
  }
  std::printf("},\n \"waits\": {");
  sep = "";
  for (const auto& [how, n] : waits_by_how) {
    std::printf("%s\"%s\": %llu", sep, how.c_str(), (unsigned long long)n);
    sep = ", ";
  }
  std::printf(
      "},\n \"nccl\": {\"issued\": %zu, \"waited_at_cuda_level\": %zu, \"unwaited\": %llu, "
      "\"unwaited_bytes\": %llu}, \"torch_collectives\": %llu, \"torch_waits\": %llu}\n",
      nccl_issued.size(), waited.size(), (unsigned long long)unwaited,
      (unsigned long long)unwaited_bytes, (unsigned long long)torch_collectives,
      (unsigned long long)torch_waits);
  if (!events_path.empty()) {
    std::ofstream out(events_path);
    auto dump = [&](const char* name, const std::map<std::string, uint64_t>& m, bool last) {
      out << "\"" << name << "\": {";
      const char* s = "";
      for (const auto& [k, n] : m) {
        out << s << "\"" << k << "\": " << n;
        s = ", ";
      }
      out << "}" << (last ? "" : ", ");
    };
    out << "{";
    dump("alloc", allocs, false);
    dump("free_requested", frees_requested, false);
    dump("free_completed", frees_completed, true);
    out << "}\n";
  }
  return 0;
}
