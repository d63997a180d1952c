// memlife trace format, version 4 (2 adds tensor_death, 3 chunk flags, 4 censuses of
// changes). This header is the specification shared by the recording side (lib/preload,
// lib/torch) and the analysis side (lib/analysis, tool/). Encoder and decoder live in
// lib/format.
//
// File layout
// -----------
//   FileHeader (fixed prefix, little endian)
//     u8[8]  magic          "MLTRACE\0"
//     u32    format_version  kFormatVersion of the writer
//     u32    header_bytes    length of the header body that follows
//     body   header fields, encoded like a record payload (see HeaderFields)
//   Chunk*  (until end of file)
//     u32    payload_bytes   bytes of payload that follow the 12-byte prefix
//     u32    crc32c          CRC32C (Castagnoli) of the payload
//     u32    chunk_magic     kChunkMagic, to resynchronise readers and catch
//                            garbage that happens to pass a length check
//     payload:
//       varint stream_id     one stream per recording thread (0 = process)
//       varint chunk_flags   ChunkFlags (version >= 3; absent before)
//       records...           whole records up to the end of the payload
//
// A chunk holds whole records of one stream. Within a stream, records appear
// in the order the thread produced them; delta state (sequence, time,
// pointer) carries over from one chunk of a stream to the next, except that
// a chunk flagged kChunkSync starts from zero state (the recorder resets it
// at each of its 256 KiB blocks), so a reader decodes a stream's chunks in
// file order from any sync chunk on. A chunk whose prefix, length or CRC is
// wrong is skipped: the reader scans for the next chunk magic whose chunk
// checks out, and each stream resumes at its next sync chunk; what it
// skipped is reported (ReadStatus).
//
// Record encoding
// ---------------
//   u8     kind              RecordKind
//   varint seq_delta         global sequence number minus the previous
//                            record's in this stream (first: absolute)
//   svarint time_delta_ns    monotonic ns minus the previous record's (signed:
//                            a record may be stamped just before the one
//                            ahead of it in sequence)
//   fields...                per kind, in the order listed below
//
// "varint" is unsigned LEB128; "svarint" is zig-zag LEB128; "ptr" is an
// svarint delta against the previous ptr field of the same stream; "str"
// is varint length followed by bytes; "list<T>" is varint count then Ts.
//
// The sequence number is one process-wide counter, so merging all streams by
// sequence gives the true order of events across threads (a free on thread
// B of a block allocated on thread A replays after the alloc).
#pragma once

#include <cstdint>

namespace memlife {

inline constexpr char kFileMagic[8] = {'M', 'L', 'T', 'R', 'A', 'C', 'E', '\0'};
inline constexpr uint32_t kChunkMagic = 0x4b43'4c4du;  // "MLCK"
inline constexpr uint32_t kFormatVersion = 4;
// First version whose chunks carry chunk_flags.
inline constexpr uint32_t kChunkFlagsFormatVersion = 3;
// Oldest format version this build still reads.
inline constexpr uint32_t kMinReadableFormatVersion = 1;
inline constexpr uint32_t kFileHeaderPrefixBytes = 16;
inline constexpr uint32_t kChunkPrefixBytes = 12;
// A chunk larger than this is treated as corruption.
inline constexpr uint32_t kMaxChunkPayloadBytes = 64u << 20;

// Header fields, in order:
//   varint producer_version_major, minor, patch
//   varint pid, ppid
//   svarint rank, local_rank, world_size   (-1 when the launcher set none)
//   str    host
//   str    run_id            shared by every process of one `memlife run`
//   str    torch_version     empty when libtorch was not loaded yet
//   varint start_monotonic_ns
//   varint start_wall_ns     CLOCK_REALTIME at the same instant
//   str    command_line      argv joined by spaces

// Each kind's comment below lists its fields in wire order (ptr = svarint
// delta from the stream's last address). The code's one copy of these lists
// is lib/format/record_fields.h (encoder, reader, dump and tests walk it);
// tests/format/spec_test.cc fails when the two disagree.
enum class RecordKind : uint8_t {
  // process: svarint rank, local_rank, world_size; str torch_version; str note.
  // Re-emitted when the rank becomes known (process group init) or when
  // torch is loaded. When torch is loaded the note says what became of the
  // torch plugin: "torch plugin loaded: built for and running torch V", or
  // "torch plugin not loaded: <why>" (none configured; "version mismatch:
  // built for torch B, running torch R"; cannot load; its initialisation
  // failed). The analyzer warns on the latter (torch_plugin_not_loaded).
  // The Python module adds "python hooks installed" (or "... not installed")
  // once it tried to hook Work.wait and init_process_group; a torch process
  // whose plugin saw Python and that never says "installed" is warned about
  // (python_hooks_not_installed).
  kProcess = 1,
  // thread: varint tid; str name.
  kThread = 2,
  // module: str path; varint base; varint size; str build_id (raw bytes).
  // Emitted for every loaded object at start and after each dlopen.
  kModule = 3,
  // string: varint id; str bytes. Ids are process-wide.
  kString = 4,
  // frame: varint id; varint file_string; varint function_string;
  //        varint line. A Python frame. Native frames are raw addresses
  //        inside stacks and are symbolized offline from module records.
  kFrame = 5,
  // stack: varint id; list<varint frame_id> python (innermost first);
  //        list<varint address> native (innermost first).
  kStack = 6,
  // alloc: ptr address; varint bytes; svarint device (-1 = CPU);
  //        varint stream; varint stack_id (0 = none); varint op_string
  //        (innermost open op at the time, 0 = none).
  kAlloc = 7,
  // free: ptr address; varint bytes (0 = unknown); svarint device;
  //       varint phase (FreePhase).
  kFree = 8,
  // segment_alloc / segment_free: ptr address; varint bytes; svarint device;
  //       varint stream.
  kSegmentAlloc = 9,
  kSegmentFree = 10,
  // tensor: varint tensor_id; varint storage_id; varint data_address;
  //         varint storage_bytes; varint storage_offset (elements);
  //         list<svarint> sizes; list<svarint> strides; varint itemsize;
  //         varint dtype_string; svarint device; varint flags (TensorFlags);
  //         varint base_tensor_id (0 = none); varint op_string;
  //         varint stack_id.
  // Written the first time memlife sees a TensorImpl (as an op's output or
  // input) and again when its storage or geometry changed since.
  kTensor = 11,
  // op_begin: varint op_id; varint name_string; varint stack_id;
  //           list<varint> input_tensor_ids.
  kOpBegin = 12,
  // op_end: varint op_id; list<varint> output_tensor_ids.
  kOpEnd = 13,
  // collective_issue: varint collective_id; varint op_string;
  //   varint group_string; varint backend_string; list<varint> input ids;
  //   list<varint> output ids; varint bytes; varint stack_id;
  //   varint nccl_comm; varint nccl_count; varint nccl_datatype;
  //   varint stream; varint send_address; varint recv_address; varint flags.
  kCollectiveIssue = 14,
  // collective_wait: varint collective_id (0 = unknown); varint op_string;
  //   list<varint> tensor_ids; varint stack_id; varint how (WaitHow).
  kCollectiveWait = 15,
  // mark: varint kind (MarkKind); varint step; varint label_string;
  //       varint storage_id; varint address; varint stack_id.
  kMark = 16,
  // census: varint census_id; varint phase (CensusPhase); varint reason
  //         (CensusReason); varint step; varint live_tensors;
  //         varint c10d_unwaited_works (all ones = unknown).
  //   Between its begin and its end, a census lists each storage that live
  //   tensors hold, one census_storage each. A census begun with
  //   kBeginChanges lists only what changed since the previous census of the
  //   same trace: a storage listed there with the same fields and holders is
  //   left out, and one listed there that no live tensor holds any more is
  //   listed with no holders. The recorder begins every 64th census of a
  //   process (the first included) with kBegin, a whole census.
  kCensus = 17,
  // census_storage: varint census_id; varint storage_id;
  //   varint data_address; varint storage_bytes; varint use_count;
  //   svarint device; list<pair<varint tensor_id, varint reachable_bytes>>.
  kCensusStorage = 18,
  // oom: svarint device; varint bytes_requested; varint device_free;
  //      varint device_total.
  kOom = 19,
  // lost: varint records_lost; varint bytes_lost.
  kLost = 20,
  // end: varint exit_status; varint flags (EndFlags). Written on a clean
  //      close only: its absence marks the trace truncated.
  kEnd = 21,
  // tensor_death: varint how (DeathHow); list<varint tensor_id>.
  // Tracked tensors that let go of a storage which lives on (other tensors
  // hold it). Written by the torch plugin when it notices, at most one flush
  // interval (50 ms) after the fact while Python runs its sweep: a death in
  // which the storage dies too is the storage's free and is not written.
  kTensorDeath = 22,
};
inline constexpr uint8_t kMaxRecordKind = 22;

enum ChunkFlags : uint32_t {
  kChunkSync = 1u << 0,  // the first record's deltas start from zero state
};

enum class FreePhase : uint8_t { kFree = 0, kRequested = 1, kCompleted = 2 };

enum TensorFlags : uint32_t {
  kTensorIsView = 1u << 0,   // TensorImpl::is_view()
  kTensorAliases = 1u << 1,  // shares its storage with a tensor seen before
  kTensorRequiresGrad = 1u << 2,
  kTensorFromInput = 1u << 3,  // first seen as an op input, not an output
};

enum CollectiveFlags : uint32_t {
  kCollectiveAsync = 1u << 0,       // returned a Work / async_op=True
  kCollectiveFunctional = 1u << 1,  // _c10d_functional: needs wait_tensor
  kCollectiveNccl = 1u << 2,        // seen at the NCCL entry point
  // A send or receive between two ranks: outside its group's collective
  // order (one rank sends while its peer receives).
  kCollectivePointToPoint = 1u << 3,
};

enum class WaitHow : uint8_t {
  kWaitTensor = 0,   // _c10d_functional::wait_tensor
  kWorkWait = 1,     // Work.wait()
  kStreamWait = 2,   // CUDA stream waited on the collective's event
  kSynchronize = 3,  // device/stream synchronize after the collective
};

enum class MarkKind : uint8_t {
  kStep = 0,         // a step boundary (optimizer step or memlife.mark_step)
  kLabel = 1,        // a free-form label
  kExpectFreed = 2,  // the program says storage_id/address must die soon
  kHolder = 3,       // a Python reference path reaches the storage at address; the
                     // label is the path, then `\n`-separated `file:line`s of the
                     // program lines that store into the path's container.
                     // Address 0: a walk ended, complete when it has no label
                     // (see memlife_holder)
};

enum class DeathHow : uint8_t {
  kDestroyed = 0,      // the TensorImpl was destroyed
  kOnlyViewsBase = 1,  // no Python reference left: only live views' `_base` keeps it
};

enum class CensusReason : uint8_t { kStep = 0, kRequest = 1, kExit = 2 };

// kBeginChanges (format version 4): a census of what changed since the
// previous one (see kCensus). A program's long-lived tensors (a dataset kept
// as a list of tensors) are then written once, not at every step.
enum class CensusPhase : uint8_t { kBegin = 0, kEnd = 1, kBeginChanges = 2 };

enum EndFlags : uint32_t { kEndSignal = 1u << 0 };

}  // namespace memlife
