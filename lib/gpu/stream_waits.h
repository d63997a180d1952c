// Which NCCL collectives a CUDA-level wait covers. NCCL returns as soon as
// a collective is enqueued on its stream; the program "waits" for it by
// recording an event on that stream and then making another stream wait on
// the event (or synchronizing). This table follows exactly that chain, so
// the trace can say which collective each wait released.
//
// Fixed-size and allocation-free: it is touched from CUPTI callbacks and
// NCCL hooks, under a tiny spinlock. Tables that overflow drop the oldest
// state (a lost wait is reported as "never waited", never as a crash).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace memlife::gpu {

class StreamWaitTable {
 public:
  static constexpr size_t kStreams = 64;
  static constexpr size_t kRing = 256;  // collectives remembered per stream
  static constexpr size_t kEvents = 1024;
  static constexpr size_t kMaxReleased = kRing * 4;

  // A collective was enqueued on `stream`.
  void note_collective(uint64_t stream, uint64_t collective_id);
  // `event` was recorded on `stream`: it completes after every collective
  // enqueued there so far.
  void note_event_record(uint64_t event, uint64_t stream);
  // A stream waited on / the host synchronized on `event`. Writes the ids
  // of the collectives it released (each at most once) and returns how many.
  size_t on_event_waited(uint64_t event, uint64_t* out, size_t max);
  // The host synchronized `stream`: every collective on it is released.
  size_t on_stream_synchronized(uint64_t stream, uint64_t* out, size_t max);
  // Device/context synchronize: every collective on every stream.
  size_t on_device_synchronized(uint64_t* out, size_t max);
  // Collectives enqueued and not released yet (all streams).
  size_t pending() const;
  void clear();

 private:
  struct Stream {
    uint64_t handle = 0;
    bool used = false;
    uint64_t issued = 0;    // collectives enqueued so far
    uint64_t released = 0;  // all below this index are released
    uint64_t ids[kRing] = {};
  };
  struct Event {
    uint64_t handle = 0;
    bool used = false;
    uint32_t stream_slot = 0;
    uint64_t issued_at_record = 0;
  };
  Stream* find_stream(uint64_t handle, bool create);
  size_t release_up_to(Stream& s, uint64_t upto, uint64_t* out, size_t max);
  void lock() const;
  void unlock() const;

  mutable std::atomic_flag busy_ = ATOMIC_FLAG_INIT;
  Stream streams_[kStreams];
  Event events_[kEvents];
};

// The process-wide table the NCCL hooks and CUPTI callbacks share.
StreamWaitTable& stream_waits();

}  // namespace memlife::gpu
