#include "analysis/attribution.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "analysis/detector.h"

namespace memlife::analysis {

int cause_rank(const std::string& kind) {
  // Most specific first: a view that outlived its owner names the holder
  // and the release; an unwaited collective names the missing wait; an
  // expectation names the program's own intent; growth and exit only say
  // that memory stayed.
  static const std::vector<std::string> order = {kResidualView, kUnwaitedCollective, kExpectFreed,
                                                 kStepGrowth,   kLeakedByBlock,      kLeakedAtExit};
  auto it = std::find(order.begin(), order.end(), kind);
  return it == order.end() ? -1 : static_cast<int>(it - order.begin());
}

void attribute_retained_memory(std::vector<Finding>& findings) {
  std::vector<size_t> order(findings.size());
  std::iota(order.begin(), order.end(), 0);
  auto rank = [&](size_t i) {
    const int r = cause_rank(findings[i].kind);
    // Evidence-only findings are merged last; kinds outside the order are
    // left alone.
    return findings[i].evidence_only ? 1000 : r;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rank(a) < rank(b); });

  std::unordered_map<uint64_t, size_t> owner_of;  // allocation seq -> claiming finding
  std::vector<bool> drop(findings.size(), false);
  for (size_t i : order) {
    Finding& f = findings[i];
    if (rank(i) < 0) continue;
    if (f.retains.empty()) {
      if (f.evidence_only) drop[i] = true;
      continue;
    }
    std::vector<Finding::Retained> kept;
    std::unordered_map<size_t, uint64_t> claimed_bytes;  // by the claiming finding
    for (const Finding::Retained& r : f.retains) {
      auto [it, fresh] = owner_of.try_emplace(r.alloc_seq, i);
      if (fresh || it->second == i)
        kept.push_back(r);
      else
        claimed_bytes[it->second] += r.bytes;
    }
    for (const auto& [winner, bytes] : claimed_bytes) {
      nlohmann::json& also = findings[winner].evidence["also_seen_as"];
      if (!also.is_array()) also = nlohmann::json::array();
      nlohmann::json seen = {{"kind", f.kind}, {"bytes", bytes}, {"message", f.message}};
      for (const char* key : {"gap", "storages", "steps"})
        if (f.evidence.contains(key)) seen[key] = f.evidence[key];
      also.push_back(std::move(seen));
    }
    if (f.evidence_only || kept.empty()) {
      drop[i] = true;
      continue;
    }
    if (kept.size() != f.retains.size()) {
      uint64_t bytes = 0;
      for (const auto& r : kept) bytes += r.bytes;
      f.bytes = bytes;
      f.retains = std::move(kept);
    }
  }
  size_t out = 0;
  for (size_t i = 0; i < findings.size(); ++i)
    if (!drop[i]) {
      if (out != i) findings[out] = std::move(findings[i]);
      ++out;
    }
  findings.resize(out);
}

namespace {

// `__main__.history[3].grad_fn._saved_self` -> `__main__.history[*].grad_fn._saved_self`:
// one holder for every element of a container.
std::string generalize(const std::string& path) {
  std::string out;
  out.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '[') {
      out += path[i];
      continue;
    }
    const size_t close = path.find(']', i);
    if (close == std::string::npos) {
      out += path.substr(i);
      break;
    }
    out += "[*]";
    i = close;
  }
  return out;
}

}  // namespace

HolderPath parse_holder_label(std::string_view label, uint64_t step) {
  HolderPath h;
  h.step = step;
  size_t end = label.find('\n');
  h.path = std::string(label.substr(0, end));
  while (end != std::string_view::npos) {
    const size_t begin = end + 1;
    end = label.find('\n', begin);
    std::string_view site = label.substr(begin, end == std::string_view::npos ? end : end - begin);
    if (!site.empty()) h.stored_at.emplace_back(site);
  }
  return h;
}

namespace {

// The key of the bound the walk writes on a container a running loop makes
// anew at each pass (`<list loop_line=11>`, python/memlife/_holders.py).
constexpr std::string_view kLoopBound = "loop_line=";
// What a program makes anew in an epoch-start hook of its class
// (`<list epoch_hook_line=27>`, python/memlife/_holders.py).
constexpr std::string_view kEpochHookBound = "epoch_hook_line=";
// A torchmetrics or torcheval metric first computed after its last update
// (`<BinaryAUROC computed_after_updates=40>`, python/memlife/_holders.py).
constexpr std::string_view kComputedBound = "computed_after_updates=";

// `main().preds<list loop_line=11>[3]` -> `main().preds[3]`.
std::string without_annotations(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  int depth = 0;
  for (const char c : path) {
    if (c == '<') ++depth;
    if (depth == 0) out += c;
    if (c == '>' && depth > 0) --depth;
  }
  return out;
}

}  // namespace

bool loses_a_loop_bound(std::string_view earlier, std::string_view later) {
  return earlier.find(kLoopBound) != std::string_view::npos &&
         later.find(kLoopBound) == std::string_view::npos &&
         without_annotations(earlier) == without_annotations(later);
}

void name_holders(std::vector<Finding>& findings, const Model& m) {
  const std::unordered_map<uint64_t, HolderPath>& holder_of_alloc = m.holder_of_alloc;
  if (holder_of_alloc.empty()) return;
  for (Finding& f : findings) {
    const bool judged_at_end = f.kind == kLeakedByBlock || f.kind == kLeakedAtExit;
    struct Holder {
      std::string example;
      uint64_t bytes = 0, allocations = 0, step = 0;
      std::vector<std::string> stored_at;
    };
    std::vector<std::pair<std::string, Holder>> holders;  // in first-seen order
    for (const Finding::Retained& r : f.retains) {
      auto it = holder_of_alloc.find(r.alloc_seq);
      if (it == holder_of_alloc.end() || (judged_at_end && m.holder_gone(it->second))) continue;
      const std::string key = generalize(it->second.path);
      auto h = std::find_if(holders.begin(), holders.end(),
                            [&](const auto& e) { return e.first == key; });
      if (h == holders.end()) {
        holders.push_back(
            {key, Holder{it->second.path, 0, 0, it->second.step, it->second.stored_at}});
        h = holders.end() - 1;
      }
      h->second.bytes += r.bytes;
      ++h->second.allocations;
    }
    if (holders.empty()) continue;
    std::stable_sort(holders.begin(), holders.end(),
                     [](const auto& a, const auto& b) { return a.second.bytes > b.second.bytes; });
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [key, h] : holders) {
      if (list.size() == 8) break;
      nlohmann::json entry = {{"path", key},
                              {"example", h.example},
                              {"bytes", h.bytes},
                              {"allocations", h.allocations},
                              {"walk_step", h.step}};
      if (!h.stored_at.empty()) entry["stored_at"] = h.stored_at;
      list.push_back(std::move(entry));
    }
    f.evidence["held_by"] = std::move(list);
    // A residual view's holder is its view (evidence.tensors); the paths
    // are where the program reached that memory when it was walked.
    if (f.kind == kResidualView) continue;
    const auto& [lead_path, lead] = holders.front();
    if (lead_path.starts_with(HolderPath::kCycleRoot)) {
      // Memory a cycle keeps: the message names the cycle itself, its
      // shortest path (from a tensor of the cycle back to it), not what
      // hangs off it (an optimizer's state); held_by has both.
      const std::string* cycle = &lead_path;
      for (const auto& [path, h] : holders)
        if (path.starts_with(HolderPath::kCycleRoot) && path.size() < cycle->size()) cycle = &path;
      f.message +=
          "; held by a reference cycle that gc.collect() could not free (one of its "
          "references is held in C++, where the collector cannot see it): " +
          cycle->substr(HolderPath::kCycleRoot.size());
      // The cycle PyTorch warns of (pytorch/pytorch#7343): a gradient made
      // by backward(create_graph=True) keeps its graph, whose AccumulateGrad
      // node keeps the parameter that keeps the gradient.
      if (cycle->find(".grad.grad_fn<") != std::string::npos &&
          cycle->ends_with("<AccumulateGrad>.variable"))
        f.message +=
            " (a gradient made by backward(create_graph=True) whose graph holds its "
            "parameter: set the parameter's .grad to None after use, or use "
            "torch.autograd.grad)";
      continue;
    }
    f.message += "; held by " + lead_path;
    if (!lead.stored_at.empty()) {
      f.message += ", stored at ";
      for (size_t i = 0; i < lead.stored_at.size(); ++i)
        f.message += (i ? ", " : "") + lead.stored_at[i];
    }
  }
}

namespace {

// The bound a holder path declares (`maxlen=10000` from
// `main().buffer<deque maxlen=10000>[*]`): the walk writes a container that
// evicts by itself as `<Type key=N>` (a deque's maxlen, an lru_cache's
// maxsize, LBFGS's history_size); empty when none.
std::string bound_of(std::string_view path) {
  for (size_t open = path.find('<'); open != std::string_view::npos;
       open = path.find('<', open + 1)) {
    const size_t close = path.find('>', open);
    if (close == std::string_view::npos) break;
    const std::string_view inside = path.substr(open + 1, close - open - 1);
    const size_t space = inside.find(' '), equals = inside.find('=');
    if (space == std::string_view::npos || equals == std::string_view::npos || equals < space)
      continue;
    const std::string_view number = inside.substr(equals + 1);
    if (!number.empty() && number.find_first_not_of("0123456789") == std::string_view::npos)
      return std::string(inside.substr(space + 1));
  }
  return {};
}

// Whether a holder path's bound keeps the growth it holds bounded. A loop's
// pass, an epoch hook or a metric's compute bounds the container, not what
// each entry keeps: autograd graphs kept for a whole epoch
// (`epoch_losses.append(loss)`, pytorch#64586's pattern) are a bug however
// often the list is made anew.
bool bounds_growth(std::string_view path) {
  const std::string bound = bound_of(path);
  if (bound.empty()) return false;
  const bool bounds_the_container_only = bound.starts_with(kLoopBound) ||
                                         bound.starts_with(kEpochHookBound) ||
                                         bound.starts_with(kComputedBound);
  return !(bounds_the_container_only && path.find(".grad_fn") != std::string_view::npos);
}

// A holder that is what one slot holds now, a single allocation: a
// variable (`main().xb`, `__main__.logits`) or an attribute reached by
// names alone, no container's element (`main().model.0.weight.grad`). It
// holds the latest of what its line makes, replaced at each step (the last
// step's batch, this step's gradient), which a site's growth counts beside
// what accumulated: one allocation, so it explains no growth and says
// nothing of a bound.
bool a_slots_current_value(const nlohmann::json& holder) {
  return holder.value("allocations", uint64_t{0}) == 1 &&
         without_annotations(holder.value("path", "")).find('[') == std::string::npos;
}

// A number: what a 0-d (or one-element) tensor allocates, 8 bytes at most.
constexpr uint64_t kOneNumberBytes = 8;

// Growth of one number at a time (every allocation it retains holds at most
// one: a step's loss, an accuracy, but for what a variable holds now: the
// last step's batch), held where the walk named it, none of it with an
// autograd graph: a record the program keeps of its run (fastai's
// Recorder.losses, `losses.append(loss.detach())`), as long as the run by
// design. Its holder's path; empty when it is no such record: a loss
// appended undetached is still a leak (PyTorch's FAQ: its graph's nodes
// stay, which memlife does not see), and so is growth no walk named.
std::string record_of_numbers(const Finding& f) {
  const auto held = f.evidence.find("held_by");
  if (held == f.evidence.end() || f.retains.empty()) return {};
  uint64_t more_than_numbers = 0, current_values = 0;
  for (const Finding::Retained& r : f.retains)
    if (r.bytes > kOneNumberBytes) more_than_numbers += r.bytes;
  std::string lead;
  for (const nlohmann::json& h : *held) {
    // The last step's loss, still in its variable with its graph, is no
    // part of the record (`losses.append(loss.detach())` shares its storage).
    if (a_slots_current_value(h)) {
      current_values += h.value("bytes", uint64_t{0});
      continue;
    }
    const std::string path = h.value("path", "");
    if (path.find(MEMLIFE_HOLDER_NUMBER_WITH_GRAPH) != std::string::npos) return {};
    if (lead.empty()) lead = path;
  }
  return more_than_numbers <= current_values ? lead : std::string();
}

// Growth freed inside one of step_growth's reset windows: its evidence
// field, and why that is no leak.
struct ResetReason {
  const char* field;
  const char* why;
  const char* reason;
};
// A block's leak that only replaces what an earlier call kept.
constexpr std::string_view kReplacedReason =
    "one call's worth, replaced: the block freed as much memory that the same code had made "
    "before it and the same container held (a framework keeping its last call's results: "
    "Lightning's predict loop, a cached trainer), so the next call frees this in turn";

constexpr ResetReason kResets[] = {
    {"freed_by_metric_reset_bytes", "metric_reset",
     "a metric's accumulated state: torchmetrics keeps every update of a list-state metric until "
     "reset(), and the program reset it (Lightning does at each epoch's end), so it grew for the "
     "period the program chose"},
    {"freed_at_epoch_end_bytes", "epoch_end",
     "kept for the epoch and freed at its end (Lightning's on_train_epoch_end: its documented "
     "self.training_step_outputs.clear(); an HF TrainerCallback's or a Keras callback's "
     "on_epoch_end; an ignite EPOCH_COMPLETED handler), so it grew for one epoch"}};

// What keeps a container within the bound the walk wrote.
std::string what_bounds(std::string_view bound) {
  const std::string number(bound.substr(bound.find('=') + 1));
  // An epoch-wise ignite metric (its engine's epoch_length), a fastai
  // Learner's metrics (its training epoch's length).
  if (bound.starts_with("epoch_length="))
    return "its trainer resets it at each epoch's start (an ignite engine, a fastai Learner's "
           "Recorder)";
  // A dataset's per-sample cache: its dataset's length.
  if (bound.starts_with("dataset_len="))
    return "a dataset's cache keyed by sample index, one entry per sample at most";
  // A container a loop makes anew (or empties) at each pass: an epoch's outputs.
  if (bound.starts_with(kLoopBound))
    return "the program makes it anew (or empties it) at each pass of a running loop (its "
           "function's or its caller's, at line " +
           number + "), so it holds one pass's worth (an epoch's outputs)";
  // What an epoch-start hook makes anew: one epoch's state.
  if (bound.starts_with(kEpochHookBound))
    return "the program makes it anew in an epoch-start hook of its class (Lightning's "
           "on_train_epoch_start, SpeechBrain's on_stage_start, on_epoch_begin, ..., at line " +
           number + "), so it holds one epoch's worth";
  // A torchmetrics or torcheval metric computed once, after its last update.
  if (bound.starts_with(kComputedBound))
    return "a metric's state (torchmetrics, torcheval), first computed after its last update "
           "(update " +
           number +
           "): a list-state metric keeps every update until the program computes it, and "
           "nothing was added after that compute (one computed and then updated again without "
           "reset() grows on, and is reported)";
  return "its container evicts by itself";
}

}  // namespace

nlohmann::json set_aside_growth(std::vector<Finding>& findings) {
  nlohmann::json set_aside = nlohmann::json::array();
  std::vector<Finding> kept;
  kept.reserve(findings.size());
  for (Finding& f : findings) {
    if (f.kind == kLeakedByBlock && f.bytes != 0 &&
        f.evidence.value("replaced_bytes", uint64_t{0}) >= f.bytes) {
      set_aside.push_back({{"why", "replaced"},
                           {"reason", std::string(kReplacedReason)},
                           {"bytes", f.bytes},
                           {"growth", f.message}});
      continue;
    }
    if (f.kind != kStepGrowth) {
      kept.push_back(std::move(f));
      continue;
    }
    nlohmann::json entry;
    // What only slots' current values name (a gradient the walk saw while
    // it was the parameter's) is no more held by the program than what no
    // walk named: the backend's or the collector's to free.
    uint64_t named = 0, in_bounded = 0;
    const nlohmann::json* lead = nullptr;
    if (const auto held = f.evidence.find("held_by"); held != f.evidence.end()) {
      for (const nlohmann::json& h : *held) {
        const uint64_t bytes = h.value("bytes", uint64_t{0});
        if (a_slots_current_value(h)) continue;
        named += bytes;
        if (!bounds_growth(h.value("path", ""))) continue;
        in_bounded += bytes;
        if (lead == nullptr) lead = &h;
      }
    }
    if (lead != nullptr && in_bounded * 10 >= named * 9) {
      const std::string path = lead->value("path", "");
      const std::string bound = bound_of(path);
      entry = {{"why", "bounded"},
               {"reason", "bounded: " + what_bounds(bound) + ", " + bound},
               {"path", path},
               {"bound", bound}};
      if (lead->contains("stored_at")) entry["stored_at"] = (*lead)["stored_at"];
    } else if (const std::string numbers = record_of_numbers(f); !numbers.empty()) {
      entry = {{"why", "numbers"},
               {"reason",
                "a record of numbers: each allocation it keeps is one number (at most 8 bytes: "
                "a 0-d tensor) with no autograd graph, a value per step that the program keeps "
                "by design (a loss history), " +
                    format_bytes(f.evidence.value("bytes_per_step", uint64_t{0})) +
                    " per step; on a GPU each takes a 512-byte block of the caching allocator"},
               {"path", numbers}};
    } else if (named == 0) {
      const uint64_t buffers = f.evidence.value("collective_buffer_bytes", uint64_t{0});
      const uint64_t collected = f.evidence.value("freed_by_exit_collection_bytes", uint64_t{0});
      const uint64_t retained = f.evidence.value("retained_bytes", uint64_t{0});
      if (buffers != 0 && buffers * 10 >= retained * 9)
        entry = {{"why", "collective_buffers"},
                 {"reason", "collective buffers the backend keeps until it reaps their works"}};
      else if (collected != 0 && collected * 10 >= retained * 9)
        entry = {{"why", "cyclic_garbage"},
                 {"reason",
                  "unreachable garbage on reference cycles: the gc.collect() memlife ran at exit "
                  "freed it, the program's collector had not yet (disabled by gc.disable(), or no "
                  "full collection due)"}};
    }
    // Named or not, growth that the program emptied at a reset it chose
    // (step_growth's reset windows) grew for that period, not without bound.
    const uint64_t retained = f.evidence.value("retained_bytes", uint64_t{0});
    for (const auto& [field, why, reason] : kResets) {
      const uint64_t freed = f.evidence.value(field, uint64_t{0});
      if (entry.is_null() && freed != 0 && freed * 10 >= retained * 9)
        entry = {{"why", why}, {"reason", reason}};
    }
    if (entry.is_null()) {
      kept.push_back(std::move(f));
      continue;
    }
    entry["bytes"] = f.bytes;
    entry["growth"] = f.message;
    set_aside.push_back(std::move(entry));
  }
  findings = std::move(kept);
  return set_aside;
}

namespace {

// What the holder walk (python/memlife/_holders.py) cannot enter.
constexpr std::string_view kWhatNoWalkEnters =
    "a C++ object such as an extension's cache or TorchScript's compilation unit, or the inner "
    "tensors of a tensor subclass";

}  // namespace

void name_cxx_holders(std::vector<Finding>& findings, const Model& m, StackResolver& stacks) {
  std::unordered_map<uint64_t, const Census::Entry*> at_census;  // storage id -> entry
  for (const Census::Entry& e : m.census.storages) at_census[e.storage_id] = &e;
  if (at_census.empty()) return;
  std::unordered_map<uint64_t, uint64_t> storage_of_alloc;  // live allocation seq -> storage
  for (const auto& [address, a] : m.allocations)
    if (a.storage_id != 0) storage_of_alloc[a.at.seq] = a.storage_id;
  for (Finding& f : findings) {
    if ((f.kind != kStepGrowth && f.kind != kLeakedByBlock && f.kind != kExpectFreed) ||
        f.evidence.contains("held_by"))
      continue;
    nlohmann::json held = nlohmann::json::array();
    std::string op;
    for (const Finding::Retained& r : f.retains) {
      auto storage = storage_of_alloc.find(r.alloc_seq);
      if (storage == storage_of_alloc.end()) continue;
      auto entry = at_census.find(storage->second);
      if (entry == at_census.end()) continue;
      for (const format::CensusHolder& h : entry->second->holders) {
        const Tensor* t = m.tensor(h.tensor_id);
        if (t == nullptr || t->made_in_op_string == 0 || held.size() >= 16) continue;
        if (op.empty()) op = std::string(m.str(t->made_in_op_string));
        held.push_back({{"tensor_id", h.tensor_id},
                        {"op", std::string(m.str(t->op_string))},
                        {"made_in_op", std::string(m.str(t->made_in_op_string))},
                        {"stack", stacks.frames(t->stack_id)}});
      }
    }
    if (held.empty()) continue;
    f.evidence["held_in_cxx"] = std::move(held);
    f.message += "; held in C++ by a tensor made inside " + op;
  }
}

void say_what_no_walk_reached(std::vector<Finding>& findings, const Model& m) {
  const When& walk = m.last_complete_walk_end;
  if (m.last_complete_walk == 0) return;  // no walk (no Python hooks) proves nothing
  // Only memory the walk could have reached counts: made before it and
  // still allocated at the end of the trace, so at the walk too. Memory
  // freed before the end may have been freed before the walk (the exit
  // walk, after a test's frame and the mock keeping its arguments were
  // gone): that walk says nothing of who held it.
  std::unordered_set<uint64_t> live_at_end;  // allocation seqs
  for (const auto& [address, a] : m.allocations) live_at_end.insert(a.at.seq);
  for (Finding& f : findings) {
    if (f.kind != kStepGrowth || f.evidence.contains("held_by") ||
        f.evidence.contains("held_in_cxx"))
      continue;
    uint64_t allocations = 0, bytes = 0;
    for (const Finding::Retained& r : f.retains)
      if (r.alloc_seq < walk.seq && live_at_end.count(r.alloc_seq) != 0) {
        ++allocations;
        bytes += r.bytes;
      }
    if (allocations == 0) continue;
    f.evidence["holder_search"] = {{"walk_step", walk.step},
                                   {"allocations", allocations},
                                   {"bytes", bytes},
                                   {"reached", false},
                                   {"not_entered", kWhatNoWalkEnters}};
    f.message += "; no Python reference path reached it at the walk of step " +
                 std::to_string(walk.step) +
                 " (held where the walk does not look: " + std::string(kWhatNoWalkEnters) + ")";
  }
}

}  // namespace memlife::analysis
