import subprocess, sys
T='src/assign/time_model.cpp'; L='src/assign/link_fit.cpp'; V='src/assign/variance_weight.cpp'; E='src/assign/exact_solver.cpp'
M = [
 ("T05", T, "kLinkClasses * s + link_class(host_of, s, r);", "kLinkClasses * r + link_class(host_of, s, r);"),
 ("L09", L, "if (sizes.empty() || size > sizes.back()) sizes.push_back(size);", "sizes.push_back(size);"),
 ("V03", V, "return static_cast<double>(row_width) * range * range / 6.0;", "return static_cast<double>(row_width) * range * range / 12.0;"),
 ("E07", E, "ar.push_back(cost.beta * static_cast<double>(groups.count(i) * opt.bytes[k]) / dt);", "ar.push_back(cost.beta * static_cast<double>(opt.bytes[k]) / dt);"),
]
for mid, f, old, new in M:
    r = subprocess.run(["python3", "/tmp/mut-b-work/mut.py", mid, f, old, new], capture_output=True, text=True)
    print(r.stdout.strip(), r.stderr.strip()[-500:], flush=True)
