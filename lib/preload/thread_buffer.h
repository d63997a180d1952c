// Per-thread record buffers: a singly linked list of blocks that one
// producer thread appends to and the writer thread drains. The producer
// never takes a lock to append a record; it publishes each record with a
// release store of the block's committed length. Blocks come from mmap,
// never from malloc, so recording is safe inside allocation paths.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "format/encoder.h"

namespace memlife::rec {

inline constexpr size_t kBlockBytes = size_t{256} * 1024;
// Every this many bytes of a block, the producer resets its delta state and
// notes the offset: the writer starts a sync chunk there, so a reader that
// meets a damaged chunk loses at most this much of the stream after it.
inline constexpr size_t kSyncBytes = size_t{16} * 1024;
inline constexpr uint32_t kMaxSyncPoints = 32;
// Largest record a hook may emit; larger ones are dropped and counted.
inline constexpr size_t kMaxRecordBytes = size_t{64} * 1024;

struct Block {
  std::atomic<Block*> next{nullptr};
  std::atomic<size_t> committed{0};
  size_t capacity = 0;
  // Offsets after 0 where a record starts from zero delta state; published
  // by the count (release) before the record there is committed.
  std::atomic<uint32_t> sync_count{0};
  uint32_t sync_offsets[kMaxSyncPoints] = {};
  uint8_t* data() { return reinterpret_cast<uint8_t*>(this + 1); }
};

// Returns a block with at least `min_capacity` bytes (recycled or mapped),
// or null when the system has no memory left.
Block* acquire_block(size_t min_capacity);
void release_block(Block* block);
// Blocks handed out and not yet released: how far the writer lags.
size_t blocks_in_flight();

class StackTable;

class ThreadWriter {
 public:
  ThreadWriter(uint64_t stream_id, uint64_t tid);
  // False when no first block could be mapped: do not use the writer.
  bool usable() const { return tail_ != nullptr; }

  // Producer side.
  uint8_t* reserve(size_t max_bytes) {
    if (tail_->capacity - write_pos_ < max_bytes) return reserve_slow(max_bytes);
    if (write_pos_ >= next_sync_) mark_sync_point();
    return tail_->data() + write_pos_;
  }
  void commit(uint8_t* end) {
    if (dropping_) {
      // The record went to the overflow area: forget it, including the delta
      // state its encoding advanced, so the stream still decodes.
      state_ = saved_state_;
      dropping_ = false;
      ++records_dropped;
      return;
    }
    write_pos_ = static_cast<size_t>(end - tail_->data());
    tail_->committed.store(write_pos_, std::memory_order_release);
  }
  format::StreamState& state() { return state_; }
  StackTable*& stacks() { return stacks_; }

  // Writer side: calls `sink(data, bytes, sync)` for every committed and not
  // yet drained byte range, in order, one range per stretch between sync
  // points (`sync`: the range opens a block or starts at a sync point, so its
  // first record starts from zero delta state), and recycles drained blocks
  // unless `recycle` is false (a fatal-signal handler must not take the pool
  // lock). One drainer at a time: the recorder holds its flush lock.
  template <typename Sink>
  void drain(Sink&& sink, bool recycle = true);

  uint64_t stream_id() const { return stream_id_; }
  uint64_t tid() const { return tid_; }
  std::atomic<bool> exited{false};
  ThreadWriter* next_registered = nullptr;
  uint64_t records_dropped = 0;

 private:
  uint64_t stream_id_;
  uint64_t tid_;
  uint8_t* reserve_slow(size_t max_bytes);
  void mark_sync_point();

  format::StreamState state_;
  StackTable* stacks_ = nullptr;
  // Producer-owned.
  Block* tail_ = nullptr;
  size_t write_pos_ = 0;
  size_t next_sync_ = kSyncBytes;
  // Writer-owned.
  Block* head_ = nullptr;
  size_t drained_ = 0;
  // Fallback when no block can be had: records land here and are dropped.
  bool dropping_ = false;
  format::StreamState saved_state_;
  alignas(64) uint8_t overflow_[kMaxRecordBytes];
};

template <typename Sink>
void ThreadWriter::drain(Sink&& sink, bool recycle) {
  while (head_ != nullptr) {
    Block* block = head_;
    // Read `next` before the final committed length: once the producer has
    // linked a successor it never writes this block again.
    Block* successor = block->next.load(std::memory_order_acquire);
    const size_t committed = block->committed.load(std::memory_order_acquire);
    if (committed > drained_) {
      // One chunk per stretch between sync points; a stretch that starts at
      // one (or at the block's start) is a sync chunk.
      const uint32_t syncs = block->sync_count.load(std::memory_order_acquire);
      bool sync = drained_ == 0;
      for (uint32_t i = 0; i < syncs; ++i) {
        const size_t at = block->sync_offsets[i];
        if (at < drained_) continue;
        if (at == drained_) {
          sync = true;
          continue;
        }
        if (at >= committed) break;
        sink(block->data() + drained_, at - drained_, sync);
        drained_ = at;
        sync = true;
      }
      sink(block->data() + drained_, committed - drained_, sync);
      drained_ = committed;
    }
    if (successor == nullptr) return;
    head_ = successor;
    drained_ = 0;
    if (recycle) release_block(block);
  }
}

}  // namespace memlife::rec
