#include "preload/thread_buffer.h"

#include <sys/mman.h>

#include <mutex>
#include <new>

namespace memlife::rec {
namespace {

// Recycled standard-size blocks. The lock is taken once per block switch
// (every kBlockBytes of records), never per record.
std::mutex g_pool_mutex;
Block* g_pool = nullptr;
std::atomic<size_t> g_in_flight{0};

Block* map_block(size_t capacity) {
  void* memory = ::mmap(nullptr, sizeof(Block) + capacity, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return nullptr;
  auto* block = new (memory) Block();
  block->capacity = capacity;
  return block;
}

}  // namespace

Block* acquire_block(size_t min_capacity) {
  Block* block = nullptr;
  if (min_capacity <= kBlockBytes) {
    std::lock_guard<std::mutex> lock(g_pool_mutex);
    if (g_pool != nullptr) {
      block = g_pool;
      g_pool = block->next.load(std::memory_order_relaxed);
    }
  }
  if (block == nullptr) block = map_block(min_capacity <= kBlockBytes ? kBlockBytes : min_capacity);
  if (block == nullptr) return nullptr;
  block->next.store(nullptr, std::memory_order_relaxed);
  block->committed.store(0, std::memory_order_relaxed);
  block->sync_count.store(0, std::memory_order_relaxed);
  g_in_flight.fetch_add(1, std::memory_order_relaxed);
  return block;
}

void release_block(Block* block) {
  g_in_flight.fetch_sub(1, std::memory_order_relaxed);
  if (block->capacity == kBlockBytes) {
    std::lock_guard<std::mutex> lock(g_pool_mutex);
    block->next.store(g_pool, std::memory_order_relaxed);
    g_pool = block;
    return;
  }
  ::munmap(block, sizeof(Block) + block->capacity);
}

void lock_pool_for_fork() { g_pool_mutex.lock(); }
void unlock_pool_after_fork() { g_pool_mutex.unlock(); }

size_t blocks_in_flight() { return g_in_flight.load(std::memory_order_relaxed); }

ThreadWriter::ThreadWriter(uint64_t stream_id, uint64_t tid) : stream_id_(stream_id), tid_(tid) {
  tail_ = head_ = acquire_block(kBlockBytes);
}

void ThreadWriter::mark_sync_point() {
  const uint32_t n = tail_->sync_count.load(std::memory_order_relaxed);
  if (n == kMaxSyncPoints) {
    next_sync_ = ~size_t{0};
    return;
  }
  state_ = format::StreamState{};
  tail_->sync_offsets[n] = static_cast<uint32_t>(write_pos_);
  tail_->sync_count.store(n + 1, std::memory_order_release);
  next_sync_ = write_pos_ + kSyncBytes;
}

uint8_t* ThreadWriter::reserve_slow(size_t max_bytes) {
  Block* fresh = acquire_block(max_bytes);
  if (fresh == nullptr) {
    dropping_ = true;
    saved_state_ = state_;
    return overflow_;
  }
  tail_->next.store(fresh, std::memory_order_release);
  tail_ = fresh;
  write_pos_ = 0;
  next_sync_ = kSyncBytes;
  // Each block starts from zero delta state: its first chunk is a sync
  // point a reader can resume at after a damaged chunk.
  state_ = format::StreamState{};
  return tail_->data();
}

}  // namespace memlife::rec
