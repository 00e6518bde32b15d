/*
 * The sink's memory and quotas: the receive buffers' share of the memory
 * bound (LISTEN), quotas that grow into what the bound leaves, and the
 * head-of-line measure.  lc__sink_mem_setup runs on main in LISTEN; the
 * quota calls come from the receiver threads (atomics and hol_mu).
 * State: struct lc_sink_mem (sink_int.h).
 *
 * Memory.  The receive buffers are the sink's only large allocation:
 * streams x (quota + 1 spare) x block, and with -c (LC_XFER_COMPRESS) one
 * more block per stream, each receiver's input buffer for compressed
 * payloads (the inflate state itself, about 44 KiB a stream, fits in the
 * allowance below).  They get what --max-memory
 * (default 128 MiB) leaves after a fixed allowance for the process itself
 * (code and libraries, control buffers, TLS state, threads, hashing), and
 * the quota aims at LC_SINK_QUOTA_TARGET as it always has, so the default
 * copy uses what it did before.  What the buffers leave of the bound
 * (mem.left) is one budget for two things: quotas that grow (a block at a
 * time) and holes that wait in the writers (LC_WFILE_HOLE_COST each,
 * given back as they are written); growth leaves LC_SINK_HOLE_RESERVE of
 * it to the holes.  A hole finding the budget spent waits for its writer
 * to move (receiver.c), like a block finding its quota full.
 */
#include "sink_int.h"

#include "clock.h"
#include "log.h"

#include <stdatomic.h>

#define LC_SINK_MEM_RESERVE (16u << 20)
#define LC_SINK_HOLE_RESERVE (1u << 20)	/* 16384 waiting holes */
#define LC_SINK_QUOTA_TARGET (32u << 20)
#define LC_MIN_QUOTA 2
#define LC_MAX_QUOTA 16
/* a round trip from which a lost segment holds a stream up long enough
   for more buffers to pay (loopback: tens of us; a LAN: well under) */
#define LC_SINK_GROW_RTT_US 2000
/* segments out of order, at least this many and one in this many
   received or more: a lossy path */
#define LC_SINK_GROW_OOO_MIN 8
#define LC_SINK_GROW_OOO_PER 100

/* See sink_int.h. */
int
lc__sink_grow_pays(const struct lc_sock_path *p)
{
	if (p->rtt_us >= LC_SINK_GROW_RTT_US)
		return LC_GROW_LONG;
	/* a loss puts a round trip's worth of segments out of order; a
	   busy loopback a few (1 to 4 of some 2,000 64 KiB segments a
	   stream in a 2 GiB -s 16 copy) */
	if (p->ooo_packets >= LC_SINK_GROW_OOO_MIN && (p->segs_in == 0 ||
	    (uint64_t)p->ooo_packets * LC_SINK_GROW_OOO_PER >= p->segs_in))
		return LC_GROW_LOSSY;
	return LC_GROW_HELD;
}

/*
 * Does a bigger quota pay on rv's path (lc__sink_grow_pays)?  Only where
 * the path itself can hold a block up: a long round trip (a lost segment
 * takes at least one to recover, while the other streams fill their
 * quotas) or losses (segments out of order, more than a busy CPU puts
 * there).  On a short clean path (loopback, a LAN) a starving writer
 * waits for a stream the CPU has not got to yet: more buffers only fill
 * up, the memory grows and the copy is no faster (on two busy cores a
 * -s 16 copy took every block the bound left, 104 MiB against 41).  A
 * path the kernel does not show us (not TCP: the data streams over SSH
 * channels) keeps growing as before.
 */
static int
lc_sink_path_pays(struct lc_sink *s, struct lc_receiver *rv)
{
	struct lc_sock_path p;
	int why;

	if (lc_sock_path(rv->conn.fd, &p) != 0) {
		atomic_fetch_add(&s->mem.grow_why[LC_GROW_NOT_TCP], 1);
		return 1;
	}
	why = lc__sink_grow_pays(&p);
	if (why != LC_GROW_HELD) {
		atomic_fetch_add(&s->mem.grow_why[why], 1);
		atomic_store(&s->mem.grow_rtt_us, p.rtt_us);
		atomic_store(&s->mem.grow_ooo, p.ooo_packets);
		return 1;
	}
	atomic_fetch_add(&s->mem.grow_held, 1);
	atomic_store(&s->mem.path_rtt_us, p.rtt_us);
	return 0;
}

/* See sink_int.h. */
void
lc__sink_quota_wait(struct lc_sink *s, int waiting)
{
	uint64_t now = lc_now_ns();

	pthread_mutex_lock(&s->mem.hol_mu);
	if (waiting) {
		s->mem.hol_waiting++;
		s->mem.quota_wait_ns -= now;
	} else {
		s->mem.hol_waiting--;
		s->mem.quota_wait_ns += now;
	}
	pthread_mutex_unlock(&s->mem.hol_mu);
}

/* See sink_int.h. */
int
lc__sink_quota_grow(struct lc_sink *s, struct lc_receiver *rv)
{
	int_fast64_t left = atomic_load(&s->mem.left);

	if (!lc_sink_path_pays(s, rv))
		return 0;
	/* waiting holes keep LC_SINK_HOLE_RESERVE of it for themselves */
	do {
		if (left < (int_fast64_t)s->block + LC_SINK_HOLE_RESERVE)
			return 0;
	} while (!atomic_compare_exchange_weak(&s->mem.left, &left,
	    left - s->block));
	if (lc_pool_grow(rv->pool, s->mem.quota_max))
		return 1;
	atomic_fetch_add(&s->mem.left, s->block);
	return 0;
}

/*
 * -v: head-of-line blocking, measured: how long the receivers waited for
 * a buffer of their quota (summed over the streams: time in which a
 * stream could not take more from its connection because the ordered
 * writer was waiting for a block on another one, or for the disk), and
 * the quotas they ended with.
 */
void
lc__sink_hol_report(struct lc_sink *s)
{
	uint64_t wait;
	uint32_t qmax = 0, qsum = 0;

	pthread_mutex_lock(&s->mem.hol_mu);
	wait = s->mem.hol_waiting == 0 ? s->mem.quota_wait_ns : 0;
	pthread_mutex_unlock(&s->mem.hol_mu);
	if (s->nstreams < 2)
		return;
	for (uint32_t i = 0; i < s->nstreams; i++) {
		uint32_t q = lc_pool_quota(s->recv.rv[i].pool);
		qsum += q;
		if (q > qmax)
			qmax = q;
	}
	lc_log_verbose("head-of-line: streams waited %.2f s in all for a "
	    "buffer (%u streams); quotas grew from %u to %u blocks of %u KiB "
	    "in all (at most %u on one stream)", (double)wait / 1e9,
	    s->nstreams, s->quota * s->nstreams, qsum, s->block >> 10, qmax);
	if (atomic_load(&s->mem.grow_held) > 0)
		lc_log_verbose("sink: quotas held %u times on a short "
		    "clean path (round trip %u us, no loss): the CPU, not the "
		    "path, kept the writers waiting",
		    (unsigned)atomic_load(&s->mem.grow_held),
		    (unsigned)atomic_load(&s->mem.path_rtt_us));
	if (atomic_load(&s->mem.grow_why[LC_GROW_LONG]) +
	    atomic_load(&s->mem.grow_why[LC_GROW_LOSSY]) +
	    atomic_load(&s->mem.grow_why[LC_GROW_NOT_TCP]) > 0)
		lc_log_verbose("sink: quotas let grow %u times for a long "
		    "round trip, %u for losses, %u off TCP (last: round trip "
		    "%u us, %u segments out of order)",
		    (unsigned)atomic_load(&s->mem.grow_why[LC_GROW_LONG]),
		    (unsigned)atomic_load(&s->mem.grow_why[LC_GROW_LOSSY]),
		    (unsigned)atomic_load(&s->mem.grow_why[LC_GROW_NOT_TCP]),
		    (unsigned)atomic_load(&s->mem.grow_rtt_us),
		    (unsigned)atomic_load(&s->mem.grow_ooo));
}

/*
 * Streams, block size and quota within the memory budget, whatever the
 * controller asked: buffers = streams x (quota + extra) x block must fit
 * in budget - LC_SINK_MEM_RESERVE, extra being the blocks a stream holds
 * outside its quota (1 spare; 2 with -c: the inflate input buffer too).
 * Clamped in order: the quota (down to LC_MIN_QUOTA), then the block size
 * (to a multiple of 4 KiB, down to LC_MIN_BLOCK), then the streams.
 * Never more streams than max_streams (what our HELLO advertised) nor
 * more than asked for.  *left: the bytes of the bound that the buffers
 * leave, for quotas to grow into and for waiting holes.
 */
static void
lc_sink_limits(uint64_t budget, uint32_t max_streams, uint32_t extra,
    uint32_t *streams, uint32_t *block, uint32_t *quota, uint64_t *left)
{
	uint64_t bufs, st, b = *block, q;

	/* the host resolves the operator's bound; never underflow here */
	if (budget < 2 * LC_SINK_MEM_RESERVE)
		budget = 2 * LC_SINK_MEM_RESERVE;
	bufs = budget - LC_SINK_MEM_RESERVE;
	st = *streams < max_streams ? *streams : max_streams;
	if (st == 0)
		st = 1;
	/* the quota the sink has always aimed at ... */
	q = (bufs < LC_SINK_QUOTA_TARGET ? bufs : LC_SINK_QUOTA_TARGET) /
	    (st * b);
	if (q > LC_MAX_QUOTA)
		q = LC_MAX_QUOTA;
	/* ... no more than the budget allows (with the extras) ... */
	if (q + extra > bufs / (st * b))
		q = bufs / (st * b) >= LC_MIN_QUOTA + extra ?
		    bufs / (st * b) - extra : 0;
	if (q < LC_MIN_QUOTA) {
		q = LC_MIN_QUOTA;
		/* ... then smaller blocks ... */
		b = bufs / (st * (LC_MIN_QUOTA + extra)) & ~(uint64_t)4095;
		if (b > *block)
			b = *block;
		if (b < LC_MIN_BLOCK) {
			/* ... then fewer streams */
			b = LC_MIN_BLOCK;
			st = bufs / (b * (LC_MIN_QUOTA + extra));
		}
	}
	*streams = (uint32_t)st;
	*block = (uint32_t)b;
	*quota = (uint32_t)q;
	/* what the bound leaves: quota growth and waiting holes share it */
	*left = bufs > st * (q + extra) * b ? bufs - st * (q + extra) * b : 0;
}

/* See sink_int.h. */
void
lc__sink_mem_setup(struct lc_sink *s, const struct lc_msg_listen *m)
{
	uint64_t left;

	s->nstreams = m->streams;
	s->block = m->block;
	lc_sink_limits(s->port.set.max_memory, s->port.set.max_streams,
	    (m->flags & LC_XFER_COMPRESS) ? 2 : 1, &s->nstreams, &s->block,
	    &s->quota, &left);
	atomic_store(&s->mem.left, (int_fast64_t)left);
	s->mem.quota_max = s->quota > LC_MAX_QUOTA ? s->quota : LC_MAX_QUOTA;
	if (s->nstreams != m->streams || s->block != m->block)
		lc_log_verbose("sink: %u streams of %u KiB blocks asked for, "
		    "%u of %u KiB granted (memory bound %llu MiB)", m->streams,
		    m->block >> 10, s->nstreams, s->block >> 10,
		    (unsigned long long)(s->port.set.max_memory >> 20));
}

/* See sink_int.h. */
uint32_t
lc__sink_rcvbuf(uint32_t streams, uint64_t rmem_max, uint64_t tcp_rmem_max,
    int loopback)
{
	uint64_t v = rmem_max;

	if (tcp_rmem_max < v)
		v = tcp_rmem_max;
	if (v > LC_RCVBUF_FIXED_MAX)
		v = LC_RCVBUF_FIXED_MAX;
	if (loopback || streams == 0 || v * streams < LC_RCVBUF_FIXED_SUM)
		return 0;
	return (uint32_t)v;
}
