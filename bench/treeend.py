#!/usr/bin/env python3
"""How long lanecp's end takes over an emulated WAN (issue 23, nomore23).

    tcpdump -r PCAP -n -tt > PCAP.txt
    bench/treeend.py PCAP.txt PCAP.runs

PCAP: bench/run.sh --case tree-lfn1g with TREE_WAN_PCAP=PCAP (headers of
both directions on lcwb in the sink's namespace; the client is 10.77.0.1,
sshd listens on 2222).  For each lanecp run in PCAP.runs ("config run rc
t0 t1") it prints the time from the last data segment with file bytes in
it (client to server, not the SSH connection, more than 100 bytes of
payload: an END frame alone is 40) to the client's exit, and the medians
per config.  The capture is at the sink's end, so a segment is stamped as
it arrives there; the exit is the client's.  What it measures: the wait
the end of a copy adds after the last file's data, which SINK_NOMORE
shortens by the round trip the sink spent waiting for the streams' END.
"""
import bisect
import re
import statistics
import sys

PKT = re.compile(r'^(\d+\.\d+) IP ([0-9.]+)\.(\d+) > ([0-9.]+)\.(\d+): '
                 r'.*?length (\d+)')
CLIENT = '10.77.0.1'
SSHPORT = 2222


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    pk = []
    with open(sys.argv[1]) as f:
        for line in f:
            m = PKT.match(line)
            if m:
                pk.append((float(m.group(1)), m.group(2), int(m.group(5)),
                           int(m.group(6))))
    ts = [p[0] for p in pk]
    ends = {}
    with open(sys.argv[2]) as f:
        for line in f:
            cfg, run, rc, t0, t1 = line.split()
            if not cfg.startswith('lanecp') or rc != '0':
                continue
            t0, t1 = float(t0), float(t1)
            w = pk[bisect.bisect_left(ts, t0):bisect.bisect_right(ts, t1)]
            data = [p[0] for p in w if p[1] == CLIENT and p[2] != SSHPORT
                    and p[3] > 100]
            if not data:
                continue
            end = t1 - max(data)
            ends.setdefault(cfg, []).append(end)
            print('%s %s last file data to exit %.3f s' % (cfg, run, end))
    for cfg, v in sorted(ends.items()):
        print('%s median %.3f s (%.3f-%.3f, %d runs)' % (
            cfg, statistics.median(v), min(v), max(v), len(v)))


if __name__ == '__main__':
    main()
