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

// Device memory no tensor ever named: the CUDA libraries' workspaces
// (cuBLAS takes one per handle and stream from torch's allocator on its
// first matmul and keeps it) and the allocator's own, not the block's.
bool library_buffer(const Allocation& a) { return a.device >= 0 && a.storage_id == 0; }

struct Site {
  uint64_t stack_id = 0, bytes = 0;
};

// What one holder keeps: its allocations, by the sites that made them.
struct Leak {
  std::vector<const Allocation*> allocations;
  std::map<std::string, Site> sites;  // by stack key
};

class LeakedByBlock final : public Detector {
 public:
  void finish(const Model& m, bool truncated, StackResolver& stacks,
              std::vector<Finding>& out) override {
    if (m.block == 0 || truncated || !m.block_ended) return;
    // A leak is what one holder keeps; memory no walk named joins the leak
    // its allocation site fed, else is a leak of its own site.
    std::map<std::string, Leak> leaks;
    std::map<std::string, std::string> leak_of_site;
    std::vector<const Allocation*> unnamed;
    const auto add = [&](const std::string& leak_key, const std::string& site_key,
                         const Allocation& a) {
      Leak& l = leaks[leak_key];
      l.allocations.push_back(&a);
      Site& site = l.sites[site_key];
      site.stack_id = site.stack_id ? site.stack_id : a.stack_id;
      site.bytes += a.bytes;
    };
    for (const auto& [address, a] : m.allocations) {
      if (a.at.seq <= m.block_begin.seq || made_by_an_import(m, a.stack_id) || library_buffer(a))
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
      add(leak_key, site_key, a);
    }
    for (const Allocation* a : unnamed) {
      const std::string& site_key = stacks.key(a->stack_id);
      auto fed = leak_of_site.find(site_key);
      add(fed != leak_of_site.end() ? fed->second : "site:" + site_key, site_key, *a);
    }
    for (auto& [key, l] : leaks) out.push_back(finding(m, stacks, l, key.rfind("site:", 0) == 0));
  }

 private:
  // `unnamed`: no walk of the program's references named a holder (the
  // walk at the block's end reached none of it: a C++ object, a library's
  // cache holds it).
  static Finding finding(const Model& m, StackResolver& stacks, Leak& leak, bool unnamed) {
    std::vector<const Allocation*>& allocations = leak.allocations;
    std::sort(allocations.begin(), allocations.end(),
              [](const Allocation* x, const Allocation* y) { return x->at.seq < y->at.seq; });
    std::vector<const Site*> by_bytes;
    by_bytes.reserve(leak.sites.size());
    for (const auto& [key, site] : leak.sites) by_bytes.push_back(&site);
    std::sort(by_bytes.begin(), by_bytes.end(),
              [](const auto* x, const auto* y) { return x->bytes > y->bytes; });
    Finding f;
    f.kind = kLeakedByBlock;
    f.severity = default_severity(f.kind);
    f.count = allocations.size();
    const uint64_t first_ns = allocations.front()->at.time_ns;
    f.retained_ns = m.last_time_ns - std::min(m.last_time_ns, first_ns);
    nlohmann::json list = nlohmann::json::array();
    for (const Allocation* a : allocations) {
      f.bytes += a->bytes;
      f.retains.push_back({a->at.seq, a->bytes});
      if (list.size() < 64)
        list.push_back({{"address", a->address},
                        {"bytes", a->bytes},
                        {"device", a->device},
                        {"storage_id", a->storage_id}});
    }
    nlohmann::json stack_list = nlohmann::json::array();
    nlohmann::json roles = nlohmann::json::array();
    for (size_t i = 0; i < by_bytes.size() && i < 8; ++i) {
      stack_list.push_back(stacks.frames(by_bytes[i]->stack_id));
      roles.push_back("allocation");
    }
    f.evidence["block"] = m.block;
    f.evidence["allocations"] = std::move(list);
    f.evidence["stacks"] = std::move(stack_list);
    f.evidence["stack_roles"] = std::move(roles);
    f.evidence["steps"] = nlohmann::json::array({allocations.front()->at.step});
    const std::string line = stacks.user_line(by_bytes.front()->stack_id);
    const size_t others = by_bytes.size() - 1;
    f.message = std::to_string(f.count) + " allocation(s), " + format_bytes(f.bytes) +
                ", made inside memlife.record() block " + std::to_string(m.block) +
                (line.empty() ? "" : " at " + line) +
                (others ? " and " + std::to_string(others) + " other site(s)" : "") +
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
