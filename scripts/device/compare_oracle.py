# compare_oracle.py TORCH_EVENTS.json MEMLIFE_EVENTS.json: per "address:size"
# alloc and free counts; prints the share of torch's events memlife matched.
import json, sys

torch_ev = json.load(open(sys.argv[1]))
ml = json.load(open(sys.argv[2]))
result = {}
for kind in ("alloc", "free_requested", "free_completed"):
    t, m = torch_ev.get(kind, {}), ml.get(kind, {})
    total = sum(t.values())
    matched = sum(min(n, m.get(k, 0)) for k, n in t.items())
    result[kind] = {"torch": total, "memlife": sum(m.values()), "matched": matched,
                    "match_pct": round(100.0 * matched / total, 3) if total else None}
print(json.dumps(result))
