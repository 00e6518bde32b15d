#!/usr/bin/env python3
"""Generate a realistic compressible file for the -c benchmark and tests.

bench/gen_logs.py [--kind log|sql] [--seed N] SIZE OUT

log: web-server access log lines (combined format plus a request id and a
latency): timestamps that move on, a few thousand client addresses,
paths with ids, status codes, user agents, random hex request ids (the
part that does not compress).  sql: a mysqldump-like dump, INSERT rows of
an orders table with names, addresses, amounts and dates.  Both compress
about 4-8x with zlib level 1, like the logs and dumps -c is meant for.
SIZE takes k/m/g suffixes; output is deterministic for a seed.
"""
import argparse
import random
import sys

UAS = [
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/118.0 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:119.0) Gecko/20100101 Firefox/119.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148",
    "curl/8.4.0", "python-requests/2.31.0", "Go-http-client/2.0",
    "Prometheus/2.47.2", "kube-probe/1.28",
]
PATHS = ["/api/v2/orders/%d", "/api/v2/users/%d/profile", "/static/js/app.%x.js",
         "/healthz", "/metrics", "/search?q=item%d&page=%d", "/cart/%d/items",
         "/api/v2/inventory/%d", "/login", "/logout"]
METHODS = ["GET"] * 8 + ["POST", "PUT", "DELETE"]
STATUS = [200] * 20 + [201, 204, 301, 304, 400, 401, 403, 404, 404, 500, 502]
FIRST = ["Anna", "Ben", "Chen", "Dana", "Emil", "Fatima", "Georg", "Hana",
         "Ivan", "Julia", "Kofi", "Lena", "Marco", "Nina", "Omar", "Paula"]
LAST = ["Schmidt", "Nguyen", "Garcia", "Kowalski", "Okafor", "Rossi",
        "Tanaka", "Muller", "Silva", "Jensen", "Ivanova", "Brown"]
STREETS = ["Main St", "Oak Ave", "Hauptstrasse", "Rue de la Paix", "High St",
           "Elm Rd", "Lindenweg", "Via Roma"]
CITIES = ["Berlin", "Lyon", "Austin", "Osaka", "Porto", "Krakow", "Leeds",
          "Aarhus"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep",
          "Oct", "Nov", "Dec"]


def log_chunk(rnd, state, n):
    out = []
    size = 0
    ips = state["ips"]
    while size < n:
        state["t"] += rnd.random() * 0.02
        t = int(state["t"])
        d, rem = divmod(t, 86400)
        hh, rem = divmod(rem, 3600)
        mm, ss = divmod(rem, 60)
        p = rnd.choice(PATHS)
        k = p.count("%")
        path = p % tuple(rnd.randrange(100000) for _ in range(k)) if k else p
        line = '%s - - [%02d/%s/2026:%02d:%02d:%02d +0000] "%s %s HTTP/1.1" %d %d "-" "%s" rid=%016x rt=%.3f\n' % (
            rnd.choice(ips), 1 + d % 28, MONTHS[(d // 28) % 12], hh, mm, ss,
            rnd.choice(METHODS), path, rnd.choice(STATUS),
            rnd.randrange(200, 90000), rnd.choice(UAS),
            rnd.getrandbits(64), rnd.expovariate(20))
        out.append(line)
        size += len(line)
    return "".join(out)


def sql_chunk(rnd, state, n):
    out = []
    size = 0
    while size < n:
        rows = []
        for _ in range(200):
            state["id"] += 1
            rows.append("(%d,'%s','%s','%d %s','%s',%d.%02d,'2026-%02d-%02d %02d:%02d:%02d','%s')" % (
                state["id"], rnd.choice(FIRST), rnd.choice(LAST),
                rnd.randrange(1, 300), rnd.choice(STREETS),
                rnd.choice(CITIES), rnd.randrange(1, 5000),
                rnd.randrange(100), rnd.randrange(1, 13),
                rnd.randrange(1, 29), rnd.randrange(24), rnd.randrange(60),
                rnd.randrange(60),
                rnd.choice(["paid", "shipped", "pending", "refunded"])))
        s = "INSERT INTO `orders` VALUES " + ",".join(rows) + ";\n"
        out.append(s)
        size += len(s)
    return "".join(out)


def parse_size(s):
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    s = s.strip().lower()
    if s and s[-1] in mult:
        return int(s[:-1]) * mult[s[-1]]
    return int(s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=["log", "sql"], default="log")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("size")
    ap.add_argument("out")
    a = ap.parse_args()
    total = parse_size(a.size)
    rnd = random.Random(a.seed)
    state = {"t": 1767225600.0, "id": 0,
             "ips": ["10.%d.%d.%d" % (rnd.randrange(256), rnd.randrange(256),
                                      rnd.randrange(256)) for _ in range(3000)]}
    gen = log_chunk if a.kind == "log" else sql_chunk
    if a.kind == "sql":
        head = ("-- MySQL dump 10.13  Distrib 8.0.35\n"
                "CREATE TABLE `orders` (`id` int NOT NULL, `first` varchar(32),"
                " `last` varchar(32), `street` varchar(64), `city` varchar(32),"
                " `amount` decimal(10,2), `ts` datetime, `state` varchar(16),"
                " PRIMARY KEY (`id`)) ENGINE=InnoDB;\n")
    else:
        head = ""
    done = 0
    with open(a.out, "wb") as f:
        if head:
            f.write(head.encode())
            done += len(head)
        while done < total:
            b = gen(rnd, state, min(4 << 20, total - done)).encode()
            b = b[:total - done]
            f.write(b)
            done += len(b)
    return 0


if __name__ == "__main__":
    sys.exit(main())
