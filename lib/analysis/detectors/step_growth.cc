// step_growth: after the warm-up steps, the bytes still live at each step
// mark from one allocation site grow step after step (a list of losses that
// keeps every step's autograd graph, a cache without a bound). A steady loop
// allocates and frees the same amount per step, so its live bytes per site
// stay flat at the marks.
#include <algorithm>
#include <unordered_map>

#include "analysis/detector.h"
#include "analysis/detectors/util.h"

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
  size_t low = 0;
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i] < v[low]) low = i;
  if (low + 1 >= v.size()) return t;
  uint64_t ups = 0, downs = 0;
  for (size_t i = low + 1; i < v.size(); ++i) {
    ups += v[i] > v[i - 1];
    downs += v[i] < v[i - 1];
  }
  const uint64_t intervals = v.size() - 1 - low;
  t.begin = low;
  t.end = v.size() - 1;
  t.increases = ups;
  // Rising at least `min_increases` times and at a third of the steps or
  // more (a list that grows every second step), falling rarely.
  t.grows = v.back() > v[low] && ups >= min_increases && 3 * ups >= intervals && 4 * downs <= ups;
  return t;
}

namespace {

struct Site {
  uint64_t stack_id = 0;  // a representative stack of the site
  uint64_t live = 0;
  size_t first_sample = 0;        // index of samples[0] among all samples
  std::vector<uint64_t> samples;  // live bytes at each post-warm-up mark
};

class StepGrowth final : public Detector {
 public:
  explicit StepGrowth(const AnalysisOptions& o) : options_(o) {}

  void on_alloc(const Model& m, const Allocation& a) override {
    site(m, a.stack_id).live += a.bytes;
  }
  void on_free(const Model& m, const Allocation& a, const Storage*, const When&) override {
    Site& s = site(m, a.stack_id);
    s.live -= std::min(s.live, a.bytes);
  }

  void on_step(const Model&, const StepMark& mark) override {
    if (++marks_ <= options_.warmup_steps) return;
    const size_t index = sampled_.size();
    sampled_.push_back(mark);
    for (Site& s : sites_) {
      if (s.samples.empty()) {
        if (s.live == 0) continue;
        s.first_sample = index;
      }
      s.samples.push_back(s.live);
    }
  }

  void finish(const Model& m, bool, StackResolver& stacks, std::vector<Finding>& out) override {
    for (size_t site_index = 0; site_index < sites_.size(); ++site_index) {
      const Site& s = sites_[site_index];
      // A site with no Python frame cannot be placed in the program: a
      // maintainer could not act on it (library workspaces, allocator
      // internals).
      if (s.stack_id == 0 || stacks.user_line(s.stack_id).empty()) continue;
      // A site first seen after the warm-up starts from zero at the mark
      // before.
      std::vector<uint64_t> v;
      size_t offset = s.first_sample;
      if (offset > 0) {
        v.push_back(0);
        --offset;
      }
      v.insert(v.end(), s.samples.begin(), s.samples.end());
      const GrowthTrend trend = growth_trend(v, options_.growth_steps);
      if (!trend.grows) continue;
      const size_t best_begin = trend.begin, best_len = trend.end - trend.begin;
      const size_t last = trend.end;
      const StepMark& from = sampled_[offset + best_begin];
      const StepMark& to = sampled_[offset + last];
      Finding f;
      f.kind = kStepGrowth;
      f.severity = default_severity(f.kind);
      f.bytes = v[last] - v[best_begin];
      f.count = trend.increases;
      f.retained_ns = to.at.time_ns - std::min(to.at.time_ns, from.at.time_ns);
      const uint64_t per_step = f.bytes / best_len;
      nlohmann::json steps = nlohmann::json::array(), live = nlohmann::json::array();
      for (size_t i = best_begin; i <= last; ++i) {
        steps.push_back(sampled_[offset + i].step);
        live.push_back(v[i]);
      }
      for (const auto& [address, a] : m.allocations) {
        auto it = site_of_stack_.find(a.stack_id);
        if (it != site_of_stack_.end() && it->second == site_index)
          f.retains.push_back({a.at.seq, a.bytes});
      }
      f.evidence["steps"] = steps;
      f.evidence["live_bytes"] = live;
      f.evidence["bytes_per_step"] = per_step;
      f.evidence["stacks"] = nlohmann::json::array({stacks.frames(s.stack_id)});
      f.evidence["stack_roles"] = {"allocation"};
      const std::string line = stacks.user_line(s.stack_id);
      f.message = "live bytes allocated at " +
                  (line.empty() ? std::string("an unknown site") : line) + " grew by " +
                  format_bytes(per_step) + " per step over " + std::to_string(best_len) +
                  " steps, rising at " + std::to_string(trend.increases) + " of them (steps " + std::to_string(from.step) + ".." + std::to_string(to.step) +
                  ", " + format_bytes(f.bytes) + " in all)";
      out.push_back(std::move(f));
    }
  }

 private:
  Site& site(const Model& m, uint64_t stack_id) {
    auto it = site_of_stack_.find(stack_id);
    if (it != site_of_stack_.end()) return sites_[it->second];
    std::string key = stack_key(m, stack_id);
    auto [k, fresh] = site_of_key_.try_emplace(std::move(key), sites_.size());
    if (fresh) {
      Site site;
      site.stack_id = stack_id;
      sites_.push_back(std::move(site));
    }
    site_of_stack_[stack_id] = k->second;
    return sites_[k->second];
  }

  AnalysisOptions options_;
  uint64_t marks_ = 0;
  std::vector<StepMark> sampled_;
  std::vector<Site> sites_;
  std::unordered_map<uint64_t, size_t> site_of_stack_;
  std::unordered_map<std::string, size_t> site_of_key_;
};

}  // namespace

std::unique_ptr<Detector> make_step_growth_detector(const AnalysisOptions& o) {
  return std::make_unique<StepGrowth>(o);
}

}  // namespace memlife::analysis
