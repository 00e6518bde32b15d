#!/usr/bin/env bash
# The data paths (issue #12) over emulated networks (netns.sh), through
# real (wanem) packet filters instead of test hooks:
#   1. -z through filters: a sink in b that accepts no inbound connection but
#      SSH (a->b syn=22): --direct fails (8), -z works; a sink in a that
#      accepts none (b->a nosyn): a pull with --direct fails, -z works.
#   2. --relay between two hosts that cannot reach each other (star, lanecp
#      in c): a file and a tree; the automatic copy says which path (-v,
#      --json "path").
#   3. only port 22 between controller and target (a->b tcp=22, b->a
#      nosyn): the automatic copy falls back to SSH, push and pull, -s 8.
#   4. ProxyJump: lanecp in a, bastion sshd in c, target in b (a cannot
#      reach b): -J c push, pull and a tree, data via SSH; ProxyJump in
#      the ssh_config.
#   5. IPv6 on the emulated links: -z to [fd77::2]:path, --relay between
#      [fd77:1::2] and [fd77:2::2], and a name with only an AAAA record
#      (/etc/netns/NS/hosts) as HostName.
#   6. a stranger (another namespace) on the data ports of a -z source and
#      of both agents of a --relay copy: the copy is identical and the
#      stranger gets less than 4 KiB (the handshake).
# Every copy is compared byte for byte; no agent is left behind.
set -euo pipefail
. "$LC_SRC_DIR/tests/integration/lib.sh"
. "$LC_SRC_DIR/tests/integration/netns.sh"

lc_netns_need
command -v ss >/dev/null 2>&1 || lc__netns_skip "no ss (iproute2)"

d0=$(mktemp -d "${TMPDIR:-/tmp}/lanecp-nsp.XXXXXX") || lc_fail "mktemp"
lc_on_exit "rm -rf '$d0'"
mkdir -p "$d0/src/tree/sub/deeper"
head -c $((12 << 20)) /dev/urandom >"$d0/src/f"
head -c 70000 /dev/urandom >"$d0/src/tree/sub/g"
head -c 3000000 /dev/urandom >"$d0/src/tree/sub/deeper/h"
echo small >"$d0/src/tree/s"
: >"$d0/src/tree/empty"

# json X ARGS...: lanecp -v --json in X's namespace; stdout in $OUT,
# stderr in $LC_ERR; fails unless it exits 0
OUT=$d0/out.json
json() {
	local x=$1 rc=0
	shift
	LC_ERR=$d0/lanecp.err
	ip netns exec "$(lc_netns_name "$x")" "$LANECP" -F "$LC_NS_SSH_CONFIG" \
	    -v --json "$@" >"$OUT" 2>"$LC_ERR" || rc=$?
	if [[ $rc != 0 ]] || grep -Eq 'Sanitizer|runtime error:' "$LC_ERR"; then
		lc__show "$LC_ERR"
		lc_fail "lanecp $* exited $rc"
	fi
	sed 's/^/    json: /' "$OUT" | cut -c1-300 | grep -o '    json: .*"attempts":[0-9]*' || true
}

# ports_of X PID: the TCP ports PID listens on in X's namespace
ports_of() {
	lc_netns_exec "$1" ss -Hltnp | { grep "pid=$2," || true; } |
	    awk '{ n = split($4, a, ":"); print a[n] }' | sort -u | tr '\n' ' '
}

# agent_ports X: the ports a lanecp agent listens on in X's namespace
agent_ports() {
	lc_netns_exec "$1" ss -Hltnp | { grep -E '"lanecp"' || true; } |
	    awk '{ n = split($4, a, ":"); print a[n] }' | sort -u | tr '\n' ' '
}

# stranger X ADDR PORT OUT: from X's namespace, connect to ADDR:PORT,
# send garbage and keep whatever comes back in OUT (20 s at most)
stranger() {
	# shellcheck disable=SC2016
	printf 'GET / HTTP/1.0\r\n\r\n%0512d' 0 | lc_netns_exec "$1" timeout 20 \
	    bash -c 'exec 3<>"/dev/tcp/$0/$1" || exit 0; : >"$2.conn"
		cat >&3; cat <&3' "$2" "$3" "$4" >"$4" 2>/dev/null || true
}

stranger_got_little() {
	local f got
	for f in "$@"; do
		[[ $f != *.conn ]] || continue
		got=$(stat -c %s "$f")
		((got < 4096)) || lc_fail "the stranger ($f) got $got bytes"
		if [[ -e $f.conn ]]; then
			lc_note "   stranger ${f##*.}: connected, got $got bytes"
		else
			lc_note "   stranger ${f##*.}: could not connect"
		fi
	done
}

# The pair topology (cases 1, 3, 5, 6a), then the star topology (2, 4, 5,
# 6b) in a child process: one topology per test process (netns.sh).
if [[ -z ${LC_NSP_STAR-} ]]; then
############################################################################
lc_note "1. -z: b accepts no inbound connection but SSH (a->b syn=22)"
LINK=rate=200m,delay=5ms
lc_netns_up pair "$LINK" syn=22
lc_netns_sshd b
d=$LC_NS_DIR
mkdir -p "$d/z1" "$d/z2" "$d/z3" "$d/z4"
lc_netns_lanecp_expect a 8 \
    'data stream connect to 10\.77\.0\.2 port [0-9]+: timed out' \
    --direct -s 2 "$d0/src/f" "b:$d/z1/"
[[ ! -e $d/z1/f ]] || lc_fail "a failed --direct copy left its target"
(($(lc_netns_stat ab 'a>b' f_syn) > 0)) || lc_fail "wanem filtered no SYN"
lc_netns_wait_no_agents 90
json a -z -s 4 "$d0/src/f" "b:$d/z1/"
cmp "$d0/src/f" "$d/z1/f" || lc_fail "-z push through syn=22 differs"
lc_log_has 'data path: reverse, .* dials this host' "$LC_ERR"
lc_log_has '"path":"reverse"' "$OUT"
lc_netns_lanecp a -z -r "$d0/src/tree" "b:$d/z2/"
diff -r "$d0/src/tree" "$d/z2/tree" || lc_fail "-z tree through syn=22 differs"
lc_netns_wait_no_agents 90

lc_note "1b. -z pull: a (the sink) accepts no inbound connection (b->a nosyn)"
lc_netns_up pair "$LINK" "" nosyn
lc_netns_lanecp_expect a 8 'data stream connect to .*port [0-9]+: timed out' \
    --direct -s 2 "b:$d0/src/f" "$d/z3/"
[[ ! -e $d/z3/f ]] || lc_fail "a failed --direct pull left its target"
(($(lc_netns_stat ab 'b>a' f_syn) > 0)) || lc_fail "wanem filtered no SYN b->a"
lc_netns_wait_no_agents 90
lc_netns_lanecp a -v -z -s 4 "b:$d0/src/f" "$d/z3/"
cmp "$d0/src/f" "$d/z3/f" || lc_fail "-z pull through nosyn differs"
lc_log_has 'data path: reverse, this host dials' "$LC_ERR"
lc_netns_lanecp a -z -r "b:$d0/src/tree" "$d/z4/"
diff -r "$d0/src/tree" "$d/z4/tree" || lc_fail "-z tree pull differs"
lc_netns_wait_no_agents 90

############################################################################
lc_note "3. only port 22 between a and b (a->b tcp=22, b->a nosyn): SSH fallback"
lc_netns_up pair "$LINK" tcp=22,reject nosyn
mkdir -p "$d/p22" "$d/p22b"
json a -s 8 "$d0/src/f" "b:$d/p22/"
cmp "$d0/src/f" "$d/p22/f" || lc_fail "push with only port 22 differs"
lc_log_has 'trying another data path' "$LC_ERR"
lc_log_has 'data path: via SSH x 8' "$LC_ERR"
lc_log_has '"path":"ssh"' "$OUT"
lc_log_has '"streams":8' "$OUT"
json a -s 8 "b:$d0/src/f" "$d/p22b/"
cmp "$d0/src/f" "$d/p22b/f" || lc_fail "pull with only port 22 differs"
lc_log_has 'trying another data path' "$LC_ERR"
lc_log_has '"path":"ssh"' "$OUT"
(($(lc_netns_stat ab 'a>b' f_port) > 0)) || lc_fail "wanem filtered no port a->b"
lc_netns_wait_no_agents 90

lc_note "3b. the same with dropped (not rejected) segments: the 7 s timeout"
lc_netns_up pair "$LINK" tcp=22,drop nosyn
rm -rf "$d/p22b"; mkdir -p "$d/p22b"
json a -s 8 "b:$d0/src/f" "$d/p22b/"
cmp "$d0/src/f" "$d/p22b/f" || lc_fail "pull with only port 22 (drop) differs"
lc_log_has 'timed out; trying another data path' "$LC_ERR"
lc_log_has '"path":"ssh"' "$OUT"
lc_netns_wait_no_agents 90

############################################################################
lc_note "5. IPv6 on the emulated link: -z to [fd77::2], a name with only AAAA"
lc_netns_up pair "$LINK" syn=22
mkdir -p "$d/v6" "$d/v6n"
json a -z -s 3 "$d0/src/f" "[fd77::2]:$d/v6/"
cmp "$d0/src/f" "$d/v6/f" || lc_fail "-z over IPv6 differs"
lc_log_has 'data path: reverse' "$LC_ERR"
# ip netns exec bind-mounts /etc/netns/NS/hosts over /etc/hosts
nsa=$(lc_netns_name a)
mkdir -p "/etc/netns/$nsa"
lc_on_exit "rm -rf '/etc/netns/$nsa'"
printf '%s b6.test\n' "$LC_NS_ADDR6_b" >"/etc/netns/$nsa/hosts"
lc_netns_exec a getent ahosts b6.test | grep -q "$LC_NS_ADDR6_b" ||
	lc_fail "b6.test does not resolve to $LC_NS_ADDR6_b in a"
if lc_netns_exec a getent ahostsv4 b6.test >/dev/null 2>&1; then
	lc_fail "b6.test has an IPv4 address in a"
fi
printf 'b6.test %s\n' "$(cut -d' ' -f1,2 "$LC_HOST_KEY")" >>"$LC_KNOWN_HOSTS"
LC_SSH_HOST=b6 LC_SSHD_ADDR=b6.test lc_ssh_config "$d/b6.cfg" Port=22
cat "$d/b6.cfg" >>"$LC_NS_SSH_CONFIG"
lc_netns_up pair "$LINK"
json a -s 2 "$d0/src/f" "b6:$d/v6n/"
cmp "$d0/src/f" "$d/v6n/f" || lc_fail "copy to the AAAA name differs"
lc_log_has "data streams to (\\[)?$LC_NS_ADDR6_b" "$LC_ERR"
rm "$d/v6n/f"
lc_netns_up pair "$LINK" syn=22
json a -z -s 2 "$d0/src/f" "b6:$d/v6n/"
cmp "$d0/src/f" "$d/v6n/f" || lc_fail "-z to the AAAA name differs"
lc_log_has '"path":"reverse"' "$OUT"
lc_netns_wait_no_agents 90

############################################################################
lc_note "6a. a stranger in b on the data ports of a -z source in a"
mkdir -p "$d/s1"
log=$d/s1.log
ip netns exec "$nsa" "$LANECP" -F "$LC_NS_SSH_CONFIG" -v -z -s 3 -x 4m \
    "$d0/src/f" "b:$d/s1/" >/dev/null 2>"$log" &
bg=$!
lc_on_exit "kill $bg"
lc_wait_for 'data path: reverse' "$log" 60
ports=""
end=$((SECONDS + 30))
while [[ -z $ports ]] && kill -0 "$bg" 2>/dev/null && ((SECONDS < end)); do
	ports=$(ports_of a "$bg")
	[[ -n $ports ]] || sleep 0.05
done
[[ -n $ports ]] || lc_fail "no listening data port of the -z source found"
lc_note "   source ports: $ports"
spids=()
for p in $ports; do
	stranger b "$LC_NS_ADDR_a" "$p" "$d/stranger1.$p" &
	spids+=($!)
done
for j in "${spids[@]}"; do wait "$j" || true; done
rc=0
wait "$bg" || rc=$?
[[ $rc == 0 ]] || { lc__show "$log"; lc_fail "-z copy with a stranger exited $rc"; }
cmp "$d0/src/f" "$d/s1/f" || lc_fail "-z copy with a stranger differs"
stranger_got_little "$d"/stranger1.*
lc_netns_wait_no_agents 90

LC_NSP_STAR=1 bash "$0" || exit $?
echo PASS
exit 0
fi

############################################################################
# star: c 10.77.1.1 <-> a 10.77.1.2, c 10.77.2.1 <-> b 10.77.2.2
lc_netns_up star rate=200m,delay=5ms
lc_netns_sshd a
lc_netns_sshd c
lc_netns_sshd b		# last: lc_ssh_config below writes b's blocks
d=$LC_NS_DIR
if lc_netns_tcp a "$LC_NS_ADDR_b"; then
	lc_fail "a reached b:22 in the star topology"
fi

lc_note "2. --relay a -> b (c joins the streams): a file and a tree"
mkdir -p "$d/r1" "$d/r2" "$d/r3"
json c --relay -s 4 "a:$d0/src/f" "b:$d/r1/"
cmp "$d0/src/f" "$d/r1/f" || lc_fail "--relay a -> b differs"
lc_log_has 'data path: relay, .* -> this host -> ' "$LC_ERR"
lc_log_has '"path":"relay"' "$OUT"
lc_netns_lanecp c --relay -r "a:$d0/src/tree" "b:$d/r2/"
diff -r "$d0/src/tree" "$d/r2/tree" || lc_fail "--relay tree differs"
lc_note "2b. the automatic copy a -> b: direct cannot work, -v/--json say how"
json c -s 4 "a:$d0/src/f" "b:$d/r3/"
cmp "$d0/src/f" "$d/r3/f" || lc_fail "automatic a -> b differs"
lc_log_has 'trying another data path' "$LC_ERR"
lc_log_has 'data path: (relay|via SSH)' "$LC_ERR"
lc_log_has '"path":"(relay|ssh)"' "$OUT"
lc_log_has '"path_why":"[^"]+"' "$OUT"
grep -o '"path":"[a-z]*","path_why":"[^"]*"' "$OUT" | sed 's/^/    /' || true
lc_netns_wait_no_agents 90

lc_note "5b. --relay over IPv6: [fd77:1::2] -> [fd77:2::2]"
mkdir -p "$d/r6"
json c --relay -s 3 "[$LC_NS_ADDR6_a]:$d0/src/f" "[$LC_NS_ADDR6_b]:$d/r6/"
cmp "$d0/src/f" "$d/r6/f" || lc_fail "--relay over IPv6 differs"
lc_log_has '"path":"relay"' "$OUT"
lc_netns_wait_no_agents 90

lc_note "4. ProxyJump: lanecp in a, bastion c, target b (a cannot reach b)"
mkdir -p "$d/j1" "$d/j2" "$d/j3" "$d/j4"
json a -J c -s 3 "$d0/src/f" "b:$d/j1/"
cmp "$d0/src/f" "$d/j1/f" || lc_fail "-J c push differs"
lc_log_has 'data path: via SSH' "$LC_ERR"
lc_log_has '"path":"ssh"' "$OUT"
json a -J c -s 3 "b:$d0/src/f" "$d/j2/"
cmp "$d0/src/f" "$d/j2/f" || lc_fail "-J c pull differs"
lc_log_has '"path":"ssh"' "$OUT"
lc_netns_lanecp a -J c -r "$d0/src/tree" "b:$d/j3/"
diff -r "$d0/src/tree" "$d/j3/tree" || lc_fail "-J c tree differs"
LC_SSH_HOST=bj LC_SSHD_ADDR=$LC_NS_ADDR_b lc_ssh_config "$d/bj.cfg" \
    Port=22 ProxyJump=c
cat "$d/bj.cfg" >>"$LC_NS_SSH_CONFIG"
json a -s 2 "$d0/src/f" "bj:$d/j4/"
cmp "$d0/src/f" "$d/j4/f" || lc_fail "ProxyJump (ssh_config) push differs"
lc_log_has '"path":"ssh"' "$OUT"
rm -rf "$d/j4"/*
json a -s 2 -r "bj:$d0/src/tree" "$d/j4/"
diff -r "$d0/src/tree" "$d/j4/tree" || lc_fail "ProxyJump (ssh_config) tree pull differs"
lc_netns_wait_no_agents 90

lc_note "6b. a stranger in c on the data ports of both agents of a --relay copy"
mkdir -p "$d/s2"
log=$d/s2.log
ip netns exec "$(lc_netns_name c)" "$LANECP" -F "$LC_NS_SSH_CONFIG" -v \
    --relay -s 3 -x 4m "a:$d0/src/f" "b:$d/s2/" >/dev/null 2>"$log" &
bg=$!
lc_on_exit "kill $bg"
lc_wait_for 'data path: relay' "$log" 60
pa="" pb=""
end=$((SECONDS + 30))
while [[ -z $pa || -z $pb ]] && kill -0 "$bg" 2>/dev/null && ((SECONDS < end)); do
	pa=$(agent_ports a) pb=$(agent_ports b)
	[[ -n $pa && -n $pb ]] || sleep 0.05
done
[[ -n $pa && -n $pb ]] || lc_fail "no listening agent ports found (a: '$pa', b: '$pb')"
lc_note "   source (a) ports: $pa; sink (b) ports: $pb"
spids=()
for p in $pa; do
	stranger c "$LC_NS_ADDR_a" "$p" "$d/stranger2.a$p" &
	spids+=($!)
done
for p in $pb; do
	stranger c "$LC_NS_ADDR_b" "$p" "$d/stranger2.b$p" &
	spids+=($!)
done
for j in "${spids[@]}"; do wait "$j" || true; done
rc=0
wait "$bg" || rc=$?
[[ $rc == 0 ]] || { lc__show "$log"; lc_fail "--relay copy with a stranger exited $rc"; }
cmp "$d0/src/f" "$d/s2/f" || lc_fail "--relay copy with a stranger differs"
stranger_got_little "$d"/stranger2.*
lc_netns_wait_no_agents 90
