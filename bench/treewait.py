#!/usr/bin/env python3
"""Where a small-file copy over an emulated WAN waits (issue 23).

    tcpdump -r PCAP -n -tt > PCAP.txt
    bench/treewait.py PCAP.txt RUNS [--sshport 2222] [--bin 0.025] [--timeline CFG:RUN] [--streams]

PCAP: bench/run.sh --case tree-lfn1g with TREE_WAN_PCAP=PCAP (headers of
both directions on lcwb in the sink's namespace; the client is 10.77.0.1).
RUNS: PCAP.runs ("config run rc t0 t1" per run).  Per run it prints the
wall time, the first SYN, the end of SSH setup (the first segment on a
second TCP connection, i.e. the data streams, or for the ssh tools the
first client segment over 4 KiB), and over the copy phase (from there to
the last payload segment; data_s: to the last data segment, for lanecp the
last on its data streams; tcp-* configs are bench/tcpfloor.py, all of
whose connections carry data): how many bins of BIN seconds carried client
payload ("busy"), and the client's flights (payload bursts separated by a
pause of 40 ms or more, i.e. waits of about one round trip).  --timeline
prints, for one run, per bin: client payload on the SSH connection
(control: FILE, credit), server payload on it (FILE_READY, FILE_DONE), and
client payload on the other connections (lanecp's data streams).
"""
import bisect
import re
import sys

PKT = re.compile(r'^(\d+\.\d+) IP ([0-9.]+)\.(\d+) > ([0-9.]+)\.(\d+): '
                 r'Flags \[([^\]]*)\][^\n]*?, length (\d+)')
SEQ = re.compile(r', seq (\d+):(\d+)')
CLIENT = '10.77.0.1'


def stream_setup(cfg, run, sl, sshport, t0):
    """--streams: per lanecp data stream, since the client's fork: its SYN,
    the client's first payload (TLS ClientHello), the sink's first answer,
    the client's second payload, the first segment over 2,000 bytes (file
    data); medians over the streams."""
    st = {}
    for t, fromc, cp, sp, fl, n, _ in sl:
        if sp == sshport:
            continue
        r = st.setdefault(cp, {})
        if fromc and fl == 'S':
            r.setdefault('syn', t)
        elif n > 0 and fromc:
            r.setdefault('c1', t) if 'c1' not in r else r.setdefault('c2', t)
            if n > 2000:
                r.setdefault('bulk', t)
        elif n > 0:
            r.setdefault('s1', t)
    keys = ('syn', 'c1', 's1', 'c2', 'bulk')
    v = {k: sorted(r[k] - t0 for r in st.values() if k in r) for k in keys}
    ans = sorted(r['s1'] - r['c1'] for r in st.values() if 's1' in r and 'c1' in r)

    def md(a):
        return '%.3f' % a[len(a) // 2] if a else '-'
    print('# streams %s %s: %d streams; median (first-last) since fork: %s; sink answer '
          'to the first client payload: median %s, max %s' % (
              cfg, run, len(st), ', '.join('%s %s (%s-%s)' % (
                  k, md(v[k]), '%.3f' % v[k][0] if v[k] else '-',
                  '%.3f' % v[k][-1] if v[k] else '-') for k in keys),
              md(ans), '%.3f' % ans[-1] if ans else '-'))


def main():
    args = sys.argv[1:]
    sshport, binw, tl, gap, streams = 2222, 0.025, None, 0.04, False
    rest = []
    while args:
        a = args.pop(0)
        if a == '--sshport':
            sshport = int(args.pop(0))
        elif a == '--bin':
            binw = float(args.pop(0))
        elif a == '--timeline':
            tl = args.pop(0)
        elif a == '--streams':
            streams = True
        else:
            rest.append(a)
    text, runs = rest
    pk = []
    for line in open(text):
        m = PKT.match(line)
        if not m:
            continue
        fromc = m.group(2) == CLIENT
        cport = int(m.group(3)) if fromc else int(m.group(5))
        sport = int(m.group(5)) if fromc else int(m.group(3))
        q = SEQ.search(line)
        pk.append((float(m.group(1)), fromc, cport, sport, m.group(6), int(m.group(7)),
                   int(q.group(2)) if q else 0))
    pk.sort()
    ts = [p[0] for p in pk]
    print('# config run wall_s first_syn_s copy_start_s copy_s busy_bins(%.0f ms) '
          'busy_s flights_in_copy ctl_bytes_c2s ctl_bytes_s2c data_bytes_c2s '
          'data_s data_10%%_s data_50%%_s data_90%%_s data_99%%_s data_syns '
          'data_syn_first_s data_syn_last_s retrans_segs retrans_flows bulk_start_s '
          'ctl_50%%_s ctl_90%%_s ctl_99%%_s last_s2c_s'
          % (binw * 1000))
    for line in open(runs):
        f = line.split()
        if len(f) < 5 or f[2] != '0':
            continue
        cfg, run, t0, t1 = f[0], f[1], float(f[3]), float(f[4])
        sl = pk[bisect.bisect_left(ts, t0):bisect.bisect_right(ts, t1)]
        syn = next((p[0] - t0 for p in sl if p[4] == 'S' and p[1]), None)
        sshc = next((p[2] for p in sl if p[4] == 'S' and p[1] and p[3] == sshport), None)
        if cfg.startswith('tcp-'):
            # bench/tcpfloor.py: every connection carries data
            sshc = None
            data = [p for p in sl if p[1] and p[5] > 0]
        elif cfg.startswith('lanecp'):
            data = [p for p in sl if p[1] and p[3] != sshport and p[5] > 0]
        else:
            data = [p for p in sl if p[1] and p[5] > 0]
        if cfg.startswith(('lanecp', 'tcp-')):
            start = data[0][0] if data else None
        else:
            start = next((p[0] for p in sl if p[1] and p[5] >= 4096), None)
        end = max((p[0] for p in sl if p[1] and p[5] > 0), default=None)
        dend = max((p[0] for p in data), default=None)
        # the server's last payload (for ssh true: its exit status and
        # close), since the fork, as it left the sink
        ls2c = max((p[0] for p in sl if not p[1] and p[5] > 0), default=None)
        ls2c = '-' if ls2c is None else '%.3f' % (ls2c - t0)
        if start is None or end is None:
            print(cfg, run, '%.3f' % (t1 - t0), '-' if syn is None else '%.3f' % syn,
                  ' '.join(['-'] * 22), ls2c)
            continue
        # when the data (after start) reached the sink: 10/50/90/99 % of it
        dd = [p for p in data if p[0] >= start]
        tot, acc, qs, qi = sum(p[5] for p in dd), 0, [], 0
        fr = (0.1, 0.5, 0.9, 0.99)
        for p in dd:
            acc += p[5]
            while qi < len(fr) and acc >= fr[qi] * tot:
                qs.append('%.3f' % (p[0] - start))
                qi += 1
        qs += ['-'] * (len(fr) - len(qs))
        # lanecp: when 50/90/99 % of the client's bytes on the SSH
        # connection (FILE messages, credit) arrived, since start (negative:
        # before the first data-stream segment)
        cc = [p for p in sl if p[1] and p[2] == sshc and p[3] == sshport and p[5] > 0]
        ctot, acc, qi = sum(p[5] for p in cc), 0, 0
        cq = []
        for p in cc:
            acc += p[5]
            while qi < 3 and acc >= (0.5, 0.9, 0.99)[qi] * ctot:
                cq.append('%.3f' % (p[0] - start))
                qi += 1
        cq += ['-'] * (3 - len(cq))
        if not cfg.startswith('lanecp'):
            cq = ['-'] * 3
        # the data connections' SYNs (lanecp's streams, tcpfloor's flows),
        # since start; and retransmitted client segments (end sequence
        # number not above the highest already seen on that connection)
        dsyn = [p[0] - start for p in sl if p[1] and p[4] == 'S' and p[2] != sshc
                and (p[3] != sshport or cfg.startswith('tcp-'))]
        hi, rs, rf = {}, 0, set()
        for p in sl:
            if not p[1] or p[5] == 0 or p[6] == 0:
                continue
            if p[6] <= hi.get(p[2], 0):
                rs += 1
                rf.add(p[2])
            hi[p[2]] = max(hi.get(p[2], 0), p[6])
        # the first data segment over 2,000 bytes (lanecp: file data after
        # its streams' handshakes), since start
        bulk = next((p[0] - start for p in dd if p[5] > 2000), None)
        extra = qs + [str(len(dsyn)), '%.3f' % dsyn[0] if dsyn else '-',
                      '%.3f' % dsyn[-1] if dsyn else '-', str(rs), str(len(rf)),
                      '-' if bulk is None else '%.3f' % bulk] + cq + [ls2c]
        busy, last, flights = set(), None, 0
        cb = sb = db = 0
        for t, fromc, cp, sp, fl, n, _ in sl:
            if n == 0:
                continue
            ctl = sp == sshport and cp == sshc
            if fromc and ctl:
                cb += n
            elif ctl:
                sb += n
            elif fromc:
                db += n
            if not fromc or t < start:
                continue
            busy.add(int((t - start) / binw))
            if last is None or t - last >= gap:
                flights += 1
            last = t
        print(cfg, run, '%.3f' % (t1 - t0), '-' if syn is None else '%.3f' % syn,
              '%.3f' % (start - t0), '%.3f' % (end - start), len(busy),
              '%.3f' % (len(busy) * binw), flights, cb, sb, db, '%.3f' % (dend - start),
              *extra)
        if streams and cfg.startswith('lanecp'):
            stream_setup(cfg, run, sl, sshport, t0)
        if tl == '%s:%s' % (cfg, run):
            rows = {}
            for t, fromc, cp, sp, fl, n, _ in sl:
                if n == 0:
                    continue
                b = int((t - t0) / binw)
                r = rows.setdefault(b, [0, 0, 0, 0])
                ctl = sp == sshport and cp == sshc
                r[0 if (fromc and ctl) else 1 if ctl else 2 if fromc else 3] += n
            print('# timeline %s run %s: bin start (s since fork), client->server on the '
                  'SSH connection, server->client on it, client->server on other '
                  'connections, server->client on them (bytes of TCP payload)' % (cfg, run))
            for b in sorted(rows):
                print('  %.3f %8d %8d %9d %8d' % ((b * binw,) + tuple(rows[b])))


main()
