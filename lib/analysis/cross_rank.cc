#include "analysis/cross_rank.h"

#include <algorithm>
#include <map>
#include <set>

namespace memlife::analysis {
namespace {

std::string rank_list(const std::vector<int64_t>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? "," : "") + std::to_string(ranks[i]);
  return s;
}

std::string describe(const CollectiveCall& c) {
  return c.op + " (" + format_bytes(c.bytes) + ")" + (c.where.empty() ? "" : " at " + c.where);
}

// Identity of a finding that is "the same" on two ranks: ranks differ in
// pids, tensor ids and addresses, not in code.
std::string identity(const Finding& f) {
  std::string key = f.kind;
  for (const char* field : {"op", "group", "released_by", "memory"})
    if (auto it = f.evidence.find(field); it != f.evidence.end()) key += "|" + it->dump();
  if (auto st = f.evidence.find("stacks"); st != f.evidence.end() && st->is_array() && !st->empty())
    for (const auto& frame : (*st)[0])
      key += "|" + frame.value("file", frame.value("module", std::string())) + ":" +
             frame.value("function", std::string()) + ":" +
             std::to_string(frame.value("line", uint64_t{0}));
  return key;
}

// A rank that failed (exited with a non-zero status) did not skip what it
// never issued: it stopped, and the failure is the story. So did a rank
// killed while another failed: launchers stop the other ranks when one
// fails, each wherever it was. A rank killed while none failed stays
// judged: that is how a hang ends, and its last call is the diagnosis.
bool stopped_early(const ProcessAnalysis& p, bool some_rank_failed) {
  return p.exit_status != 0 || (p.truncated && some_rank_failed);
}

uint64_t median(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2;
}

}  // namespace

std::vector<Finding> collective_mismatches(const std::vector<const ProcessAnalysis*>& ranks) {
  std::vector<Finding> out;
  if (ranks.size() < 2) return out;
  // group -> rank index -> that rank's calls on it
  std::map<std::string, std::map<size_t, std::vector<const CollectiveCall*>>> groups;
  for (size_t r = 0; r < ranks.size(); ++r) {
    groups["default"][r];  // every rank is a member of the default group
    for (const CollectiveCall& c : ranks[r]->collectives) groups[c.group][r].push_back(&c);
  }
  const bool some_rank_failed = std::any_of(
      ranks.begin(), ranks.end(), [](const ProcessAnalysis* p) { return p->exit_status != 0; });
  for (const auto& [group, members] : groups) {
    if (members.size() < 2) continue;
    size_t longest = 0;
    for (const auto& [r, calls] : members) longest = std::max(longest, calls.size());
    for (size_t k = 0; k < longest; ++k) {
      // signature -> ranks; "" for a rank that never made its k-th call,
      // unless it stopped early.
      std::map<std::string, std::vector<size_t>> by_sig;
      for (const auto& [r, calls] : members) {
        if (k < calls.size())
          by_sig[calls[k]->op + "|" + std::to_string(calls[k]->bytes)].push_back(r);
        else if (!stopped_early(*ranks[r], some_rank_failed))
          by_sig[""].push_back(r);
      }
      if (by_sig.size() <= 1) continue;
      // The reference is the call most ranks made.
      const std::vector<size_t>* ref = nullptr;
      for (const auto& [sig, rs] : by_sig)
        if (!sig.empty() && (!ref || rs.size() > ref->size())) ref = &rs;
      const CollectiveCall& expected = *members.at(ref->front())[k];
      Finding f;
      f.kind = kCollectiveMismatch;
      f.severity = default_severity(f.kind);
      f.bytes = expected.bytes;
      nlohmann::json per_rank = nlohmann::json::array();
      nlohmann::json stacks = nlohmann::json::array({expected.stack});
      nlohmann::json roles = nlohmann::json::array(
          {"rank " + std::to_string(ranks[ref->front()]->rank) + ": call #" + std::to_string(k)});
      std::vector<int64_t> ref_ranks, odd_ranks;
      std::string odd_text;
      for (const auto& [r, calls] : members) {
        const ProcessAnalysis& p = *ranks[r];
        f.ranks.push_back(p.rank);
        f.pids.push_back(p.header.pid);
        const bool in_ref = std::find(ref->begin(), ref->end(), r) != ref->end();
        (in_ref ? ref_ranks : odd_ranks).push_back(p.rank);
        nlohmann::json entry = {{"rank", p.rank}, {"pid", p.header.pid}, {"calls", calls.size()}};
        if (k < calls.size())
          entry.update(
              {{"op", calls[k]->op}, {"bytes", calls[k]->bytes}, {"where", calls[k]->where}});
        else
          entry["op"] = nullptr;
        per_rank.push_back(entry);
        if (in_ref) continue;
        if (!odd_text.empty()) odd_text += "; ";
        odd_text += "rank " + std::to_string(p.rank);
        if (k < calls.size()) {
          odd_text += " issued " + describe(*calls[k]);
          stacks.push_back(calls[k]->stack);
          roles.push_back("rank " + std::to_string(p.rank) + ": call #" + std::to_string(k));
        } else {
          if (!stopped_early(p, some_rank_failed))
            odd_text += " never issued it";
          else if (p.exit_status != 0)
            odd_text +=
                " stopped before it (exited with status " + std::to_string(p.exit_status) + ")";
          else
            odd_text += " stopped before it (killed as a peer failed)";
          odd_text += (calls.empty()
                           ? std::string()
                           : " (its last call on this group: #" + std::to_string(calls.size() - 1) +
                                 " " + describe(*calls.back()) + ")");
          if (!calls.empty()) {
            stacks.push_back(calls.back()->stack);
            roles.push_back("rank " + std::to_string(p.rank) + ": last call #" +
                            std::to_string(calls.size() - 1));
          }
        }
      }
      f.evidence["group"] = group;
      f.evidence["index"] = k;
      f.evidence["op"] = expected.op;
      f.evidence["per_rank"] = per_rank;
      f.evidence["stacks"] = stacks;
      f.evidence["stack_roles"] = roles;
      f.evidence["steps"] = nlohmann::json::array({expected.step});
      f.message = "collective #" + std::to_string(k) + " on group '" + group +
                  "' diverges: rank(s) " + rank_list(ref_ranks) + " issued " + describe(expected) +
                  "; " + odd_text;
      out.push_back(std::move(f));
      break;  // later calls are misaligned anyway
    }
  }
  return out;
}

std::vector<Finding> rank_imbalances(const std::vector<const ProcessAnalysis*>& ranks,
                                     const CrossRankOptions& options) {
  std::vector<Finding> out;
  if (ranks.size() < 2) return out;
  struct Metric {
    const char* name;
    const char* words;
    uint64_t ProcessAnalysis::*field;
  };
  for (const Metric& metric :
       {Metric{"peak_bytes", "peak", &ProcessAnalysis::peak_bytes},
        Metric{"live_bytes_at_end", "live at the end", &ProcessAnalysis::final_live_bytes}}) {
    std::vector<uint64_t> values;
    for (const ProcessAnalysis* p : ranks) values.push_back(p->*metric.field);
    const uint64_t mid = median(values);
    Finding f;
    f.kind = kRankImbalance;
    f.severity = default_severity(f.kind);
    f.count = 0;  // outlying ranks
    nlohmann::json per_rank = nlohmann::json::array();
    std::string odd;
    uint64_t worst = 0;
    for (const ProcessAnalysis* p : ranks) {
      const uint64_t v = p->*metric.field;
      const uint64_t diff = v > mid ? v - mid : mid - v;
      per_rank.push_back({{"rank", p->rank}, {"pid", p->header.pid}, {metric.name, v}});
      f.ranks.push_back(p->rank);
      f.pids.push_back(p->header.pid);
      if (diff <= options.imbalance_min_bytes ||
          static_cast<double>(diff) <= options.imbalance_ratio * static_cast<double>(mid))
        continue;
      worst = std::max(worst, diff);
      ++f.count;
      if (!odd.empty()) odd += ", ";
      odd += "rank " + std::to_string(p->rank) + " " + format_bytes(v);
    }
    if (f.count == 0) continue;
    f.bytes = worst;
    f.evidence["metric"] = metric.name;
    f.evidence["median_bytes"] = mid;
    f.evidence["threshold_ratio"] = options.imbalance_ratio;
    f.evidence["per_rank"] = per_rank;
    f.evidence["stacks"] = nlohmann::json::array();
    f.evidence["steps"] = nlohmann::json::array();
    f.message = std::string("bytes ") + metric.words + " differ between ranks: " + odd +
                " vs the median rank's " + format_bytes(mid);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> fold_every_rank(std::vector<ProcessAnalysis*>& ranks) {
  std::vector<Finding> out;
  if (ranks.size() < 2) return out;
  // identity -> how many findings of each rank carry it
  std::map<std::string, std::vector<int>> seen;
  for (size_t r = 0; r < ranks.size(); ++r)
    for (const Finding& f : ranks[r]->findings) {
      auto& counts = seen[identity(f)];
      counts.resize(ranks.size());
      ++counts[r];
    }
  std::set<std::string> shared;
  for (const auto& [key, counts] : seen)
    if (std::all_of(counts.begin(), counts.end(), [](int c) { return c == 1; })) shared.insert(key);
  std::map<std::string, Finding> folded;
  for (ProcessAnalysis* p : ranks) {
    auto& fs = p->findings;
    for (auto it = fs.begin(); it != fs.end();) {
      const std::string key = identity(*it);
      if (!shared.count(key)) {
        ++it;
        continue;
      }
      auto [slot, fresh] = folded.try_emplace(key);
      Finding& f = slot->second;
      const nlohmann::json mine = {{"rank", p->rank},
                                   {"pid", p->header.pid},
                                   {"count", it->count},
                                   {"bytes", it->bytes},
                                   {"message", it->message}};
      if (fresh) {
        f = *it;  // ranks come sorted: the lowest rank's evidence speaks for all
        f.count = f.bytes = 0;
        f.evidence["per_rank"] = nlohmann::json::array();
      }
      f.count += it->count;
      f.bytes += it->bytes;
      f.retained_ns = std::max(f.retained_ns, it->retained_ns);
      f.ranks.push_back(p->rank);
      f.pids.push_back(p->header.pid);
      f.evidence["per_rank"].push_back(mine);
      it = fs.erase(it);
    }
  }
  for (auto& [key, f] : folded) {
    f.message = "on every rank (" + rank_list(f.ranks) +
                "): " + f.evidence["per_rank"][0]["message"].get<std::string>();
    out.push_back(std::move(f));
  }
  return out;
}

namespace {

std::vector<Finding> one_run(std::vector<ProcessAnalysis*>& run, const CrossRankOptions& options) {
  std::vector<ProcessAnalysis*> ranked;
  std::set<int64_t> distinct;
  for (ProcessAnalysis* pp : run)
    if (ProcessAnalysis& p = *pp; p.rank >= 0 && p.error.empty()) {
      ranked.push_back(&p);
      distinct.insert(p.rank);
    }
  if (ranked.size() < 2 || distinct.size() != ranked.size()) return {};
  std::sort(ranked.begin(), ranked.end(),
            [](const ProcessAnalysis* a, const ProcessAnalysis* b) { return a->rank < b->rank; });
  const std::vector<const ProcessAnalysis*> view(ranked.begin(), ranked.end());
  std::vector<Finding> out = collective_mismatches(view);
  for (Finding& f : rank_imbalances(view, options)) out.push_back(std::move(f));
  for (Finding& f : fold_every_rank(ranked)) out.push_back(std::move(f));
  return out;
}

}  // namespace

std::vector<Finding> cross_rank_findings(std::vector<ProcessAnalysis>& processes,
                                         const CrossRankOptions& options) {
  std::map<std::string, std::vector<ProcessAnalysis*>> runs;
  for (ProcessAnalysis& p : processes) runs[p.header.run_id].push_back(&p);
  std::vector<Finding> out;
  for (auto& [id, run] : runs)
    for (Finding& f : one_run(run, options)) {
      if (runs.size() > 1) f.evidence["run_id"] = id;
      out.push_back(std::move(f));
    }
  return out;
}

}  // namespace memlife::analysis
