#include "gpu/stream_waits.h"

namespace memlife::gpu {

void StreamWaitTable::lock() const {
  while (busy_.test_and_set(std::memory_order_acquire)) {
  }
}
void StreamWaitTable::unlock() const { busy_.clear(std::memory_order_release); }

StreamWaitTable::Stream* StreamWaitTable::find_stream(uint64_t handle, bool create) {
  const size_t start = (handle >> 4) % kStreams;
  for (size_t i = 0; i < kStreams; ++i) {
    Stream& s = streams_[(start + i) % kStreams];
    if (s.used && s.handle == handle) return &s;
    if (!s.used) {
      if (!create) return nullptr;
      s = Stream();
      s.used = true;
      s.handle = handle;
      return &s;
    }
  }
  if (!create) return nullptr;
  // Full: reuse the home slot; what it remembered is forgotten.
  Stream& s = streams_[start];
  s = Stream();
  s.used = true;
  s.handle = handle;
  return &s;
}

size_t StreamWaitTable::release_up_to(Stream& s, uint64_t upto, uint64_t* out, size_t max) {
  if (upto > s.issued) upto = s.issued;
  // Ids older than the ring were overwritten: they cannot be named.
  if (s.issued > kRing && s.released < s.issued - kRing) s.released = s.issued - kRing;
  size_t n = 0;
  while (s.released < upto && n < max) {
    out[n++] = s.ids[s.released % kRing];
    ++s.released;
  }
  return n;
}

void StreamWaitTable::note_collective(uint64_t stream, uint64_t collective_id) {
  lock();
  if (Stream* s = find_stream(stream, true)) {
    s->ids[s->issued % kRing] = collective_id;
    ++s->issued;
  }
  unlock();
}

void StreamWaitTable::note_event_record(uint64_t event, uint64_t stream) {
  lock();
  Stream* s = find_stream(stream, false);
  const size_t start = (event >> 4) % kEvents;
  Event* slot = &events_[start];
  for (size_t i = 0; i < kEvents; ++i) {
    Event& e = events_[(start + i) % kEvents];
    if (!e.used || e.handle == event) {
      slot = &e;
      break;
    }
  }
  if (s == nullptr) {
    // An event on a stream with no collective: it releases nothing, and a
    // re-recorded event must forget what it covered before.
    // Keep the slot (probe chains stay intact) but make it cover nothing.
    if (slot->used && slot->handle == event) slot->issued_at_record = 0;
  } else {
    slot->used = true;
    slot->handle = event;
    slot->stream_slot = static_cast<uint32_t>(s - streams_);
    slot->issued_at_record = s->issued;
  }
  unlock();
}

size_t StreamWaitTable::on_event_waited(uint64_t event, uint64_t* out, size_t max) {
  size_t n = 0;
  lock();
  const size_t start = (event >> 4) % kEvents;
  for (size_t i = 0; i < kEvents; ++i) {
    Event& e = events_[(start + i) % kEvents];
    if (!e.used) break;
    if (e.handle == event) {
      n = release_up_to(streams_[e.stream_slot], e.issued_at_record, out, max);
      break;
    }
  }
  unlock();
  return n;
}

size_t StreamWaitTable::on_stream_synchronized(uint64_t stream, uint64_t* out, size_t max) {
  size_t n = 0;
  lock();
  if (Stream* s = find_stream(stream, false)) n = release_up_to(*s, s->issued, out, max);
  unlock();
  return n;
}

size_t StreamWaitTable::on_device_synchronized(uint64_t* out, size_t max) {
  size_t n = 0;
  lock();
  for (Stream& s : streams_) {
    if (s.used) n += release_up_to(s, s.issued, out + n, max - n);
  }
  unlock();
  return n;
}

size_t StreamWaitTable::pending() const {
  size_t n = 0;
  lock();
  for (const Stream& s : streams_) {
    if (s.used) n += static_cast<size_t>(s.issued - s.released);
  }
  unlock();
  return n;
}

void StreamWaitTable::clear() {
  lock();
  for (Stream& s : streams_) s.used = false;
  for (Event& e : events_) e.used = false;
  unlock();
}

StreamWaitTable& stream_waits() {
  static StreamWaitTable table;
  return table;
}

}  // namespace memlife::gpu
