// Small helpers the detectors share.
#pragma once

#include <string>
#include <vector>

#include "analysis/model.h"

namespace memlife::analysis {

// Step marks in (after.seq, until.seq]: how many step boundaries a piece of
// memory survived between two points.
inline uint64_t steps_between(const Model& m, const When& after, const When& until) {
  uint64_t n = 0;
  for (const StepMark& s : m.steps)
    if (s.at.seq > after.seq && s.at.seq <= until.seq) ++n;
  return n;
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

// Length of the union of byte ranges.
uint64_t union_bytes(std::vector<ByteRange> ranges);

}  // namespace memlife::analysis
