// leaked_by_block: memory a `memlife.record()` block allocated and still
// holds when the block ends, as pytest-memray's limit_leaks counts a
// test's leaks. Only with `--block N`: the replay stops at the block's end
// mark, which the Python side writes after a garbage collection and a
// holder walk, so what is still allocated there is held by something the
// block left behind (a global list, a cache, a hook, a view), and the
// holder walk names it. One finding per holder (see container_of); memory
// another finding explains (a residual view, an unwaited collective) goes to that
// finding instead (attribution). Memory an import made (a module-level
// constant of a library the block imported first, torchmetrics'
// `_EPS_SMOOTHING = tensor(1e-16)`) is the module's state for the rest of
// the process, as any later import would find it: not the block's leak.
#include <algorithm>
#include <map>

#include "analysis/detector.h"
#include "analysis/detectors/util.h"

namespace memlife::analysis {
namespace {

// Whether the allocation ran inside an import: CPython's import machinery
// is on its Python stack.
bool made_by_an_import(const Model& m, uint64_t stack_id) {
  const format::Stack* stack = m.tables.stack(stack_id);
  if (stack == nullptr) return false;
  for (uint64_t id : stack->python_frames)
    if (const format::PythonFrame* frame = m.tables.frame(id))
      if (m.str(frame->file_string).rfind("<frozen importlib", 0) == 0) return true;
  return false;
}

class LeakedByBlock final : public Detector {
 public:
  void finish(const Model& m, bool truncated, StackResolver& stacks,
              std::vector<Finding>& out) override {
    if (m.block == 0 || truncated || !m.block_ended) return;
    // A leak is what one holder keeps (its allocations); memory no walk
    // named joins the leak its allocation site fed, else is a leak of its
    // own site.
    std::map<std::string, std::vector<const Allocation*>> leaks;
    std::map<std::string, std::string> leak_of_site;
    std::vector<const Allocation*> unnamed;
    for (const auto& [address, a] : m.allocations) {
      if (a.at.seq <= m.block_begin.seq || made_by_an_import(m, a.stack_id) || library_buffer(m, a))
        continue;
      // The walk at the block's end is the one that counts: a path an
      // earlier walk found and it did not is gone.
      auto holder = m.holder_of_alloc.find(a.at.seq);
      if (holder == m.holder_of_alloc.end() || m.holder_gone(holder->second)) {
        unnamed.push_back(&a);
        continue;
      }
      const std::string& site_key = stacks.key(a.stack_id);
      const std::string leak_key = "held:" + container_of(holder->second.path);
      leak_of_site.try_emplace(site_key, leak_key);
      leaks[leak_key].push_back(&a);
    }
    for (const Allocation* a : unnamed) {
      const std::string& site_key = stacks.key(a->stack_id);
      auto fed = leak_of_site.find(site_key);
      leaks[fed != leak_of_site.end() ? fed->second : "site:" + site_key].push_back(a);
    }
    for (auto& [key, allocations] : leaks)
      out.push_back(finding(m, stacks, std::move(allocations), key.rfind("site:", 0) == 0));
  }

 private:
  // `unnamed`: no walk of the program's references named a holder (the
  // walk at the block's end reached none of it: a C++ object, a library's
  // cache holds it).
  static Finding finding(const Model& m, StackResolver& stacks,
                         std::vector<const Allocation*> allocations, bool unnamed) {
    Finding f;
    f.kind = kLeakedByBlock;
    f.severity = default_severity(f.kind);
    f.evidence["block"] = m.block;
    const HeldSites held = describe_held_allocations(m, stacks, std::move(allocations), f);
    f.message =
        std::to_string(f.count) + " allocation(s), " + format_bytes(f.bytes) +
        ", made inside memlife.record() block " + std::to_string(m.block) +
        (held.lead_line.empty() ? "" : " at " + held.lead_line) +
        (held.other_sites ? " and " + std::to_string(held.other_sites) + " other site(s)" : "") +
        ", still allocated at its end";
    if (unnamed) f.message += "; no Python reference path reaches it";
    return f;
  }
};

}  // namespace

std::unique_ptr<Detector> make_leaked_by_block_detector(const AnalysisOptions&) {
  return std::make_unique<LeakedByBlock>();
}

}  // namespace memlife::analysis
