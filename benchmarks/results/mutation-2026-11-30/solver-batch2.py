import subprocess, sys
B='src/assign/budget_solver.cpp'; P='src/assign/problem.cpp'; T='src/assign/time_model.cpp'
L='src/assign/link_fit.cpp'; G='src/assign/groups.cpp'; S='src/assign/solve.cpp'
E='src/assign/exact_solver.cpp'; V='src/assign/variance_weight.cpp'; W='src/assign/bit_widths.cpp'
M = [
 ("P01", P, "t = std::max(t, problem.time.channel_time(static_cast<int32_t>(c), count[c] * rb));", "t += problem.time.channel_time(static_cast<int32_t>(c), count[c] * rb);"),
 ("P02", P, "if (!std::isfinite(problem.hidden_s) || problem.hidden_s < 0) {", "if (problem.hidden_s < 0) {"),
 ("P03", P, "if (!std::isfinite(cost.alpha) || cost.alpha < 0 || !std::isfinite(cost.beta) ||", "if (!std::isfinite(cost.alpha) || !std::isfinite(cost.beta) ||"),
 ("P04", P, "const bool ok = s == r ? c == -1 : c >= 0 && static_cast<size_t>(c) < tm.channels.size();", "const bool ok = s == r ? true : c >= 0 && static_cast<size_t>(c) < tm.channels.size();"),
 ("P05", P, "const bool ranks_ok = m.sender >= 0 && m.sender < tm.world_size && m.receiver >= 0 &&\n                          m.receiver < tm.world_size && m.sender != m.receiver;", "const bool ranks_ok = m.sender >= 0 && m.sender < tm.world_size && m.receiver >= 0 &&\n                          m.sender != m.receiver;"),
 ("P06", P, "if (!ranks_ok || !std::isfinite(m.weight) || m.weight < 0) {", "if (!ranks_ok || m.weight < 0) {"),
 ("P07", P, "if (run_channel >= 0) count[run_channel] += run;\n  ObjectiveBounds b;", "ObjectiveBounds b;"),
 ("P08", P, "if (!quant::valid_bits(b)) continue;", ""),
 ("P09", P, "b.tmax = std::max(uniform_time(problem, count, hi), problem.hidden_s);", "b.tmax = uniform_time(problem, count, hi);"),
 ("P10", P, "bytes[problem.time.channel(m.sender, m.receiver)] += row[bits[j]];", "bytes[problem.time.channel(m.receiver, m.sender)] += row[bits[j]];"),
 ("T01", T, "model.channels.push_back(costs[static_cast<size_t>(s) * world_size + r]);", "model.channels.push_back(costs[static_cast<size_t>(r) * world_size + s]);"),
 ("T02", T, "model.class_of_channel.push_back(static_cast<int8_t>(c % kLinkClasses));", "model.class_of_channel.push_back(static_cast<int8_t>(c / kLinkClasses % kLinkClasses));"),
 ("T03", T, "if (world_size < 1) throw", "if (world_size < 0) throw"),
 ("T04", T, "kLinkClasses * s + link_class(host_of, s, r);", "kLinkClasses * s + link_class(host_of, r, s);"),
 ("L01", L, ": (sorted[mid - 1].seconds + sorted[mid].seconds) / 2;", ": sorted[mid].seconds;"),
 ("L02", L, "const double median = (j - i) % 2 == 1 ? sorted[mid].seconds", "const double median = (j - i) % 2 == 1 ? sorted[i].seconds"),
 ("L03", L, "const double w = relative ? 1 / (m.seconds * m.seconds) : 1;\n    total += w;", "const double w = relative ? 1 / m.seconds : 1;\n    total += w;"),
 ("L04", L, "sxy += w * dx * (m.seconds - mean_y);", "sxy += w * dx * m.seconds;"),
 ("L05", L, "if (!(fit.beta > 0)) {", "if (fit.beta < 0) {"),
 ("L06", L, "if (samples[i].bytes < 0 || !std::isfinite(samples[i].seconds)) {", "if (samples[i].bytes < 0) {"),
 ("L07", L, "fit.r2 = syy > 0 ? 1 - residual / syy : 1;", "fit.r2 = syy > 0 ? 1 - residual / syy : 0;"),
 ("L08", L, "for (const TimingSample& m : medians) {\n    const double w = relative ? 1 / (m.seconds * m.seconds) : 1;\n    const double dx", "for (const TimingSample& m : medians) {\n    const double w = 1;\n    const double dx"),
 ("V01", V, "ADAQP_CHECK_GE(coeff_sq_sum, 0.0, \"coefficient square sum\");", ""),
 ("V02", V, "ADAQP_CHECK(row_width >= 1 && range >= 0,", "ADAQP_CHECK(row_width >= 1,"),
 ("G01", G, "if (group_size == 1) {", "if (group_size == 0) {"),
 ("G02", G, "int32_t& current = open[static_cast<size_t>(m.sender) * world + m.receiver];", "int32_t& current = open[static_cast<size_t>(m.receiver) * world + m.sender];"),
 ("G03", G, "int32_t& current = open[static_cast<size_t>(m.sender) * world + m.receiver];", "int32_t& current = open[static_cast<size_t>(m.sender)];"),
 ("G04", G, "return ba != bb ? ba < bb : variance_factor(a) > variance_factor(b);", "return ba < bb;"),
 ("S01", S, "return lambda >= 1 ? *hi : *lo;", "return lambda >= 1 ? codec_width_range(bits).second : *lo;"),
 ("S02", S, "if (!(options.lambda >= 0 && options.lambda <= 1)) {", "if (options.lambda < 0 || options.lambda > 1) {"),
 ("S03", S, "if (!(options.exact_time_limit_s > 0 && options.exact_time_limit_s <= 1e6)) {", "if (!(options.exact_time_limit_s > 0)) {"),
 ("S04", S, "if (lambda > 0 && lambda < 1) return 0;", "if (lambda >= 0 && lambda < 1) return 0;"),
 ("E01", E, "glp_set_obj_coef(lp.get(), t_col, dt > 0 ? 1 - lambda : 0);", "glp_set_obj_coef(lp.get(), t_col, dt > 0 ? lambda : 0);"),
 ("E02", E, "glp_set_obj_coef(lp.get(), 0, dv > 0 ? -lambda * bounds.vmin / dv : 0);", ""),
 ("E03", E, "glp_set_col_bnds(lp.get(), t_col, GLP_LO, 0, 0);", "glp_set_col_bnds(lp.get(), t_col, GLP_FR, 0, 0);"),
 ("E04", E, "GLP_UP, 0, (bounds.tmin - cost.alpha) / dt);", "GLP_UP, 0, bounds.tmin / dt);"),
 ("E05", E, "result.proven_optimal = rc == 0 && status == GLP_OPT;", "result.proven_optimal = true;"),
 ("E06", E, "if (glp_mip_col_val(lp.get(), col) > glp_mip_col_val(lp.get(), col - k + chosen)) chosen = k;", "if (glp_mip_col_val(lp.get(), col) >= glp_mip_col_val(lp.get(), col - k + chosen)) chosen = k;"),
 ("W01", W, "return dir == Direction::kForward ? boundary.send_keys : boundary.recv_keys;", "return boundary.send_keys;"),
 ("W02", W, "static_cast<int>((static_cast<uint64_t>(w.v[0]) * quant::kNumWidths) >> 32));", "static_cast<int>(w.v[0] % quant::kNumWidths));"),
 ("W03", W, "if (layer < 0 || static_cast<size_t>(layer) >= traces.size() || traces[layer].width == 0) {", "if (layer < 0 || static_cast<size_t>(layer) >= traces.size()) {"),
 ("W04", W, "MessageBits{widths(send, opt, epoch, l, dir), widths(recv, opt, epoch, l, dir)});", "MessageBits{widths(send, opt, epoch, l, dir), widths(send, opt, epoch, l, dir)});"),
 ("W05", W, "if (opt.scheme == BitScheme::kUniform && !quant::valid_bits(opt.bits)) {", "if (false) {"),
]
only = sys.argv[1:]
for mid, f, old, new in M:
    if only and mid not in only: continue
    r = subprocess.run(["python3", "/tmp/mut-b-work/mut.py", mid, f, old, new], capture_output=True, text=True)
    print(r.stdout.strip(), r.stderr.strip()[-500:], flush=True)
