#include "format/trace_builder.h"

#include <fcntl.h>
#include <unistd.h>

#include "format/file_layout.h"

namespace memlife::format {

TraceBuilder::TraceBuilder(const HeaderFields& header)
    : out_(encode_file_header(header)), format_version_(header.format_version) {
  time_ns_ = header.start_monotonic_ns;
}

uint64_t TraceBuilder::stamp(uint64_t time_ns) {
  time_ns_ = time_ns != 0 ? time_ns : time_ns_ + 1000;
  return time_ns_;
}

TraceBuilder::Stream& TraceBuilder::stream_for(uint64_t stream, size_t room) {
  Stream& s = streams_[stream];
  if (s.buffer.size() < s.used + room) s.buffer.resize(s.used + room + 4096);
  return s;
}

void TraceBuilder::maybe_cut(uint64_t stream, Stream& s) {
  if (s.used >= chunk_bytes_) cut(stream);
}

TraceBuilder& TraceBuilder::add_segment(uint64_t stream, bool is_alloc, const SegmentRecord& record,
                                        uint64_t time_ns) {
  Stream& s = stream_for(stream, bound_bytes(record));
  uint8_t* end = encode_segment(s.buffer.data() + s.used, s.state, is_alloc, next_seq(),
                                stamp(time_ns), record);
  s.used = static_cast<size_t>(end - s.buffer.data());
  maybe_cut(stream, s);
  return *this;
}

void TraceBuilder::cut(uint64_t stream, bool new_block) {
  auto it = streams_.find(stream);
  if (it == streams_.end() || it->second.used == 0) return;
  Stream& s = it->second;
  uint8_t prefix[kChunkPrefixBound];
  const size_t prefix_bytes =
      encode_chunk_prefix(prefix, stream, s.sync, s.buffer.data(), s.used, format_version_);
  out_.insert(out_.end(), prefix, prefix + prefix_bytes);
  out_.insert(out_.end(), s.buffer.begin(), s.buffer.begin() + static_cast<long>(s.used));
  s.used = 0;
  // Before chunk flags, deltas carried over every chunk.
  s.sync = new_block && format_version_ >= kChunkFlagsFormatVersion;
  if (s.sync) s.state = StreamState{};
}

std::vector<uint8_t> TraceBuilder::finish(bool clean_end, uint64_t exit_status) {
  if (!finished_) {
    for (auto& [id, s] : streams_) cut(id);
    if (clean_end) {
      add(0, EndRecord{exit_status, 0});
      cut(0);
    }
    finished_ = true;
  }
  return out_;
}

bool TraceBuilder::write_file(const std::string& path, bool clean_end, uint64_t exit_status) {
  const std::vector<uint8_t> bytes = finish(clean_end, exit_status);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const bool ok = write_fully(fd, bytes.data(), bytes.size());
  return (::close(fd) == 0) && ok;
}

}  // namespace memlife::format
