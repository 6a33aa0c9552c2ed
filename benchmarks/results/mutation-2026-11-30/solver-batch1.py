import subprocess, sys
B='src/assign/budget_solver.cpp'; P='src/assign/problem.cpp'; T='src/assign/time_model.cpp'
L='src/assign/link_fit.cpp'; G='src/assign/groups.cpp'; S='src/assign/solve.cpp'
E='src/assign/exact_solver.cpp'; V='src/assign/variance_weight.cpp'; W='src/assign/bit_widths.cpp'
M = [
 ("B01", B, "if (k + 1 < o.size() && o.bytes[k + 1] == o.bytes[k]) continue;", "if (false && k + 1 < o.size() && o.bytes[k + 1] == o.bytes[k]) continue;"),
 ("B02", B, "if (!hull.empty() && o.factor[k] >= o.factor[hull.back()]) continue;", ""),
 ("B03", B, "while (hull.size() >= 2) {", "while (false && hull.size() >= 2) {"),
 ("B04", B, "item_base_[i] = groups.weight[i] > 0 ? hull_[0] : 0;", "item_base_[i] = hull_[0];"),
 ("B05", B, "base_bytes_[groups.channel[i]] += groups.count(i) * opt.bytes[item_base_[i]];", "base_bytes_[groups.channel[i]] += opt.bytes[item_base_[i]];"),
 ("B06", B, "if (!upgrades || groups.weight[i] == 0) continue;", "if (!upgrades) continue;"),
 ("B07", B, "descending_key(groups.weight[i] / count)", "descending_key(groups.weight[i])"),
 ("B08", B, "step_gain[k] = opt.factor[hull_[k - 1]] - opt.factor[hull_[k]];", "step_gain[k] = opt.factor[hull_[0]] - opt.factor[hull_[k]];"),
 ("B09", B, "if (head_value[k] > head_value[best]) best = k;", "if (head_value[k] >= head_value[best]) best = k;"),
 ("B10", B, "cum_gain += key_value(g.key) * g.count * step_gain[best];", "cum_gain += key_value(g.key) * step_gain[best];"),
 ("B11", B, "const int64_t bytes = base_bytes_[c] + (k > 0", "const int64_t bytes = (k > 0"),
 ("B12", B, "if (time_after(c, mid + 1) <= tau) {", "if (time_after(c, mid + 1) < tau) {"),
 ("B13", B, "double start = bounds.tmin, end = 0;", "double start = 0, end = 0;"),
 ("B14", B, "if (normalized_objective(bounds, lambda, variance[i + 1], lo) > std::min(threshold, best)) {", "if (normalized_objective(bounds, lambda, variance[i], lo) > std::min(threshold, best)) {"),
 ("B15", B, "while (!heap.empty() && heap.front().first <= hi) {", "while (!heap.empty() && heap.front().first < hi) {"),
 ("B16", B, "if (!heap.empty() && heap.front().first == tau) continue;", ""),
 ("B17", B, "if (objective < best) {", "if (objective <= best) {"),
 ("B18", B, "if (option[i] != hull_[pos - 1]) continue;", ""),
 ("B19", B, "if (time_.channel_time(static_cast<int32_t>(c), bytes + step_bytes) > tau) continue;", "if (time_.channel_time(static_cast<int32_t>(c), bytes + step_bytes) >= tau) continue;"),
 ("B20", B, "if (time_.channel_time(static_cast<int32_t>(c), bytes + step_bytes) > tau) continue;", "if (time_.channel_time(static_cast<int32_t>(c), bytes + step_bytes) > tau) break;"),
 ("B21", B, "threshold = i == 0 ? objective : std::min(threshold, objective);", "threshold = i == 0 ? objective : std::max(threshold, objective);"),
 ("B22", B, "end = std::max(end, start);", ""),
]
only = sys.argv[1:]
for mid, f, old, new in M:
    if only and mid not in only: continue
    r = subprocess.run(["python3", "/tmp/mut-b-work/mut.py", mid, f, old, new], capture_output=True, text=True)
    print(r.stdout.strip(), r.stderr.strip()[-500:], flush=True)
