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
// What a framework keeps of its last call only (Lightning's predict loop
// its last predictions, a cached trainer its last dataset), when the block
// freed as much of an earlier call's, made by the same code and held by
// the same container, is that call's worth replaced: reported with
// evidence.replaced_bytes, which set_aside_growth sets aside (why:
// replaced).
#include <algorithm>
#include <map>
#include <string>
#include <utility>

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

// The code that made an allocation: its Python frames from the innermost
// out to the first of the program's own, included (the line of the
// program's that made it, or that called the library that did, such as a
// LightningModule's predict_step under Lightning's loop). The frames
// further out differ from one call to the next (a test's line, a warm-up's)
// and are left out. Empty without Python frames.
std::string code_of(const Model& m, uint64_t stack_id) {
  std::string key;
  const format::Stack* stack = m.tables.stack(stack_id);
  if (stack == nullptr) return key;
  for (uint64_t id : stack->python_frames) {
    const format::PythonFrame* frame = m.tables.frame(id);
    if (frame == nullptr) continue;
    const std::string_view file = m.str(frame->file_string);
    key.append(file).append(":").append(std::to_string(frame->line)).append("\n");
    if (!is_library_file(file)) break;
  }
  return key;
}

class LeakedByBlock final : public Detector {
 public:
  // Memory made before the block and freed inside it, by stack and by the
  // container a walk last found holding it ("" when none did).
  void on_free(const Model& m, const Allocation& a, const Storage*, const When& at) override {
    if (m.block == 0 || !m.block_begun || m.block_ended || a.at.seq > m.block_begin.seq ||
        at.seq <= m.block_begin.seq)
      return;
    std::string holder;
    if (auto h = m.holder_of_alloc.find(a.at.seq);
        h != m.holder_of_alloc.end() && !m.holder_gone(h->second))
      holder = container_of(h->second.path);
    freed_from_before_[{a.stack_id, std::move(holder)}] += a.bytes;
  }

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
    // Code and holder container -> bytes freed.
    std::map<std::pair<std::string, std::string>, uint64_t> replaceable;
    for (const auto& [freed, bytes] : freed_from_before_)
      if (std::string code = code_of(m, freed.first); !code.empty())
        replaceable[{std::move(code), freed.second}] += bytes;
    for (auto& [key, allocations] : leaks) {
      const uint64_t replaced = key.rfind("held:", 0) == 0
                                    ? take_replaced(m, allocations, key.substr(5), replaceable)
                                    : 0;
      out.push_back(finding(m, stacks, std::move(allocations), key.rfind("site:", 0) == 0));
      if (replaced != 0) out.back().evidence["replaced_bytes"] = replaced;
    }
  }

 private:
  // The bytes of `allocations`, which `holder` keeps, that replace memory
  // the same code made before the block and the block freed, held
  // by the same container when a walk saw it: taken from `replaceable`
  // (each freed byte answers for one kept byte); 0 unless all of them do.
  // Memory an earlier walk found elsewhere is no replacement: a call that
  // keeps its results in a list of its own (the first call of a leak)
  // frees the library's copy of the last call, and keeps more.
  static uint64_t take_replaced(
      const Model& m, const std::vector<const Allocation*>& allocations, const std::string& holder,
      std::map<std::pair<std::string, std::string>, uint64_t>& replaceable) {
    std::map<std::string, uint64_t> kept;
    for (const Allocation* a : allocations) {
      std::string code = code_of(m, a->stack_id);
      if (code.empty()) return 0;
      kept[std::move(code)] += a->bytes;
    }
    auto available = [&](const std::string& code, const std::string& by) {
      auto it = replaceable.find({code, by});
      return it == replaceable.end() ? uint64_t{0} : it->second;
    };
    uint64_t total = 0;
    for (const auto& [code, bytes] : kept) {
      if (available(code, holder) + available(code, "") < bytes) return 0;
      total += bytes;
    }
    for (const auto& [code, bytes] : kept) {
      uint64_t& same = replaceable[{code, holder}];
      const uint64_t from_same = std::min(same, bytes);
      same -= from_same;
      replaceable[{code, ""}] -= bytes - from_same;
    }
    return total;
  }

  std::map<std::pair<uint64_t, std::string>, uint64_t> freed_from_before_;

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
