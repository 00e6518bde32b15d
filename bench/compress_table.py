#!/usr/bin/env python3
"""The -c comparison table, for bench/compress_wan.sh and
bench/compress_loopback.sh: rows "data -c round seconds MB/s wire/file"
(data text|rand, -c none|-c) in, a markdown table of medians and the
issue's two ratios out (text: time without -c / with, target >= 2x;
random: time with -c / without, target <= 1.05).

bench/compress_table.py RESULTS
"""
import statistics
import sys

rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print("| data | -c | runs | median s | min-max s | MB/s (file) | wire/file |")
print("|---|---|---|---|---|---|---|")
med = {}
for f in ("text", "rand"):
    for c in ("none", "-c"):
        s = [float(r[3]) for r in rows if r[0] == f and r[1] == c]
        if not s:
            print("| %s | %s | 0 | - | - | - | - |" % (f, c))
            continue
        w = [float(r[5]) for r in rows if r[0] == f and r[1] == c]
        mb = [float(r[4]) for r in rows if r[0] == f and r[1] == c]
        med[f, c] = statistics.median(s)
        print("| %s | %s | %d | %.2f | %.2f-%.2f | %.1f | %.3f |" % (
            f, c, len(s), med[f, c], min(s), max(s), statistics.median(mb),
            statistics.median(w)))
print()
if ("text", "none") in med and ("text", "-c") in med:
    t = med["text", "none"] / med["text", "-c"]
    print("- text logs: -c %.2fx faster (target >= 2x: %s)" %
          (t, "met" if t >= 2 else "MISSED"))
if ("rand", "none") in med and ("rand", "-c") in med:
    q = med["rand", "-c"] / med["rand", "none"]
    print("- random: -c takes %.3fx the time (target <= 1.05: %s)" %
          (q, "met" if q <= 1.05 else "MISSED"))
