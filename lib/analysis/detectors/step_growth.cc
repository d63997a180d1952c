// step_growth: after the warm-up steps, the bytes still live at each step
// mark from one allocation site grow step after step (a list of losses that
// keeps every step's autograd graph, a cache without a bound). A steady loop
// allocates and frees the same amount per step, so its live bytes per site
// stay flat at the marks.
#include <algorithm>
#include <iterator>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "analysis/detector.h"
#include "analysis/detectors/util.h"
#include "memlife/memlife.h"
#include "memlife/torch_op_names.h"

namespace memlife::analysis {

GrowthTrend growth_trend(const std::vector<uint64_t>& v, uint64_t min_increases) {
  GrowthTrend t;
  if (v.size() < 2) return t;
  // The window: from the lowest point before the last maximum to the end.
  // A leak keeps what it took, so its bytes end near their maximum; a
  // cache that filled once and stayed flat rises once; a loop whose
  // per-step bytes go up and down has as many falls as rises.
  const uint64_t top = *std::max_element(v.begin(), v.end());
  if (v.back() == 0 || v.back() < top - top / 10) return t;
  // Bytes that were at this level before and then released at least half
  // of it accumulate and release in cycles (an epoch-level metric's state
  // until its reset, a buffer flushed every N steps): not a leak.
  bool was_high = false;
  for (size_t i = 0; i + 1 < v.size(); ++i) {
    if (v[i] >= v.back() - v.back() / 10) was_high = true;
    if (was_high && v[i + 1] <= v.back() / 2) return t;
  }
  size_t low = 0;
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i] < v[low]) low = i;
  if (low + 1 >= v.size()) return t;
  uint64_t ups = 0, downs = 0;
  size_t last_rise = low;
  for (size_t i = low + 1; i < v.size(); ++i) {
    if (v[i] > v[i - 1]) {
      ++ups;
      last_rise = i;
    }
    downs += v[i] < v[i - 1];
  }
  const uint64_t intervals = v.size() - 1 - low;
  t.begin = low;
  t.end = v.size() - 1;
  t.increases = ups;
  // Rising at least `min_increases` times and at a third of the steps or
  // more (a list that grows every second step), falling rarely, and still
  // rising in the window's last third: a cache that filled in the first
  // epoch (a dataset memoizing its samples) and stayed flat since has
  // stopped growing.
  const uint64_t flat_tail = v.size() - 1 - last_rise;
  t.grows = v.back() > v[low] && ups >= min_increases && 3 * ups >= intervals && 4 * downs <= ups &&
            3 * flat_tail <= intervals;
  return t;
}

namespace {

// Whether two sites' rises (sorted mark indices) are the same but for a
// tenth of them: they grew together.
bool rose_together(const std::vector<size_t>& a, const std::vector<size_t>& b) {
  std::vector<size_t> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  return 10 * both.size() >= 9 * std::max(a.size(), b.size());
}

// An allocation of a site that was still live at a post-warm-up step mark
// it was made before: what a growth window retains.
struct Survivor {
  uint64_t alloc_seq = 0, bytes = 0;
  size_t sample = 0;  // index into sampled_ of the first mark it survived
};

struct Site {
  uint64_t stack_id = 0;  // a representative stack of the site
  // The autograd node that allocated, for a site inside backward: one
  // `loss.backward()` allocates every gradient, and a hook keeping one
  // node's output must not be judged together with the parameters' grads.
  uint64_t engine_node_string = 0;
  uint64_t live = 0;
  size_t first_sample = 0;        // index of samples[0] among all samples
  std::vector<uint64_t> samples;  // live bytes at each post-warm-up mark
  std::unordered_map<uint64_t, Finding::Retained> live_allocs;  // by address
  std::vector<Survivor> survivors;
  // After the last mark: the site's live bytes when the first allocation
  // that had survived that mark was freed (the program letting go of what
  // it kept, typically when the function holding it returns), and when the
  // first of any site's was. A graph is freed newest node first, so a
  // site's own first such free can come after its newest memory went.
  bool tail_seen = false;
  uint64_t tail_live = 0;
  uint64_t any_tail_live = 0;
};

// Survivors kept per site: enough to name the holders and fold the same
// bytes seen by other detectors, bounded for long traces.
constexpr size_t kMaxSurvivors = 4096;

// A site whose bytes grow, with the window and rises that make it grow.
struct Growing {
  size_t site = 0;
  std::vector<uint64_t> v;  // live bytes at the marks, a leading 0 when first seen late
  size_t offset = 0;        // sampled_ index of v[0]
  GrowthTrend trend;
  std::vector<size_t> rises;  // sampled_ indices at which it rose
};

class StepGrowth final : public Detector {
 public:
  explicit StepGrowth(const AnalysisOptions& o) : options_(o) {}

  void on_alloc(const Model& m, const Allocation& a) override {
    const size_t index = site_index(m, a.stack_id, a.op_string);
    Site& s = sites_[index];
    s.live += a.bytes;
    s.live_allocs[a.address] = {a.at.seq, a.bytes};
    if (a.stack_id == 0) unplaced_.push_back(a.address);
  }
  void on_collective_call(const Model& m, const Collective& c, bool) override {
    // The buffers a collective sends or receives: the backend's works keep
    // them too (ProcessGroupNCCL until its watchdog reaps a completed work).
    for (const auto* tensors : {&c.inputs, &c.outputs})
      for (uint64_t t : *tensors)
        if (const Storage* st = m.storage(m.storage_of(t)); st != nullptr && st->data_live)
          collective_buffers_.insert(st->alloc.at.seq);
  }

  void on_mark(const Model& m, const format::MarkRecord& r, const When&) override {
    if (r.kind != MarkKind::kLabel) return;
    const std::string_view label = m.str(r.label_string);
    for (ResetWindow& w : resets_) {
      if (label == w.begin) ++w.depth;
      if (label == w.end && w.depth > 0) --w.depth;
    }
  }

  void on_free(const Model& m, const Allocation& a, const Storage*, const When&) override {
    for (ResetWindow& w : resets_)
      if (w.depth > 0) w.freed.insert(a.at.seq);
    // The site it was counted in: an allocation made without a stack may
    // have been lent its tensor's stack since (Replayer::on_tensor).
    size_t found = sites_.size();
    for (size_t index : {site_index(m, a.stack_id, a.op_string), site_index(m, 0, 0)})
      if (sites_[index].live_allocs.count(a.address)) found = index;
    if (found == sites_.size()) return;
    if (a.at.seq < last_mark_seq_ && (!any_tail_seen_ || !sites_[found].tail_seen)) {
      // What ops made since the mark without a stack (a GPU op's outputs)
      // belongs to the sites their tensors lent them by now.
      place_lent_stacks(m);
      if (!any_tail_seen_) {
        any_tail_seen_ = true;
        for (Site& s : sites_) s.any_tail_live = s.live;
      }
      Site& s = sites_[found];
      if (!s.tail_seen) {
        s.tail_seen = true;
        s.tail_live = s.live;
      }
    }
    Site& s = sites_[found];
    s.live -= std::min(s.live, a.bytes);
    s.live_allocs.erase(a.address);
    if (a.at.seq < last_mark_seq_) freed_before_sample_[a.at.seq] = sampled_.size();
  }

  void on_step(const Model& m, const StepMark& mark) override {
    place_lent_stacks(m);
    const uint64_t previous_mark = last_mark_seq_;
    last_mark_seq_ = mark.at.seq;
    any_tail_seen_ = false;
    if (++marks_ <= options_.warmup_steps) return;
    const size_t index = sampled_.size();
    sampled_.push_back(mark);
    for (Site& s : sites_) {
      s.tail_seen = false;
      if (s.samples.empty()) {
        if (s.live == 0) continue;
        s.first_sample = index;
      }
      s.samples.push_back(s.live);
      for (const auto& [address, a] : s.live_allocs)
        if (a.alloc_seq > previous_mark && s.survivors.size() < kMaxSurvivors)
          s.survivors.push_back({a.alloc_seq, a.bytes, index});
    }
  }

  void finish(const Model& m, bool, StackResolver& stacks, std::vector<Finding>& out) override {
    place_lent_stacks(m);
    leave_out_library_buffers(m);
    // Sites that rose at the same marks grew together: one leak (a list of
    // losses keeps every op's saved tensors of each step), one finding.
    // "The same" allows the edges to differ: a site whose allocation comes
    // after the step mark starts rising one mark later than its partner.
    std::vector<std::vector<Growing>> leaks;
    for (size_t site_index = 0; site_index < sites_.size(); ++site_index) {
      const Site& s = sites_[site_index];
      // A site with no Python frame cannot be placed in the program: a
      // maintainer could not act on it (library workspaces, allocator
      // internals).
      if (s.stack_id == 0 || stacks.user_line(s.stack_id).empty()) continue;
      Growing g;
      g.site = site_index;
      // A site first seen after the warm-up starts from zero at the mark
      // before.
      g.offset = s.first_sample;
      if (g.offset > 0) {
        g.v.push_back(0);
        --g.offset;
      }
      g.v.insert(g.v.end(), s.samples.begin(), s.samples.end());
      g.trend = growth_trend(g.v, options_.growth_steps);
      if (!g.trend.grows) continue;
      for (size_t i = g.trend.begin + 1; i <= g.trend.end; ++i)
        if (g.v[i] > g.v[i - 1]) g.rises.push_back(g.offset + i);
      auto together = std::find_if(leaks.begin(), leaks.end(), [&](const auto& leak) {
        return rose_together(leak.front().rises, g.rises);
      });
      if (together == leaks.end()) {
        leaks.emplace_back();
        together = leaks.end() - 1;
      }
      together->push_back(std::move(g));
    }
    for (auto& sites : leaks) {
      // The biggest site first: its stack leads the evidence.
      std::sort(sites.begin(), sites.end(), [](const Growing& a, const Growing& b) {
        return a.v[a.trend.end] > b.v[b.trend.end];
      });
      const Growing& lead = sites.front();
      const std::vector<size_t>& rises = lead.rises;
      const size_t begin = lead.offset + lead.trend.begin, end = lead.offset + lead.trend.end;
      const StepMark& from = sampled_[begin];
      const StepMark& to = sampled_[end];
      Finding f;
      f.kind = kStepGrowth;
      f.severity = default_severity(f.kind);
      f.count = rises.size();
      f.retained_ns = to.at.time_ns - std::min(to.at.time_ns, from.at.time_ns);
      uint64_t growth = 0;
      std::vector<uint64_t> live(end - begin + 1, 0);
      nlohmann::json stack_list = nlohmann::json::array(), roles = nlohmann::json::array();
      for (const Growing& g : sites) {
        // Retained: what the sites held at the window's last mark, or
        // after the last mark of all, what they held when the program let
        // go (what it appended after that mark counts too).
        const Site& site = sites_[g.site];
        uint64_t held = g.v[g.trend.end];
        if (g.offset + g.trend.end + 1 == sampled_.size())
          held = std::max({held, site.tail_seen ? site.tail_live : site.live,
                           any_tail_seen_ ? site.any_tail_live : 0});
        f.bytes += held;
        growth += g.v[g.trend.end] - g.v[g.trend.begin];
        for (size_t i = begin; i <= end; ++i)
          if (i >= g.offset && i - g.offset < g.v.size()) live[i - begin] += g.v[i - g.offset];
        for (const Survivor& sv : sites_[g.site].survivors)
          if (sv.sample > begin && sv.sample <= end && !freed_by_sample(sv.alloc_seq, end))
            f.retains.push_back({sv.alloc_seq, sv.bytes});
        if (stack_list.size() < 8) {
          stack_list.push_back(stacks.frames(sites_[g.site].stack_id));
          roles.push_back("allocation");
        }
      }
      const uint64_t per_step = growth / std::max<size_t>(1, rises.size());
      nlohmann::json steps = nlohmann::json::array();
      for (size_t i = begin; i <= end; ++i) steps.push_back(sampled_[i].step);
      nlohmann::json lines = nlohmann::json::array();
      for (const Growing& g : sites) lines.push_back(site_line(m, stacks, sites_[g.site]));
      f.evidence["steps"] = steps;
      f.evidence["live_bytes"] = live;
      f.evidence["bytes_per_step"] = per_step;
      f.evidence["growth_bytes"] = growth;
      f.evidence["sites"] = lines;
      f.evidence["stacks"] = stack_list;
      f.evidence["stack_roles"] = roles;
      uint64_t retained = 0, in_collectives = 0, in_windows = 0;
      for (const Finding::Retained& r : f.retains) {
        retained += r.bytes;
        if (collective_buffers_.count(r.alloc_seq)) in_collectives += r.bytes;
      }
      for (const ResetWindow& w : resets_) {
        uint64_t freed = 0;
        for (const Finding::Retained& r : f.retains)
          if (w.freed.count(r.alloc_seq)) freed += r.bytes;
        if (freed != 0) f.evidence[w.evidence] = freed;
        in_windows += freed;
      }
      if (in_collectives != 0) f.evidence["collective_buffer_bytes"] = in_collectives;
      if (in_collectives != 0 || in_windows != 0) f.evidence["retained_bytes"] = retained;
      const std::string line = site_line(m, stacks, sites_[lead.site]);
      f.message = "live bytes allocated at " + line +
                  (sites.size() > 1 ? " and " + std::to_string(sites.size() - 1) + " other site(s)"
                                    : std::string()) +
                  " grew by " + format_bytes(per_step) + " per rising step, rising at " +
                  std::to_string(rises.size()) + " of " + std::to_string(end - begin) +
                  " steps (steps " + std::to_string(from.step) + ".." + std::to_string(to.step) +
                  "), " + format_bytes(f.bytes) + " held at step " + std::to_string(to.step);
      out.push_back(std::move(f));
    }
  }

 private:
  // Allocations (by sequence number) whose storage was a collective's
  // input or output buffer.
  std::unordered_set<uint64_t> collective_buffers_;
  // Marked windows (memlife.h) whose frees (allocations by sequence
  // number) say what grew was no leak: the exit walk's gc.collect()
  // (garbage on reference cycles, unreachable), and the calls in which a
  // program empties what it kept for a period (it grew for that period,
  // not without bound). Nested calls (a MetricCollection's reset of its
  // metrics) count once.
  struct ResetWindow {
    std::string_view begin, end;
    const char* evidence;  // the finding's evidence field for its bytes
    std::unordered_set<uint64_t> freed;
    int depth = 0;
  };
  ResetWindow resets_[3] = {
      {MEMLIFE_HOLDER_EXIT_COLLECT_BEGIN,
       MEMLIFE_HOLDER_EXIT_COLLECT_END,
       "freed_by_exit_collection_bytes",
       {}},
      {MEMLIFE_METRIC_RESET_BEGIN, MEMLIFE_METRIC_RESET_END, "freed_by_metric_reset_bytes", {}},
      {MEMLIFE_EPOCH_END_BEGIN, MEMLIFE_EPOCH_END_END, "freed_at_epoch_end_bytes", {}}};
  // A library's device buffer made before the first sampled mark and kept
  // to the end (cuBLAS's workspace, 32 MiB on an H100, made by the first
  // matmul and lent that call's stack) is no part of what its site's
  // program line keeps: its bytes leave every sample and tail of the site.
  // Only such early ones: memory an op made inside itself (a saved
  // intermediate, which only a holder walk names) and kept past the
  // warm-up is judged as what it is.
  void leave_out_library_buffers(const Model& m) {
    if (sampled_.empty()) return;
    const uint64_t first_mark = sampled_.front().at.seq;
    for (Site& s : sites_) {
      uint64_t library = 0;
      for (const auto& [address, r] : s.live_allocs) {
        if (r.alloc_seq >= first_mark) continue;
        auto a = m.allocations.find(address);
        if (a != m.allocations.end() && library_buffer(m, a->second)) library += r.bytes;
      }
      if (library == 0) continue;
      for (uint64_t& v : s.samples) v -= std::min(v, library);
      s.live -= std::min(s.live, library);
      s.tail_live -= std::min(s.tail_live, library);
      s.any_tail_live -= std::min(s.any_tail_live, library);
    }
  }

  // Allocations counted without a stack whose tensor has lent them one
  // since: move them to that site before sampling.
  void place_lent_stacks(const Model& m) {
    if (unplaced_.empty()) return;
    const size_t none = site_index(m, 0, 0);
    std::vector<uint64_t> still;
    for (uint64_t address : unplaced_) {
      auto live = sites_[none].live_allocs.find(address);
      if (live == sites_[none].live_allocs.end()) continue;  // freed meanwhile
      auto a = m.allocations.find(address);
      if (a == m.allocations.end() || a->second.stack_id == 0) {
        still.push_back(address);
        continue;
      }
      const Finding::Retained r = live->second;
      sites_[none].live -= std::min(sites_[none].live, r.bytes);
      sites_[none].live_allocs.erase(live);
      Site& to = sites_[site_index(m, a->second.stack_id, a->second.op_string)];
      to.live += r.bytes;
      to.live_allocs[address] = r;
    }
    unplaced_ = std::move(still);
  }

  // A site: the allocating stack's frames, and inside backward the node.
  // Cached by (stack, op): the op's name is read once per pair, not at
  // every allocation and free.
  size_t site_index(const Model& m, uint64_t stack_id, uint64_t op_string) {
    auto it = site_of_stack_and_op_.find({stack_id, op_string});
    if (it != site_of_stack_and_op_.end()) return it->second;
    // Allocations without a stack wait in one site for a tensor to lend
    // them one (place_lent_stacks).
    const uint64_t node =
        stack_id != 0 && op_string != 0 && m.str(op_string).starts_with(kEngineNodePrefix)
            ? op_string
            : 0;
    std::string key = m.tables.stack_key(stack_id);
    if (node != 0) key += "\n" + std::string(m.str(node));
    auto [k, fresh] = site_of_key_.try_emplace(std::move(key), sites_.size());
    if (fresh) {
      Site site;
      site.stack_id = stack_id;
      site.engine_node_string = node;
      sites_.push_back(std::move(site));
    }
    site_of_stack_and_op_[{stack_id, op_string}] = k->second;
    return k->second;
  }

  // Where a site allocates: the program's line, and the autograd node.
  static std::string site_line(const Model& m, StackResolver& stacks, const Site& s) {
    std::string line = stacks.user_line(s.stack_id);
    if (s.engine_node_string != 0) {
      std::string_view node = m.str(s.engine_node_string).substr(kEngineNodePrefix.size());
      while (node.starts_with(' ')) node.remove_prefix(1);
      line += " (autograd node " + std::string(node) + ")";
    }
    return line;
  }

  AnalysisOptions options_;
  uint64_t marks_ = 0, last_mark_seq_ = 0;
  // Allocations that outlived a mark, by alloc seq: how many marks had been
  // sampled when they were freed. One freed before a window's last mark
  // (the batch of a step) is no part of what that window retains.
  std::unordered_map<uint64_t, size_t> freed_before_sample_;
  bool freed_by_sample(uint64_t alloc_seq, size_t sample) const {
    const auto it = freed_before_sample_.find(alloc_seq);
    return it != freed_before_sample_.end() && it->second <= sample;
  }
  bool any_tail_seen_ = false;  // a site's allocation that survived the last mark was freed
  std::vector<StepMark> sampled_;
  std::vector<Site> sites_;
  struct StackAndOpHash {
    size_t operator()(const std::pair<uint64_t, uint64_t>& k) const {
      return std::hash<uint64_t>()(k.first * 0x9E3779B97F4A7C15ull ^ k.second);
    }
  };
  std::unordered_map<std::pair<uint64_t, uint64_t>, size_t, StackAndOpHash> site_of_stack_and_op_;
  std::unordered_map<std::string, size_t> site_of_key_;
  std::vector<uint64_t> unplaced_;  // addresses counted in the stackless site
};

}  // namespace

std::unique_ptr<Detector> make_step_growth_detector(const AnalysisOptions& o) {
  return std::make_unique<StepGrowth>(o);
}

}  // namespace memlife::analysis
