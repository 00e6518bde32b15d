/*
 * wanem: a user-space WAN emulator between two TUN devices.
 *
 * Design.  Two TUN devices (IFF_TUN | IFF_NO_PI), A and B, normally each in
 * its own network namespace (--netns-a/--netns-b: the device is created
 * inside the namespace by switching the main thread there with setns(2)
 * while opening /dev/net/tun, then switching back).  Every IP packet the
 * kernel routes out of A is read by wanem and written into B, and the other
 * way round.  Each direction has its own thread, its own link model and its
 * own packet ring; the threads share nothing but the stop flag and the TUN
 * file descriptors (one reads a descriptor, the other writes it, which the
 * tun driver allows concurrently).  The main thread only waits for signals
 * and prints statistics; workers have all signals blocked.
 *
 * Link model, per direction, in the order a real link applies it:
 *
 *   arrive -> tail drop if the bottleneck queue (bytes, including the
 *   packet being serialized) would overflow -> serialized at --rate ->
 *   random loss (--loss) -> propagation (--delay) -> delivered.
 *
 * Serialization is FIFO and the delay is constant, so delivery times are
 * monotonic and one FIFO ring per direction is enough: a record is
 * appended at arrival with the time its last bit leaves the bottleneck
 * (t_dep); it counts against the queue while t_dep > now and is written
 * out at t_dep + delay.  Loss is drawn at arrival (the PRNG sequence then
 * depends only on the packet sequence, so --seed reproduces it) and
 * applied when the packet would have been delivered.
 *
 * The ring is a byte ring of variable-size records (16-byte header + the
 * packet rounded up to 16 bytes) mapped twice back to back from one memfd,
 * so every record is contiguous in memory even where it wraps.  Packets are
 * read straight into their ring slot; nothing is allocated per packet.
 * Its size is 2.5 x (bandwidth-delay product + queue + 2 MTU), which holds
 * every packet that can be queued or in flight even when they are all
 * minimal 20-byte IP packets; if it ever fills anyway the packet is
 * dropped and counted as drop_ring.
 *
 * Each worker sleeps in ppoll(2) on its input TUN descriptor, an eventfd
 * (stop) and a timeout to the next delivery, measured on CLOCK_MONOTONIC in
 * nanoseconds with the thread's timer slack set to 1 us.  Per wakeup it
 * writes due packets and reads pending ones, up to a batch limit each, so
 * neither side starves the other.  The tun driver has no batched read or
 * write, so that is one syscall per packet; writing into TUN runs the
 * receiving namespace's IP/TCP input inline, so wanem's system time
 * includes that work.
 *
 * Sleeping until each packet's exact delivery time (--tick 0) costs one
 * wakeup per packet, which on a small VM is most of the CPU (74% of a core
 * at 1 Gbit/s with 9000-byte packets).  With --tick T (default 500 us)
 * delivery wakeups fall on multiples of T and every packet due within T/2
 * of the wakeup goes out: each packet is within +-T/2 of its exact time
 * (mean error zero), the long-term rate is unchanged because departure
 * times are still computed exactly, and the CPU cost drops to about a
 * third.  Arrivals are not batched, so arrival times stay exact.
 *
 * Packet filter (--filter-ab SPEC for packets from A to B, --filter-ba
 * SPEC the other way; no netfilter involved).  It sits in front of the
 * link: a packet it filters never enters the queue.  SPEC is a list of
 * words separated by commas:
 *
 *   tcp=P1/P2/...  TCP is allowed only to these destination ports (at
 *                  most 16, 1-65535); other TCP segments are filtered
 *   nosyn          TCP SYN without ACK is filtered: no connection can be
 *                  opened in this direction ("no inbound connections" for
 *                  the receiving side); established ones go on
 *   syn=P1/P2/...  as nosyn, except for SYNs to these destination ports
 *                  (at most 16): "no inbound connections but SSH" is
 *                  syn=22; replies to connections the other side opens
 *                  pass (counted as f_syn like nosyn)
 *   all            every packet is filtered
 *   drop           filtered packets vanish (the default)
 *   reject         a filtered TCP segment (other than a RST) is answered
 *                  with a TCP RST, written at once back into the device it
 *                  came from (not through the reverse link model), so a
 *                  connect fails with ECONNREFUSED instead of timing out
 *   other=pass|drop  what happens to packets that are not TCP (ICMP,
 *                  UDP...) or whose TCP header we do not find: passed
 *                  (default) or dropped; "all" drops them too
 *
 * Headers: IPv4 (options skipped by IHL; a fragment with a non-zero
 * offset has no TCP header and counts as "other"), IPv6 with the
 * hop-by-hop, routing and destination-options extension headers skipped
 * (at most 8) and a fragment header followed only for the first fragment;
 * any other next header (ESP, AH, unknown) counts as "other".  The rules
 * are checked in the order all, nosyn, tcp=; each has a counter in the
 * statistics (f_all, f_syn, f_port, f_other; f_rst: RSTs sent).
 *
 * Outage (link cut).  SIGRTMIN cuts the link: every packet, both
 * directions, is lost (those arriving, and those queued or in flight when
 * they come due), counted as drop_cut; SIGRTMIN+1 restores it.  From a
 * shell: kill -s RTMIN PID, kill -s RTMIN+1 PID (bench/wan.sh cut and
 * restore).  Only the main thread takes the signal; it flips an atomic
 * flag the workers read, and prints one line per signal:
 *   wanem: t=SECONDS mono=SECONDS.NANOS link cut|restored[ (no change)]
 * with mono the CLOCK_MONOTONIC time of the change (comparable with
 * clock_gettime(CLOCK_MONOTONIC) of other processes on the machine).
 * The filter and cut happen before the link model, so --seed's loss
 * sequence is unchanged by them only if nothing was filtered.
 */
#include "buf.h"
#include "err.h"
#include "log.h"
#include "parse.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#define LC_WANEM_NS		1000000000ULL	/* ns per second */
#define LC_WANEM_BATCH		64	/* packets read or written per turn */
#define LC_WANEM_MAX_RATE	400000000000ULL	/* 400 Gbit/s */
#define LC_WANEM_MIN_RATE	1000ULL
#define LC_WANEM_MAX_DELAY	(60ULL * LC_WANEM_NS)
#define LC_WANEM_MAX_TICK	(100ULL * 1000000ULL)	/* 100 ms */
#define LC_WANEM_DEF_TICK	(500ULL * 1000ULL)	/* 500 us */
#define LC_WANEM_MAX_QUEUE	(1ULL << 30)
#define LC_WANEM_MAX_RING	(4ULL << 30)	/* bytes per direction */
#define LC_WANEM_NAME_MAX	64
#define LC_WANEM_LOST		1u
#define LC_WANEM_MAX_PORTS	16
#define LC_WANEM_SPEC_MAX	256

/* One direction's filter (see the header comment). */
struct lc_wanem_filter {
	bool on;
	bool all;
	bool nosyn;
	bool reject;
	bool other_drop;
	unsigned nports;	/* 0: any TCP port */
	uint16_t ports[LC_WANEM_MAX_PORTS];
	unsigned nsynports;	/* syn=: SYNs pass only to these */
	uint16_t synports[LC_WANEM_MAX_PORTS];
};

enum lc_wanem_verdict {
	LC_WANEM_PASS,
	LC_WANEM_F_ALL,
	LC_WANEM_F_SYN,
	LC_WANEM_F_PORT,
	LC_WANEM_F_OTHER,
};

struct lc_wanem_conf {
	const char *dev[2];
	const char *netns[2];
	const char *pidfile;
	uint64_t rate;		/* bit/s */
	uint64_t delay_ns;	/* one way */
	uint64_t loss_ppb;	/* loss probability, parts per 1e9 */
	uint64_t tick_ns;	/* delivery timer granularity, 0 = exact */
	uint64_t queue;		/* bytes; 0 until set or defaulted */
	uint64_t mtu;
	uint64_t seed;
	int stats;
	struct lc_wanem_filter filter[2];	/* [0] a>b, [1] b>a */
};

/* Ring record header; the packet follows it. 16 bytes = one ring unit. */
struct lc_wanem_pkt {
	uint64_t t_dep;		/* ns: last bit leaves the bottleneck */
	uint32_t len;
	uint32_t flags;		/* LC_WANEM_LOST */
};

/*
 * Written by one worker, read by the main thread; q_peak is also reset by
 * the main thread on each report (a racing worker store is itself a true
 * queue length of the new interval, so nothing goes wrong).
 */
struct lc_wanem_stats {
	_Atomic uint64_t in_pkts, in_bytes;
	_Atomic uint64_t out_pkts, out_bytes;
	_Atomic uint64_t drop_queue, drop_loss, drop_ring, drop_err;
	_Atomic uint64_t q_peak;	/* queue bytes peak since last report */
	_Atomic uint64_t q_max;		/* queue bytes peak since start */
	_Atomic uint64_t drop_cut;	/* lost while the link was cut */
	_Atomic uint64_t f_all, f_syn, f_port, f_other;	/* filtered */
	_Atomic uint64_t f_rst;		/* RSTs sent back (reject) */
};

struct lc_wanem_dir {
	char name[8];			/* "a>b" */
	int idx;			/* 0: a>b, 1: b>a */
	const struct lc_wanem_conf *conf;
	int in_fd, out_fd, stop_fd;	/* borrowed */
	struct lc_wanem_pkt *ring;	/* nunits, mapped twice */
	size_t map_len;			/* bytes of the double mapping */
	uint64_t nunits;
	uint64_t max_units;		/* one MTU-sized record */
	uint64_t head;			/* oldest record (next delivery) */
	uint64_t qhead;			/* oldest record still in the queue */
	uint64_t tail;			/* next free unit */
	uint64_t qbytes;		/* bytes waiting or being serialized */
	uint64_t link_free;		/* ns when the bottleneck goes idle */
	uint64_t link_rem;		/* remainder of bits * 1e9 / rate */
	uint64_t rng[4];		/* xoshiro256** state */
	uint8_t *scratch;		/* mtu bytes, for packets we drop */
	pthread_t thread;
	bool started;
	struct lc_wanem_stats st;
	/* main thread only: previous snapshot for interval rates */
	uint64_t last_out_bytes;
};

static atomic_bool lc_wanem_stop;
static atomic_bool lc_wanem_cut;	/* set by the main thread only */
static atomic_int lc_wanem_failed;

/* --- small helpers ------------------------------------------------------ */

static uint64_t
lc_wanem_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * LC_WANEM_NS + (uint64_t)ts.tv_nsec;
}

/* Single writer per counter: a relaxed load and store, no locked add. */
static inline void
lc_wanem_count(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c,
	    atomic_load_explicit(c, memory_order_relaxed) + v,
	    memory_order_relaxed);
}

static inline uint64_t
lc_wanem_get(_Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static inline uint64_t
lc_wanem_units(uint64_t len)
{
	return 1 + (len + sizeof(struct lc_wanem_pkt) - 1) /
	    sizeof(struct lc_wanem_pkt);
}

static inline struct lc_wanem_pkt *
lc_wanem_rec(const struct lc_wanem_dir *d, uint64_t pos)
{
	return &d->ring[pos % d->nunits];
}

static inline uint64_t
lc_wanem_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** (Blackman and Vigna, public domain). */
static uint64_t
lc_wanem_rand(uint64_t s[4])
{
	uint64_t r = lc_wanem_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = lc_wanem_rotl(s[3], 45);
	return r;
}

/* Seed xoshiro from splitmix64, as its authors recommend. */
static void
lc_wanem_seed(uint64_t s[4], uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		s[i] = z ^ (z >> 31);
	}
}

/* --- argument parsing --------------------------------------------------- */

struct lc_wanem_suffix {
	const char *s;
	uint64_t mult;
};

static const struct lc_wanem_suffix lc_wanem_rate_sfx[] = {
	{ "", 1 }, { "bit", 1 },
	{ "k", 1000ULL }, { "kbit", 1000ULL },
	{ "m", 1000000ULL }, { "mbit", 1000000ULL },
	{ "g", 1000000000ULL }, { "gbit", 1000000000ULL },
	{ NULL, 0 }
};

static const struct lc_wanem_suffix lc_wanem_time_sfx[] = {
	{ "ns", 1 }, { "us", 1000ULL }, { "ms", 1000000ULL },
	{ "s", 1000000000ULL },
	{ NULL, 0 }
};

static const struct lc_wanem_suffix lc_wanem_prob_sfx[] = {
	{ "", 1000000000ULL }, { "%", 10000000ULL },
	{ NULL, 0 }
};

/*
 * "<digits>[.<digits>]<suffix>" with the suffix (case-insensitive) from
 * the table: out = value * mult, truncated, in [min, max].  At most nine
 * fractional digits count.  Returns 0, -LC_ERR_USAGE or -LC_ERR_TOOBIG.
 */
static int
lc_wanem_parse_scaled(const char *s, const struct lc_wanem_suffix *sfx,
    uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t whole = 0, frac = 0, scale = LC_WANEM_NS, part;
	const struct lc_wanem_suffix *u;

	*out = 0;
	if (*s < '0' || *s > '9')
		return -LC_ERR_USAGE;
	for (; *s >= '0' && *s <= '9'; s++) {
		uint64_t dig = (uint64_t)(*s - '0');
		if (whole > (UINT64_MAX - dig) / 10)
			return -LC_ERR_TOOBIG;
		whole = whole * 10 + dig;
	}
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -LC_ERR_USAGE;
		for (; *s >= '0' && *s <= '9'; s++) {
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(*s - '0') * scale;
			}
		}
	}
	for (u = sfx; u->s != NULL; u++)
		if (strcasecmp(s, u->s) == 0)
			break;
	if (u->s == NULL)
		return -LC_ERR_USAGE;
	part = frac * u->mult / LC_WANEM_NS;	/* < 1e18: no overflow */
	if (whole > (UINT64_MAX - part) / u->mult)
		return -LC_ERR_TOOBIG;
	*out = whole * u->mult + part;
	if (*out < min || *out > max)
		return -LC_ERR_TOOBIG;
	return 0;
}

/* A duration needs a unit, except a plain "0". */
static int
lc_wanem_parse_time(const char *v, uint64_t max, uint64_t *out)
{
	if (strcmp(v, "0") == 0) {
		*out = 0;
		return 0;
	}
	return lc_wanem_parse_scaled(v, lc_wanem_time_sfx, 0, max, out);
}

/* Interface and namespace names: a conservative character set. */
static int
lc_wanem_check_name(const char *s, size_t max)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > max || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return -LC_ERR_USAGE;
	for (i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-' ||
		    c == '.'))
			return -LC_ERR_USAGE;
	}
	return 0;
}

static int
lc_wanem_opt_dev_a(struct lc_wanem_conf *c, const char *v)
{
	c->dev[0] = v;
	return lc_wanem_check_name(v, IFNAMSIZ - 1);
}

static int
lc_wanem_opt_dev_b(struct lc_wanem_conf *c, const char *v)
{
	c->dev[1] = v;
	return lc_wanem_check_name(v, IFNAMSIZ - 1);
}

static int
lc_wanem_opt_ns_a(struct lc_wanem_conf *c, const char *v)
{
	c->netns[0] = v;
	return lc_wanem_check_name(v, LC_WANEM_NAME_MAX);
}

static int
lc_wanem_opt_ns_b(struct lc_wanem_conf *c, const char *v)
{
	c->netns[1] = v;
	return lc_wanem_check_name(v, LC_WANEM_NAME_MAX);
}

static int
lc_wanem_opt_rate(struct lc_wanem_conf *c, const char *v)
{
	return lc_wanem_parse_scaled(v, lc_wanem_rate_sfx, LC_WANEM_MIN_RATE,
	    LC_WANEM_MAX_RATE, &c->rate);
}

static int
lc_wanem_opt_delay(struct lc_wanem_conf *c, const char *v)
{
	return lc_wanem_parse_time(v, LC_WANEM_MAX_DELAY, &c->delay_ns);
}

static int
lc_wanem_opt_tick(struct lc_wanem_conf *c, const char *v)
{
	return lc_wanem_parse_time(v, LC_WANEM_MAX_TICK, &c->tick_ns);
}

static int
lc_wanem_opt_loss(struct lc_wanem_conf *c, const char *v)
{
	return lc_wanem_parse_scaled(v, lc_wanem_prob_sfx, 0, LC_WANEM_NS,
	    &c->loss_ppb);
}

static int
lc_wanem_opt_queue(struct lc_wanem_conf *c, const char *v)
{
	return lc_parse_size(v, 1, LC_WANEM_MAX_QUEUE, &c->queue);
}

static int
lc_wanem_opt_mtu(struct lc_wanem_conf *c, const char *v)
{
	return lc_parse_uint(v, 68, 65535, &c->mtu);
}

static int
lc_wanem_opt_seed(struct lc_wanem_conf *c, const char *v)
{
	return lc_parse_uint(v, 0, UINT64_MAX, &c->seed);
}

static int
lc_wanem_opt_pidfile(struct lc_wanem_conf *c, const char *v)
{
	c->pidfile = v;
	return v[0] == '\0' ? -LC_ERR_USAGE : 0;
}

/* "P1/P2/..." into f->ports. */
static int
lc_wanem_parse_ports(uint16_t *ports, unsigned *n, char *list)
{
	char *w, *save = NULL;
	uint64_t v;
	int r;

	for (w = strtok_r(list, "/", &save); w != NULL;
	    w = strtok_r(NULL, "/", &save)) {
		if (*n == LC_WANEM_MAX_PORTS)
			return -LC_ERR_TOOBIG;
		if ((r = lc_parse_uint(w, 1, 65535, &v)) != 0)
			return r;
		ports[(*n)++] = (uint16_t)v;
	}
	return *n > 0 ? 0 : -LC_ERR_USAGE;
}

/* A filter SPEC (header comment) into f. */
static int
lc_wanem_parse_filter(struct lc_wanem_filter *f, const char *spec)
{
	char buf[LC_WANEM_SPEC_MAX], *w, *save = NULL;
	int r, words = 0;

	memset(f, 0, sizeof(*f));
	if (strlen(spec) >= sizeof(buf))
		return -LC_ERR_TOOBIG;
	memcpy(buf, spec, strlen(spec) + 1);
	for (w = strtok_r(buf, ",", &save); w != NULL;
	    w = strtok_r(NULL, ",", &save), words++) {
		if (strcmp(w, "all") == 0)
			f->all = true;
		else if (strcmp(w, "nosyn") == 0)
			f->nosyn = true;
		else if (strcmp(w, "drop") == 0)
			f->reject = false;
		else if (strcmp(w, "reject") == 0)
			f->reject = true;
		else if (strcmp(w, "other=pass") == 0)
			f->other_drop = false;
		else if (strcmp(w, "other=drop") == 0)
			f->other_drop = true;
		else if (strncmp(w, "tcp=", 4) == 0 && f->nports == 0) {
			if ((r = lc_wanem_parse_ports(f->ports, &f->nports,
			    w + 4)) != 0)
				return r;
		} else if (strncmp(w, "syn=", 4) == 0 && f->nsynports == 0) {
			if ((r = lc_wanem_parse_ports(f->synports,
			    &f->nsynports, w + 4)) != 0)
				return r;
		} else
			return -LC_ERR_USAGE;
	}
	if (words == 0)
		return -LC_ERR_USAGE;
	f->on = true;
	return 0;
}

static int
lc_wanem_opt_filter_ab(struct lc_wanem_conf *c, const char *v)
{
	return lc_wanem_parse_filter(&c->filter[0], v);
}

static int
lc_wanem_opt_filter_ba(struct lc_wanem_conf *c, const char *v)
{
	return lc_wanem_parse_filter(&c->filter[1], v);
}

static int
lc_wanem_opt_stats(struct lc_wanem_conf *c, const char *v)
{
	(void)v;
	c->stats = 1;
	return 0;
}

struct lc_wanem_opt {
	const char *name;
	int (*set)(struct lc_wanem_conf *, const char *);
	int has_arg;
	int required;
	const char *expect;	/* shown in errors and --help */
};

static const struct lc_wanem_opt lc_wanem_opts[] = {
	{ "--dev-a", lc_wanem_opt_dev_a, 1, 1,
	    "TUN device name, 1-15 of [A-Za-z0-9_.-]" },
	{ "--dev-b", lc_wanem_opt_dev_b, 1, 1,
	    "TUN device name, 1-15 of [A-Za-z0-9_.-]" },
	{ "--netns-a", lc_wanem_opt_ns_a, 1, 0,
	    "namespace name in /run/netns to create dev-a in" },
	{ "--netns-b", lc_wanem_opt_ns_b, 1, 0,
	    "namespace name in /run/netns to create dev-b in" },
	{ "--rate", lc_wanem_opt_rate, 1, 1,
	    "bit/s per direction, decimal k/m/g: 1g, 200m, 1.5g (1k..400g)" },
	{ "--delay", lc_wanem_opt_delay, 1, 0,
	    "one-way delay with unit ns/us/ms/s: 25ms (default 0ms, max 60s)" },
	{ "--loss", lc_wanem_opt_loss, 1, 0,
	    "loss probability 0..1 or percent: 0.001, 0.1% (default 0)" },
	{ "--queue", lc_wanem_opt_queue, 1, 0,
	    "bottleneck queue bytes, k/m/g binary: 3m (default 1 BDP)" },
	{ "--mtu", lc_wanem_opt_mtu, 1, 0,
	    "device MTU 68..65535 (default 1500)" },
	{ "--tick", lc_wanem_opt_tick, 1, 0,
	    "delivery batching, packets go out +-tick/2 around their time: "
	    "200us, 0 = exact (default 500us)" },
	{ "--seed", lc_wanem_opt_seed, 1, 0,
	    "loss PRNG seed, unsigned 64-bit integer (default 1)" },
	{ "--pidfile", lc_wanem_opt_pidfile, 1, 0,
	    "file to write our pid to once the devices are up" },
	{ "--stats", lc_wanem_opt_stats, 0, 0,
	    "print statistics every second" },
	{ "--filter-ab", lc_wanem_opt_filter_ab, 1, 0,
	    "filter packets a->b: comma list of tcp=P1/P2, nosyn, syn=P1/P2, all, "
	    "drop|reject, other=pass|drop" },
	{ "--filter-ba", lc_wanem_opt_filter_ba, 1, 0,
	    "filter packets b->a, the same SPEC" },
	{ NULL, NULL, 0, 0, NULL }
};

static void
lc_wanem_usage(FILE *f)
{
	const struct lc_wanem_opt *o;

	fprintf(f, "usage: wanem --dev-a NAME --dev-b NAME --rate RATE "
	    "[options]\n");
	for (o = lc_wanem_opts; o->name != NULL; o++)
		fprintf(f, "  %-12s %s%s\n", o->name,
		    o->has_arg ? "ARG  " : "     ", o->expect);
	fprintf(f, "Statistics go to stdout on SIGUSR1 and at exit "
	    "(SIGINT/SIGTERM).\nSIGRTMIN cuts the link (both directions "
	    "lose every packet), SIGRTMIN+1 restores it.\n");
}

static const struct lc_wanem_opt *
lc_wanem_find_opt(const char *arg, size_t len)
{
	const struct lc_wanem_opt *o;

	for (o = lc_wanem_opts; o->name != NULL; o++)
		if (strlen(o->name) == len && strncmp(o->name, arg, len) == 0)
			return o;
	return NULL;
}

/* One argument (and its value); returns the number of argv words used. */
static int
lc_wanem_parse_one(struct lc_wanem_conf *c, int argc, char **argv, int i,
    unsigned *seen, struct lc_err *e)
{
	const char *arg = argv[i], *eq = strchr(arg, '='), *val = NULL;
	size_t len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
	const struct lc_wanem_opt *o = lc_wanem_find_opt(arg, len);
	unsigned bit;
	int used = 1, r;

	if (o == NULL)
		return lc_err_set(e, LC_ERR_USAGE, "unknown option '%.*s' "
		    "(try --help)", (int)len, arg);
	bit = 1u << (o - lc_wanem_opts);
	if (*seen & bit)
		return lc_err_set(e, LC_ERR_USAGE, "%s given twice", o->name);
	*seen |= bit;
	if (o->has_arg && eq != NULL)
		val = eq + 1;
	else if (o->has_arg && i + 1 < argc) {
		val = argv[i + 1];
		used = 2;
	} else if (o->has_arg)
		return lc_err_set(e, LC_ERR_USAGE, "%s: missing value "
		    "(expected %s)", o->name, o->expect);
	else if (eq != NULL)
		return lc_err_set(e, LC_ERR_USAGE, "%s takes no value",
		    o->name);
	if ((r = o->set(c, val)) != 0)
		return lc_err_set(e, LC_ERR_USAGE, "%s: %s value '%s' "
		    "(expected %s)", o->name,
		    r == -LC_ERR_TOOBIG ? "out of range" : "invalid",
		    val != NULL ? val : "", o->expect);
	return used;
}

static int
lc_wanem_check_conf(struct lc_wanem_conf *c, unsigned seen, struct lc_err *e)
{
	const struct lc_wanem_opt *o;
	uint64_t bdp;

	for (o = lc_wanem_opts; o->name != NULL; o++)
		if (o->required && !(seen & (1u << (o - lc_wanem_opts))))
			return lc_err_set(e, LC_ERR_USAGE, "%s is required "
			    "(%s)", o->name, o->expect);
	if (strcmp(c->dev[0], c->dev[1]) == 0 && (c->netns[0] == NULL ||
	    c->netns[1] == NULL || strcmp(c->netns[0], c->netns[1]) == 0))
		return lc_err_set(e, LC_ERR_USAGE, "--dev-b: must differ "
		    "from --dev-a in the same namespace");
	bdp = (uint64_t)((double)c->rate * (double)c->delay_ns /
	    (8.0 * (double)LC_WANEM_NS));
	if (c->queue == 0)
		c->queue = bdp > 65536 ? bdp : 65536;
	if (c->queue > LC_WANEM_MAX_QUEUE)
		c->queue = LC_WANEM_MAX_QUEUE;
	if (c->queue < c->mtu)
		return lc_err_set(e, LC_ERR_USAGE, "--queue: must hold at "
		    "least one packet of --mtu %llu bytes",
		    (unsigned long long)c->mtu);
	return 0;
}

static int
lc_wanem_parse_args(struct lc_wanem_conf *c, int argc, char **argv,
    struct lc_err *e)
{
	unsigned seen = 0;
	int i, n;

	memset(c, 0, sizeof(*c));
	c->mtu = 1500;
	c->seed = 1;
	c->tick_ns = LC_WANEM_DEF_TICK;
	for (i = 1; i < argc; i += n) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			lc_wanem_usage(stdout);
			exit(0);
		}
		if ((n = lc_wanem_parse_one(c, argc, argv, i, &seen, e)) < 0)
			return n;
	}
	return lc_wanem_check_conf(c, seen, e);
}

/* --- TUN devices -------------------------------------------------------- */

static int
lc_wanem_enter_netns(const char *name, int *orig, struct lc_err *e)
{
	char path[128];
	int fd = -1, r = 0;

	*orig = -1;
	if (name == NULL)
		return 0;
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	if ((*orig = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) < 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "open /proc/self/ns/net");
		goto out;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "netns %s: open %s",
		    name, path);
		goto out;
	}
	if (setns(fd, CLONE_NEWNET) != 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "netns %s: setns", name);
		goto out;
	}
 out:
	if (fd >= 0)
		close(fd);
	if (r != 0 && *orig >= 0) {
		close(*orig);
		*orig = -1;
	}
	return r;
}

static int
lc_wanem_leave_netns(int orig, struct lc_err *e)
{
	int r = 0;

	if (orig < 0)
		return 0;
	if (setns(orig, CLONE_NEWNET) != 0)
		r = lc_err_sys(e, LC_ERR_INTERNAL, errno,
		    "setns back to the original namespace");
	close(orig);
	return r;
}

/* Create (or attach to) TUN device name in the current namespace. */
static int
lc_wanem_tun_create(const char *name, uint64_t mtu, int *fdp,
    struct lc_err *e)
{
	struct ifreq ifr;
	int fd = -1, sock = -1, r = 0;

	*fdp = -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if ((fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "open /dev/net/tun");
		goto out;
	}
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	if (ioctl(fd, TUNSETIFF, &ifr) != 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "%s: TUNSETIFF", name);
		goto out;
	}
	if ((sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "socket");
		goto out;
	}
	ifr.ifr_mtu = (int)mtu;
	if (ioctl(sock, SIOCSIFMTU, &ifr) != 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "%s: set mtu %llu", name,
		    (unsigned long long)mtu);
		goto out;
	}
	*fdp = fd;
	fd = -1;	/* transferred */
 out:
	if (sock >= 0)
		close(sock);
	if (fd >= 0)
		close(fd);
	return r;
}

static int
lc_wanem_tun_open(const char *name, const char *netns, uint64_t mtu,
    int *fdp, struct lc_err *e)
{
	int orig = -1, r;

	*fdp = -1;
	if ((r = lc_wanem_enter_netns(netns, &orig, e)) != 0)
		return r;
	r = lc_wanem_tun_create(name, mtu, fdp, e);
	if (lc_wanem_leave_netns(orig, r == 0 ? e : NULL) != 0 && r == 0) {
		/* Cannot continue in the wrong namespace. */
		close(*fdp);
		*fdp = -1;
		r = -LC_ERR_INTERNAL;
	}
	return r;
}

/* --- the packet ring ---------------------------------------------------- */

/*
 * Map nbytes (a page multiple) twice, back to back, from one memfd so
 * that a record starting near the end continues in the second copy.
 */
static int
lc_wanem_ring_map(struct lc_wanem_dir *d, size_t nbytes, struct lc_err *e)
{
	uint8_t *base = MAP_FAILED;
	int fd = -1, r = 0;

	if ((fd = memfd_create("wanem-ring", MFD_CLOEXEC)) < 0) {
		r = lc_err_sys(e, LC_ERR_NOMEM, errno, "memfd_create");
		goto out;
	}
	if (ftruncate(fd, (off_t)nbytes) != 0) {
		r = lc_err_sys(e, LC_ERR_NOMEM, errno, "ring of %zu bytes",
		    nbytes);
		goto out;
	}
	base = mmap(NULL, 2 * nbytes, PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED ||
	    mmap(base, nbytes, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0) == MAP_FAILED ||
	    mmap(base + nbytes, nbytes, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0) == MAP_FAILED) {
		r = lc_err_sys(e, LC_ERR_NOMEM, errno, "map ring of %zu bytes",
		    nbytes);
		goto out;
	}
	d->ring = (void *)base;
	d->map_len = 2 * nbytes;
	d->nunits = nbytes / sizeof(struct lc_wanem_pkt);
	base = MAP_FAILED;	/* transferred */
 out:
	if (base != MAP_FAILED)
		munmap(base, 2 * nbytes);
	if (fd >= 0)
		close(fd);
	return r;
}

static int
lc_wanem_dir_init(struct lc_wanem_dir *d, const struct lc_wanem_conf *c,
    int idx, struct lc_err *e)
{
	double bdp = (double)c->rate * (double)c->delay_ns /
	    (8.0 * (double)LC_WANEM_NS);
	double want = 2.5 * (bdp + (double)c->queue + 2.0 * (double)c->mtu);
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), nbytes;

	snprintf(d->name, sizeof(d->name), "%s", idx == 0 ? "a>b" : "b>a");
	d->idx = idx;
	d->conf = c;
	d->max_units = lc_wanem_units(c->mtu);
	if (want > (double)LC_WANEM_MAX_RING)
		return lc_err_set(e, LC_ERR_TOOBIG, "rate x delay + queue "
		    "needs a %.0f MiB ring per direction (max %llu MiB)",
		    want / 1048576.0,
		    (unsigned long long)(LC_WANEM_MAX_RING >> 20));
	nbytes = (uint64_t)want + 2 * d->max_units *
	    sizeof(struct lc_wanem_pkt);
	nbytes = (nbytes + page - 1) / page * page;
	if ((d->scratch = malloc(c->mtu)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "scratch buffer");
	lc_wanem_seed(d->rng, c->seed ^ (idx == 0 ? 0 :
	    0xd1b54a32d192ed03ULL));
	return lc_wanem_ring_map(d, (size_t)nbytes, e);
}

static void
lc_wanem_dir_free(struct lc_wanem_dir *d)
{
	if (d->ring != NULL)
		munmap(d->ring, d->map_len);
	d->ring = NULL;
	free(d->scratch);
	d->scratch = NULL;
}

/* --- the link model (worker thread) ------------------------------------- */

/* Retire from the queue every record whose last bit has left by now. */
static void
lc_wanem_queue_advance(struct lc_wanem_dir *d, uint64_t now)
{
	while (d->qhead != d->tail) {
		struct lc_wanem_pkt *p = lc_wanem_rec(d, d->qhead);
		if (p->t_dep > now)
			break;
		d->qbytes -= p->len;
		d->qhead += lc_wanem_units(p->len);
	}
}

/* Time the last bit of len bytes leaves the bottleneck; books the link. */
static uint64_t
lc_wanem_serialize(struct lc_wanem_dir *d, uint64_t now, uint64_t len)
{
	uint64_t bits;

	if (d->link_free <= now) {
		d->link_free = now;
		d->link_rem = 0;
	}
	bits = len * 8 * LC_WANEM_NS + d->link_rem;
	d->link_free += bits / d->conf->rate;
	d->link_rem = bits % d->conf->rate;
	return d->link_free;
}

/* Bernoulli draw; the modulo bias is below 1e-10 and ignored. */
static uint32_t
lc_wanem_lost(struct lc_wanem_dir *d)
{
	if (d->conf->loss_ppb == 0)
		return 0;
	return lc_wanem_rand(d->rng) % LC_WANEM_NS < d->conf->loss_ppb ?
	    LC_WANEM_LOST : 0;
}

/* --- the packet filter (worker thread) --------------------------------- */

#define LC_WANEM_TCP_FIN	0x01
#define LC_WANEM_TCP_SYN	0x02
#define LC_WANEM_TCP_RST	0x04
#define LC_WANEM_TCP_ACK	0x10
#define LC_WANEM_IP6_EXT_MAX	8


/*
 * Where the TCP header of the IP packet p (n bytes) starts.  Returns 1 and
 * sets *off and *end (the end of the packet by its IP length, <= n) for a
 * TCP segment whose 20-byte header is all there, else 0.
 */
static int
lc_wanem_find_tcp(const uint8_t *p, size_t n, size_t *off, size_t *end)
{
	size_t o, len;
	unsigned nh, i;

	if (n >= 20 && p[0] >> 4 == 4) {
		o = (size_t)(p[0] & 15) * 4;
		len = lc_peek_u16(p + 2);
		if (o < 20 || len < o || len > n || p[9] != 6 ||
		    (lc_peek_u16(p + 6) & 0x1fff) != 0)
			return 0;
	} else if (n >= 40 && p[0] >> 4 == 6) {
		len = 40 + lc_peek_u16(p + 4);
		if (len > n)
			return 0;
		nh = p[6];
		o = 40;
		for (i = 0; nh != 6; i++) {
			if (i == LC_WANEM_IP6_EXT_MAX || o + 8 > len)
				return 0;
			if (nh == 44) {		/* fragment: first only */
				if ((lc_peek_u16(p + o + 2) & 0xfff8) != 0)
					return 0;
				nh = p[o];
				o += 8;
			} else if (nh == 0 || nh == 43 || nh == 60) {
				nh = p[o];
				o += ((size_t)p[o + 1] + 1) * 8;
			} else
				return 0;
		}
	} else
		return 0;
	if (o + 20 > len)
		return 0;
	*off = o;
	*end = len;
	return 1;
}

static enum lc_wanem_verdict
lc_wanem_verdict(const struct lc_wanem_filter *f, const uint8_t *p,
    int tcp, size_t off)
{
	const uint8_t *t = p + off;
	uint32_t dport;
	unsigned i;

	if (f->all)
		return LC_WANEM_F_ALL;
	if (!tcp)
		return f->other_drop ? LC_WANEM_F_OTHER : LC_WANEM_PASS;
	dport = lc_peek_u16(t + 2);
	if ((t[13] & LC_WANEM_TCP_SYN) && !(t[13] & LC_WANEM_TCP_ACK)) {
		if (f->nosyn)
			return LC_WANEM_F_SYN;
		if (f->nsynports > 0) {
			for (i = 0; i < f->nsynports; i++)
				if (f->synports[i] == dport)
					break;
			if (i == f->nsynports)
				return LC_WANEM_F_SYN;
		}
	}
	if (f->nports == 0)
		return LC_WANEM_PASS;
	for (i = 0; i < f->nports; i++)
		if (f->ports[i] == dport)
			return LC_WANEM_PASS;
	return LC_WANEM_F_PORT;
}

/* One's complement sum of b (big-endian 16-bit words) added to sum. */
static uint32_t
lc_wanem_sum(uint32_t sum, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += lc_peek_u16(b + i);
	if (n & 1)
		sum += (uint32_t)b[n - 1] << 8;
	return sum;
}

static uint32_t
lc_wanem_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/*
 * Build into out (60 bytes) the RST that answers the TCP segment at off in
 * p (RFC 9293 3.10.7.1: seq = its ACK if it has one, else ACK its
 * sequence space).  Returns the packet length, 0 for no answer (a RST).
 */
static size_t
lc_wanem_build_rst(const uint8_t *p, size_t off, size_t end, uint8_t *out)
{
	const uint8_t *t = p + off;
	uint8_t *o, flags = t[13];
	size_t doff = (size_t)(t[12] >> 4) * 4, hl;
	uint32_t seglen, sum = 0;

	if ((flags & LC_WANEM_TCP_RST) || doff < 20 || off + doff > end)
		return 0;
	seglen = (uint32_t)(end - off - doff) +
	    ((flags & LC_WANEM_TCP_SYN) ? 1 : 0) +
	    ((flags & LC_WANEM_TCP_FIN) ? 1 : 0);
	hl = p[0] >> 4 == 4 ? 20 : 40;
	memset(out, 0, hl + 20);
	if (hl == 20) {
		out[0] = 0x45;
		lc_poke_u16(out + 2, 40);
		lc_poke_u16(out + 6, 0x4000);	/* DF */
		out[8] = 64;
		out[9] = 6;
		memcpy(out + 12, p + 16, 4);
		memcpy(out + 16, p + 12, 4);
		lc_poke_u16(out + 10,
		    (uint16_t)lc_wanem_fold(lc_wanem_sum(0, out, 20)));
		sum = lc_wanem_sum(0, out + 12, 8);
	} else {
		out[0] = 0x60;
		lc_poke_u16(out + 4, 20);
		out[6] = 6;
		out[7] = 64;
		memcpy(out + 8, p + 24, 16);
		memcpy(out + 24, p + 8, 16);
		sum = lc_wanem_sum(0, out + 8, 32);
	}
	sum += 6 + 20;		/* pseudo-header: protocol, TCP length */
	o = out + hl;
	memcpy(o, t + 2, 2);
	memcpy(o + 2, t, 2);
	if (flags & LC_WANEM_TCP_ACK) {
		memcpy(o + 4, t + 8, 4);
		o[13] = LC_WANEM_TCP_RST;
	} else {
		lc_poke_u32(o + 8, lc_peek_u32(t + 4) + seglen);
		o[13] = LC_WANEM_TCP_RST | LC_WANEM_TCP_ACK;
	}
	o[12] = 5 << 4;
	lc_poke_u16(o + 16,
	    (uint16_t)lc_wanem_fold(lc_wanem_sum(sum, o, 20)));
	return hl + 20;
}

/* Answer the filtered segment with a RST into the device it came from. */
static void
lc_wanem_reject(struct lc_wanem_dir *d, const uint8_t *p, size_t off,
    size_t end)
{
	uint8_t rst[60];
	size_t n = lc_wanem_build_rst(p, off, end, rst);
	ssize_t w;

	if (n == 0)
		return;
	do {
		w = write(d->in_fd, rst, n);
	} while (w < 0 && errno == EINTR);
	if (w == (ssize_t)n)
		lc_wanem_count(&d->st.f_rst, 1);
	else
		lc_wanem_count(&d->st.drop_err, 1);
}

/*
 * Does the packet p of n bytes go on to the link?  Counts it and answers
 * it (reject) when not.
 */
static bool
lc_wanem_pass(struct lc_wanem_dir *d, const uint8_t *p, size_t n)
{
	const struct lc_wanem_filter *f = &d->conf->filter[d->idx];
	size_t off = 0, end = 0;
	int tcp;

	if (atomic_load_explicit(&lc_wanem_cut, memory_order_relaxed)) {
		lc_wanem_count(&d->st.drop_cut, 1);
		return false;
	}
	if (!f->on)
		return true;
	tcp = lc_wanem_find_tcp(p, n, &off, &end);
	switch (lc_wanem_verdict(f, p, tcp, off)) {
	case LC_WANEM_PASS:
		return true;
	case LC_WANEM_F_ALL:
		lc_wanem_count(&d->st.f_all, 1);
		break;
	case LC_WANEM_F_SYN:
		lc_wanem_count(&d->st.f_syn, 1);
		break;
	case LC_WANEM_F_PORT:
		lc_wanem_count(&d->st.f_port, 1);
		break;
	case LC_WANEM_F_OTHER:
		lc_wanem_count(&d->st.f_other, 1);
		return false;
	}
	if (f->reject && tcp)
		lc_wanem_reject(d, p, off, end);
	return false;
}

/* A packet of len bytes was read into the record at tail: admit it. */
static void
lc_wanem_admit(struct lc_wanem_dir *d, uint64_t len)
{
	struct lc_wanem_pkt *p = lc_wanem_rec(d, d->tail);
	uint64_t now = lc_wanem_now();

	lc_wanem_queue_advance(d, now);
	if (d->qbytes + len > d->conf->queue) {
		lc_wanem_count(&d->st.drop_queue, 1);
		return;
	}
	p->t_dep = lc_wanem_serialize(d, now, len);
	p->len = (uint32_t)len;
	p->flags = lc_wanem_lost(d);
	d->tail += lc_wanem_units(len);
	d->qbytes += len;
	if (d->qbytes > lc_wanem_get(&d->st.q_peak))
		atomic_store_explicit(&d->st.q_peak, d->qbytes,
		    memory_order_relaxed);
	if (d->qbytes > lc_wanem_get(&d->st.q_max))
		atomic_store_explicit(&d->st.q_max, d->qbytes,
		    memory_order_relaxed);
}

/*
 * Read up to LC_WANEM_BATCH packets.  Returns 1 if the batch was used up
 * (more may be waiting), 0 when the device had nothing more, or -errno.
 */
static int
lc_wanem_receive(struct lc_wanem_dir *d)
{
	int i;

	for (i = 0; i < LC_WANEM_BATCH; i++) {
		bool fits = d->tail - d->head + d->max_units <= d->nunits;
		uint8_t *buf = fits ?
		    (uint8_t *)(lc_wanem_rec(d, d->tail) + 1) : d->scratch;
		ssize_t n = read(d->in_fd, buf, (size_t)d->conf->mtu);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return -errno;
		lc_wanem_count(&d->st.in_pkts, 1);
		lc_wanem_count(&d->st.in_bytes, (uint64_t)n);
		if (n == 0 || (uint64_t)n > d->conf->mtu)	/* truncated */
			lc_wanem_count(&d->st.drop_err, 1);
		else if (!lc_wanem_pass(d, buf, (size_t)n))
			continue;
		else if (!fits)
			lc_wanem_count(&d->st.drop_ring, 1);
		else
			lc_wanem_admit(d, (uint64_t)n);
	}
	return 1;
}

static void
lc_wanem_write(struct lc_wanem_dir *d, const struct lc_wanem_pkt *p)
{
	ssize_t n;

	do {
		n = write(d->out_fd, p + 1, p->len);
	} while (n < 0 && errno == EINTR);
	if (n == (ssize_t)p->len) {
		lc_wanem_count(&d->st.out_pkts, 1);
		lc_wanem_count(&d->st.out_bytes, p->len);
	} else {
		/* EIO: peer device down; EINVAL: not an IP packet. */
		lc_wanem_count(&d->st.drop_err, 1);
	}
}

/*
 * Deliver up to LC_WANEM_BATCH packets due by horizon.  Returns 1 if the
 * batch was used up, else 0.  A packet still counted in the queue (only
 * possible when the horizon reaches past now) leaves the queue with it.
 */
static int
lc_wanem_deliver(struct lc_wanem_dir *d, uint64_t horizon)
{
	int i;

	for (i = 0; i < LC_WANEM_BATCH; i++) {
		struct lc_wanem_pkt *p;
		uint64_t units;

		if (d->head == d->tail)
			return 0;
		p = lc_wanem_rec(d, d->head);
		if (p->t_dep + d->conf->delay_ns > horizon)
			return 0;
		if (p->flags & LC_WANEM_LOST)
			lc_wanem_count(&d->st.drop_loss, 1);
		else if (atomic_load_explicit(&lc_wanem_cut,
		    memory_order_relaxed))
			lc_wanem_count(&d->st.drop_cut, 1);
		else
			lc_wanem_write(d, p);
		units = lc_wanem_units(p->len);
		if (d->qhead == d->head) {
			d->qbytes -= p->len;
			d->qhead += units;
		}
		d->head += units;
	}
	return 1;
}

static uint64_t
lc_wanem_next_due(const struct lc_wanem_dir *d)
{
	if (d->head == d->tail)
		return UINT64_MAX;
	return lc_wanem_rec(d, d->head)->t_dep + d->conf->delay_ns;
}

/*
 * Sleep until input, stop or the next delivery.  With a tick, wake on the
 * first multiple of tick at or after due - tick / 2: the worker then wakes
 * at most once per tick for deliveries, and each packet goes out within
 * tick / 2 either side of its exact time (mean error zero).
 */
static void
lc_wanem_wait(struct lc_wanem_dir *d, uint64_t due)
{
	uint64_t tick = d->conf->tick_ns;

	struct pollfd pfd[2] = {
		{ .fd = d->in_fd, .events = POLLIN },
		{ .fd = d->stop_fd, .events = POLLIN },
	};
	struct timespec ts, *tsp = NULL;
	uint64_t now = lc_wanem_now();

	if (due != UINT64_MAX && tick > 0 && due > tick / 2)
		due = (due - tick / 2 + tick - 1) / tick * tick;
	if (due != UINT64_MAX) {
		if (due <= now)
			return;
		ts.tv_sec = (time_t)((due - now) / LC_WANEM_NS);
		ts.tv_nsec = (long)((due - now) % LC_WANEM_NS);
		tsp = &ts;
	}
	(void)ppoll(pfd, 2, tsp, NULL);
}

static void *
lc_wanem_worker(void *arg)
{
	struct lc_wanem_dir *d = arg;
	char tag[16];
	uint64_t now;
	int more, r;

	snprintf(tag, sizeof(tag), "wanem %s", d->name);
	pthread_setname_np(pthread_self(), tag);
	lc_log_set_tag(d->name);
	(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	while (!atomic_load_explicit(&lc_wanem_stop, memory_order_relaxed)) {
		now = lc_wanem_now();
		lc_wanem_queue_advance(d, now);
		more = lc_wanem_deliver(d, now + d->conf->tick_ns / 2);
		if ((r = lc_wanem_receive(d)) < 0) {
			lc_log_error("read: %s", strerror(-r));
			atomic_store(&lc_wanem_failed, 1);
			kill(getpid(), SIGTERM);
			break;
		}
		if (more || r > 0)
			continue;
		lc_wanem_wait(d, lc_wanem_next_due(d));
	}
	return NULL;
}

/* --- statistics and main ------------------------------------------------ */

static void
lc_wanem_print_dir(struct lc_wanem_dir *d, double t, double dt)
{
	struct lc_wanem_stats *s = &d->st;
	uint64_t out_b = lc_wanem_get(&s->out_bytes);
	uint64_t out_p = lc_wanem_get(&s->out_pkts);
	uint64_t loss = lc_wanem_get(&s->drop_loss);
	double rate = dt > 0.0 ?
	    (double)(out_b - d->last_out_bytes) * 8.0 / dt / 1e6 : 0.0;
	char line[640];
	int n;

	d->last_out_bytes = out_b;
	n = snprintf(line, sizeof(line), "wanem: t=%.1f %s in_pkts=%llu "
	    "in_bytes=%llu out_pkts=%llu out_bytes=%llu drop_queue=%llu "
	    "drop_loss=%llu drop_ring=%llu drop_err=%llu loss=%.4f%% "
	    "q_peak=%llu q_max=%llu out_mbit=%.1f drop_cut=%llu f_all=%llu "
	    "f_syn=%llu f_port=%llu f_other=%llu f_rst=%llu\n", t, d->name,
	    (unsigned long long)lc_wanem_get(&s->in_pkts),
	    (unsigned long long)lc_wanem_get(&s->in_bytes),
	    (unsigned long long)out_p, (unsigned long long)out_b,
	    (unsigned long long)lc_wanem_get(&s->drop_queue),
	    (unsigned long long)loss,
	    (unsigned long long)lc_wanem_get(&s->drop_ring),
	    (unsigned long long)lc_wanem_get(&s->drop_err),
	    out_p + loss > 0 ? 100.0 * (double)loss / (double)(out_p + loss) :
	    0.0,
	    (unsigned long long)atomic_exchange_explicit(&s->q_peak, 0,
	    memory_order_relaxed),
	    (unsigned long long)lc_wanem_get(&s->q_max), rate,
	    (unsigned long long)lc_wanem_get(&s->drop_cut),
	    (unsigned long long)lc_wanem_get(&s->f_all),
	    (unsigned long long)lc_wanem_get(&s->f_syn),
	    (unsigned long long)lc_wanem_get(&s->f_port),
	    (unsigned long long)lc_wanem_get(&s->f_other),
	    (unsigned long long)lc_wanem_get(&s->f_rst));
	if (n > 0)
		(void)!write(STDOUT_FILENO, line,
		    (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static int
lc_wanem_write_pidfile(const char *path, struct lc_err *e)
{
	char buf[32];
	int fd, n, r = 0;

	if (path == NULL)
		return 0;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "pidfile %s", path);
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (write(fd, buf, (size_t)n) != n)
		r = lc_err_sys(e, LC_ERR_IO, errno, "write pidfile %s", path);
	close(fd);
	return r;
}

/* Cut or restore the link; one line with the monotonic time. */
static void
lc_wanem_set_cut(bool cut, uint64_t start)
{
	bool was = atomic_exchange(&lc_wanem_cut, cut);
	uint64_t now = lc_wanem_now();
	char line[128];
	int n;

	n = snprintf(line, sizeof(line), "wanem: t=%.3f mono=%llu.%09llu "
	    "link %s%s\n", (double)(now - start) / 1e9,
	    (unsigned long long)(now / LC_WANEM_NS),
	    (unsigned long long)(now % LC_WANEM_NS),
	    cut ? "cut" : "restored", was == cut ? " (no change)" : "");
	if (n > 0)
		(void)!write(STDOUT_FILENO, line,
		    (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* Wait for signals; print stats every second with --stats. */
static void
lc_wanem_main_loop(const struct lc_wanem_conf *c, struct lc_wanem_dir *dir,
    const sigset_t *set, uint64_t start)
{
	uint64_t last = start, now;
	struct timespec one = { 1, 0 };
	siginfo_t si;
	int sig;

	for (;;) {
		sig = c->stats ? sigtimedwait(set, &si, &one) :
		    sigwaitinfo(set, &si);
		if (sig < 0 && errno != EAGAIN)
			continue;
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
			return;
		if (sig == SIGRTMIN || sig == SIGRTMIN + 1) {
			lc_wanem_set_cut(sig == SIGRTMIN, start);
			continue;
		}
		now = lc_wanem_now();
		lc_wanem_print_dir(&dir[0], (double)(now - start) / 1e9,
		    (double)(now - last) / 1e9);
		lc_wanem_print_dir(&dir[1], (double)(now - start) / 1e9,
		    (double)(now - last) / 1e9);
		last = now;
	}
}

static int
lc_wanem_start(struct lc_wanem_conf *c, struct lc_wanem_dir *dir,
    int *fd, int stop_fd, struct lc_err *e)
{
	int i, r;

	for (i = 0; i < 2; i++) {
		if ((r = lc_wanem_tun_open(c->dev[i], c->netns[i], c->mtu,
		    &fd[i], e)) != 0)
			return r;
	}
	for (i = 0; i < 2; i++) {
		if ((r = lc_wanem_dir_init(&dir[i], c, i, e)) != 0)
			return r;
		dir[i].in_fd = fd[i];
		dir[i].out_fd = fd[1 - i];
		dir[i].stop_fd = stop_fd;
	}
	for (i = 0; i < 2; i++) {
		if ((r = pthread_create(&dir[i].thread, NULL, lc_wanem_worker,
		    &dir[i])) != 0)
			return lc_err_sys(e, LC_ERR_INTERNAL, r,
			    "pthread_create");
		dir[i].started = true;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static struct lc_wanem_dir dir[2];
	struct lc_wanem_conf conf;
	struct lc_err err;
	sigset_t set;
	int fd[2] = { -1, -1 }, stop_fd = -1, i, r, wrote_pid = 0;
	uint64_t one = 1, start = lc_wanem_now();

	lc_log_init("wanem", LC_LOG_INFO, STDERR_FILENO);
	lc_err_clear(&err);
	if ((r = lc_wanem_parse_args(&conf, argc, argv, &err)) != 0) {
		lc_log_error("%s", err.msg);
		return 2;
	}
	/* Workers inherit this mask; only the main thread takes signals. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGRTMIN);
	sigaddset(&set, SIGRTMIN + 1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	if ((stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		r = lc_err_sys(&err, LC_ERR_IO, errno, "eventfd");
		goto out;
	}
	if ((r = lc_wanem_start(&conf, dir, fd, stop_fd, &err)) != 0 ||
	    (r = lc_wanem_write_pidfile(conf.pidfile, &err)) != 0)
		goto out;
	wrote_pid = conf.pidfile != NULL;
	lc_log_info("%s%s%s <-> %s%s%s: rate %llu bit/s, delay %.3f ms, "
	    "loss %.4f%%, queue %llu B, mtu %llu, tick %llu us, seed %llu, "
	    "ring 2 x %.1f MiB",
	    conf.netns[0] ? conf.netns[0] : "", conf.netns[0] ? ":" : "",
	    conf.dev[0], conf.netns[1] ? conf.netns[1] : "",
	    conf.netns[1] ? ":" : "", conf.dev[1],
	    (unsigned long long)conf.rate, (double)conf.delay_ns / 1e6,
	    (double)conf.loss_ppb / 1e7, (unsigned long long)conf.queue,
	    (unsigned long long)conf.mtu,
	    (unsigned long long)(conf.tick_ns / 1000),
	    (unsigned long long)conf.seed,
	    (double)dir[0].map_len / 2.0 / 1048576.0);
	lc_wanem_main_loop(&conf, dir, &set, start);
 out:
	atomic_store(&lc_wanem_stop, true);
	if (stop_fd >= 0)
		(void)!write(stop_fd, &one, sizeof(one));
	for (i = 0; i < 2; i++)
		if (dir[i].started)
			pthread_join(dir[i].thread, NULL);
	if (r == 0) {
		/* Final lines: out_mbit is the average over the whole run. */
		double t = (double)(lc_wanem_now() - start) / 1e9;
		for (i = 0; i < 2; i++) {
			dir[i].last_out_bytes = 0;
			lc_wanem_print_dir(&dir[i], t, t);
		}
	} else
		lc_log_error("%s", err.msg);
	if (wrote_pid)
		unlink(conf.pidfile);
	for (i = 0; i < 2; i++) {
		lc_wanem_dir_free(&dir[i]);
		if (fd[i] >= 0)
			close(fd[i]);
	}
	if (stop_fd >= 0)
		close(stop_fd);
	if (r == 0 && atomic_load(&lc_wanem_failed))
		r = -LC_ERR_IO;
	return r == 0 ? 0 : 1;
}
