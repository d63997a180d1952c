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
// Largest record a hook may emit; larger ones are dropped and counted.
inline constexpr size_t kMaxRecordBytes = size_t{64} * 1024;

struct Block {
  std::atomic<Block*> next{nullptr};
  std::atomic<size_t> committed{0};
  size_t capacity = 0;
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
  uint8_t* reserve(size_t max_bytes);
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

  // Writer side: calls `sink(data, bytes)` for every committed and not yet
  // drained byte range, in order, and recycles drained blocks unless `recycle`
  // is false (a fatal-signal handler must not take the pool lock). One
  // drainer at a time: the recorder holds its flush lock.
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
  format::StreamState state_;
  StackTable* stacks_ = nullptr;
  // Producer-owned.
  Block* tail_ = nullptr;
  size_t write_pos_ = 0;
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
      sink(block->data() + drained_, committed - drained_);
      drained_ = committed;
    }
    if (successor == nullptr) return;
    head_ = successor;
    drained_ = 0;
    if (recycle) release_block(block);
  }
}

}  // namespace memlife::rec
