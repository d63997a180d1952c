// Small helpers the detectors share.
#pragma once

#include <string>
#include <vector>

#include "analysis/finding.h"
#include "analysis/model.h"
#include "analysis/stacks.h"

namespace memlife::analysis {

// Step marks in (after.seq, until.seq]: how many step boundaries a piece of
// memory survived between two points.
inline uint64_t steps_between(const Model& m, const When& after, const When& until) {
  uint64_t n = 0;
  for (const StepMark& s : m.steps)
    if (s.at.seq > after.seq && s.at.seq <= until.seq) ++n;
  return n;
}

// Device memory that no tensor record and no holder walk ever named: the
// CUDA libraries' workspaces (cuBLAS takes one per handle and stream from
// torch's allocator on its first matmul and keeps it), the allocator's own.
inline bool library_buffer(const Model& m, const Allocation& a) {
  return a.device >= 0 && a.storage_id == 0 && !m.holder_of_alloc.contains(a.at.seq);
}

// Bytes held over the half-open sequence interval [begin, end).
struct HeldInterval {
  uint64_t begin = 0, end = 0, bytes = 0;
};
// The most bytes held at once by a set of intervals.
uint64_t peak_held_bytes(const std::vector<HeldInterval>& intervals);

// What keeps a holder path's memory: the path up to its first container
// key or autograd/exception link (`__main__._KEEP[3].grad_fn<...>._saved_x`
// -> `__main__._KEEP`): one leak, however many sites fed it.
std::string container_of(const std::string& path);

// Fills a finding about allocations still held at the end (leaked_by_block,
// leaked_at_exit): count, bytes, retains, retained_ns, and evidence
// `allocations` (the first 64 made), `stacks` of the 8 sites that hold the
// most (role "allocation") and `steps` (the first allocation's). Returns
// what the message names: the line of the site that holds the most and
// how many other sites there are.
struct HeldSites {
  std::string lead_line;
  size_t other_sites = 0;
};
HeldSites describe_held_allocations(const Model& m, StackResolver& stacks,
                                    std::vector<const Allocation*> allocations, Finding& f);

// Length of the union of byte ranges.
uint64_t union_bytes(std::vector<ByteRange> ranges);

}  // namespace memlife::analysis
