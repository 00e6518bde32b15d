/*
 * Negotiation, the controller's side: HELLO both ways, then streams,
 * window and block settled from the options and what each agent allows,
 * and the sink's LISTENING answer turned into the source's CONNECT.
 */
#include "controller_int.h"
#include "log.h"
#include "parse.h"
#include "secmem.h"
#include "testhook_ctl.h"
#include "version.h"

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

_Static_assert(sizeof(((struct lc_copy_opts *)0)->takeover) == LC_KEY_LEN,
    "the takeover key is a SINK_TARGET key");

#define LC_QUIET_S 5
#define LC_QUIET_MIN_RATE (256u << 10)	/* bytes/s per stream */

int
lc__ctl_send_hello(struct lc_endpoint *ep)
{
	struct lc_msg_hello h;

	memset(&h, 0, sizeof(h));
	h.magic = LC_PROTO_MAGIC;
	h.proto = LC_PROTO_VERSION;
	snprintf(h.software, sizeof(h.software), "%s", LC_VERSION_STRING);
	h.log_level = (uint32_t)lc_log_level();
	/* we take FILE_DONE's flags (the "updated" count); an agent from
	   before ignores the flag and sends none */
	h.flags = LC_HELLO_COUNTS;
	return lc_msg_put_hello(&ep->out, &h);
}

int
lc__ctl_got_hello(struct lc_ctl *c, struct lc_endpoint *ep, const uint8_t *p,
    size_t n, struct lc_err *e)
{
	int r = lc_msg_get_hello(p, n, &ep->hello);

	if (r == -LC_ERR_VERSION)
		return lc_err_set(e, LC_ERR_VERSION,
		    "protocol version mismatch: this lanecp %s speaks "
		    "protocol %u, the agent on %s is lanecp %s with protocol "
		    "%u; install the same version on both hosts",
		    LC_VERSION_STRING, LC_PROTO_VERSION, ep->name,
		    ep->hello.software, ep->hello.proto);
	if (r != 0)
		return lc_err_set(e, LC_ERR_PROTO, "%s: malformed HELLO "
		    "(is '%s' really lanecp?)", ep->name, lc__ctl_agent_cmd(c));
	ep->hello_seen = 1;
	if (ep == &c->src)
		ep->hello.flags = lc_testhook_src_flags(ep->hello.flags);
	else
		ep->hello.flags = lc_testhook_dst_flags(ep->hello.flags);
	/* each agent's, as it comes: the sink's may come after LISTEN */
	if (c->args.pipes && !(ep->hello.flags & LC_HELLO_PIPES))
		return lc_err_set(e, LC_ERR_VERSION, "%s: the agent (lanecp "
		    "%s) cannot copy from or to a pipe ('-' or -N); install "
		    "this version there", ep->name, ep->hello.software);
	if (!(ep->hello.flags & LC_HELLO_MIRROR) &&
	    ((ep == &c->src && c->o->filters != NULL &&
	    c->o->filters->n > 0) || (ep == &c->dst_ep &&
	    (c->o->dry_run || c->o->delete_extra))))
		return lc_err_set(e, LC_ERR_VERSION, "%s: the agent (lanecp "
		    "%s) knows no %s; install this version there", ep->name,
		    ep->hello.software, ep == &c->src ? "--exclude or "
		    "--include" : "--delete or -n");
	if (ep == &c->src && c->o->shard.n > 1 &&
	    !(ep->hello.flags & LC_HELLO_SHARD))
		return lc_err_set(e, LC_ERR_VERSION, "%s: the agent (lanecp "
		    "%s) knows no --shard (it would send the whole tree); "
		    "install this version there", ep->name,
		    ep->hello.software);
	if (ep->remote)
		lc_log_verbose("%s: agent lanecp %s on %s", ep->name,
		    ep->hello.software, ep->hello.hostname);
	/* everything may be settled before a remote sink's HELLO is in */
	if (ep == &c->dst_ep && (r = lc__ctl_sink_nomore(c)) != 0)
		return lc_err_set(e, -r, "control output");
	return 0;
}

static uint32_t
lc_min_u32(uint32_t a, uint64_t b)
{
	return b != 0 && b < a ? (uint32_t)b : a;
}

int
lc__ctl_send_adds(struct lc_ctl *c)
{
	struct lc_msg_src_add a;
	int r = 0;

	for (size_t i = 0; r == 0 && i < c->o->nsources; i++) {
		memset(&a, 0, sizeof(a));
		snprintf(a.path, sizeof(a.path), "%s", c->args.srcs[i].path);
		a.flags = c->chk.reqs[i].flags;
		r = lc_msg_put_src_add(&c->src.out, &a);
		c->chk.adds_sent++;
	}
	return r;
}

/* The source has answered HELLO: settle parameters and start the work. */
int
lc__ctl_negotiate(struct lc_ctl *c, struct lc_err *e)
{
	const struct lc_copy_opts *o = c->o;
	struct lc_msg_sink_target t;
	struct lc_msg_listen l;
	struct lc_msg_src_credit cr;
	int r;

	/*
	 * Called as soon as the source's HELLO is in, without waiting for
	 * the sink's: SINK_TARGET and LISTEN then travel right behind our
	 * HELLO, one round trip sooner.  What the sink's HELLO would have
	 * told (its descriptor limit, net.core.rmem_max) it applies itself:
	 * LISTENING grants no more streams than it can take and reports the
	 * window it really got.
	 */
	c->phase = LC_CTL_LISTING;
	c->streams = lc_min_u32(o->streams, c->src.hello.max_streams);
	if (c->streams == 0)
		c->streams = 1;
	if (c->streams < o->streams)
		lc_log_verbose("streams: %u requested, %u allowed by the "
		    "source's descriptor limit", o->streams, c->streams);
	c->window = o->window;
	if (c->window != 0) {
		c->window = lc_min_u32(c->window, c->src.hello.wmem_max);
		if (c->window < o->window)
			lc_log_verbose("window: %u requested, clamped to %u "
			    "by the source's net.core.wmem_max", o->window,
			    c->window);
	}
	c->block = o->block;
	if ((r = lc__ctl_path_setup(c, e)) != 0)
		return r;
	if (c->key == NULL && (c->key = lc_secmem_alloc(LC_KEY_LEN)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	if (RAND_bytes(c->key, LC_KEY_LEN) != 1)
		return lc_err_set(e, LC_ERR_INTERNAL, "RAND_bytes failed");

	memset(&t, 0, sizeof(t));
	/* -u replaces what changed, so it overwrites like -f */
	t.flags = (o->force || o->update ? LC_TGT_FORCE : 0) |
	    (o->nsources > 1 || o->recursive ? LC_TGT_WANT_DIR : 0) |
	    (o->no_fsync ? LC_TGT_NO_FSYNC : 0) |
	    (o->resume ? LC_TGT_RESUME : 0) |
	    (o->no_space_check ? LC_TGT_NO_SPACE_CHECK : 0) |
	    (o->preserve ? LC_TGT_PRESERVE : 0) |
	    (o->update ? LC_TGT_UPDATE : 0) |
	    (o->update && !o->whole_file ? LC_TGT_DELTA : 0) |
	    /* the source's HELLO is in: small chunks only if it can read
	       their list (FILE_HASHES), else one FILE_PREFIX as before */
	    (o->update && !o->whole_file &&
	    (c->src.hello.flags & LC_HELLO_HASHES) ? LC_TGT_HASHES : 0) |
	    (o->skip_existing ? LC_TGT_SKIP_EXISTING : 0) |
	    (o->recursive ? LC_TGT_TREE : 0) |
	    (o->owner ? LC_TGT_OWNER : 0) |
	    (o->owner && o->numeric_ids ? LC_TGT_NUMERIC_IDS : 0) |
	    (c->args.keep_setid ? LC_TGT_SETID : 0) |
	    (c->args.stdout_target ? LC_TGT_STDOUT : 0) |
	    (o->prog_dst ? LC_TGT_PROGRAM : 0) |
	    (o->delete_extra ? LC_TGT_DELETE : 0) |
	    (o->dry_run ? LC_TGT_DRYRUN : 0);
	/*
	 * Files in flight: as many as the source's descriptor limit covers
	 * (it holds a file open from FILE_READY until it is sent), 512 to
	 * 4096; the sink may grant fewer (TARGET_OK).
	 */
	t.inflight = c->src.hello.max_files;
	if (t.inflight < LC_FILES_INFLIGHT)
		t.inflight = LC_FILES_INFLIGHT;
	if (t.inflight > LC_FILES_INFLIGHT_MAX)
		t.inflight = LC_FILES_INFLIGHT_MAX;
	c->files.asked = t.inflight;
	memcpy(t.takeover, o->takeover, sizeof(t.takeover));
	snprintf(t.target, sizeof(t.target), "%s", c->args.dst.path);
	memset(&l, 0, sizeof(l));
	l.streams = c->streams;
	l.window = c->window;
	l.block = c->block;
	/* over SSH the streams are encrypted already: no TLS inside */
	c->dp.tls = o->encrypt && c->dp.path != LC_PATH_SSH;
	l.flags = (c->dp.tls ? LC_XFER_ENCRYPT : 0) | lc__ctl_listen_flags(c) |
	    (o->zlevel != 0 ? LC_XFER_COMPRESS : 0);
	l.csum = (uint32_t)o->csum_alg;
	l.stall_s = o->stall_s;
	/*
	 * A healthy stream brings bytes (or an IDLE frame) every second, so
	 * all of them silent for LC_QUIET_S means the path went away: the
	 * sink drops them at once and the source dials fresh connections,
	 * rather than waiting out TCP's backed-off retransmissions.  Not
	 * with a rate so low (-x) that a stream may wait that long for its
	 * next slice, nor with --stream-timeout 0.
	 */
	l.quiet_s = o->stall_s == 0 || (o->rate != 0 &&
	    o->rate / c->streams < LC_QUIET_MIN_RATE) ? 0 : LC_QUIET_S;
	memcpy(l.key, c->key, LC_KEY_LEN);
	r = lc_msg_put_sink_target(&c->dst_ep.out, &t);
	OPENSSL_cleanse(t.takeover, sizeof(t.takeover));
	if (r == 0)
		r = lc_msg_put_listen(&c->dst_ep.out, &l);
	OPENSSL_cleanse(&l, sizeof(l));
	for (size_t i = 0; r == 0 && o->filters != NULL &&
	    i < o->filters->n; i++) {
		struct lc_msg_src_filter fl;
		const char *pat;
		memset(&fl, 0, sizeof(fl));
		fl.kind = (uint8_t)lc_filters_rule(o->filters, i, &pat);
		snprintf(fl.pattern, sizeof(fl.pattern), "%s", pat);
		r = lc_msg_put_src_filter(&c->src.out, &fl);
	}
	if (r == 0 && o->shard.n > 1) {
		struct lc_msg_src_filter fl;
		memset(&fl, 0, sizeof(fl));
		fl.kind = LC_FILTER_SHARD;
		lc_testhook_shard_sent(o->shard.i, o->shard.n, fl.pattern,
		    sizeof(fl.pattern));
		r = lc_msg_put_src_filter(&c->src.out, &fl);
	}
	/* --also's chain: the sources come as the target before has them */
	c->fed.on = o->feed_in != NULL;
	c->fed.fed = c->fed.on && (c->src.hello.flags & LC_HELLO_FED);
	c->fed.follow = c->fed.fed && (c->src.hello.flags & LC_HELLO_FOLLOW);
	if (r == 0 && !c->fed.on)
		r = lc__ctl_send_adds(c);
	/*
	 * The first window of file ids, what every sink grants (TARGET_OK
	 * may widen it; controller_ring.c moves it on).
	 */
	c->files.window = LC_FILES_INFLIGHT;
	cr.upto = 1 + LC_FILES_INFLIGHT;
	c->files.credit = cr.upto;
	if (r == 0)
		r = lc_msg_put_src_credit(&c->src.out, &cr);
	if (r != 0)
		return lc_err_set(e, -r, "control message: %s",
		    lc_strerror(r));
	return 0;
}

int
lc__ctl_listening(struct lc_ctl *c, const struct lc_msg_listening *l,
    struct lc_err *e)
{
	struct lc_msg_connect m;
	char daddr[LC_ADDR_MAX];
	char ptext[600];
	char win[64];
	int r;

	if (c->dp.state != LC_CTL_DP_NONE ||
	    l->streams > c->streams || l->block > c->block ||
	    (l->nports == 0) != (c->dp.path == LC_PATH_REVERSE))
		return lc_err_set(e, LC_ERR_PROTO, "%s: bad LISTENING",
		    c->dst_ep.name);
	c->dp.state = LC_CTL_DP_LISTENING;
	/* the sink may grant fewer streams or smaller blocks (its memory) */
	if (l->streams < c->streams || l->block < c->block)
		lc_log_verbose("%s: the sink's memory bound allows %u streams "
		    "of %u KiB blocks (%u of %u KiB asked for)",
		    c->dst_ep.name, l->streams, l->block >> 10, c->streams,
		    c->block >> 10);
	c->block = l->block;
	c->streams = l->streams;
	memset(&m, 0, sizeof(m));
	m.flags = (c->dp.tls ? LC_XFER_ENCRYPT : 0) |
	    lc__ctl_connect_flags(c) |
	    (c->o->zlevel != 0 ? LC_XFER_COMPRESS : 0);
	m.zlevel = c->o->zlevel;
	if (!(m.flags & LC_XFER_REVERSE) &&
	    (r = lc__ctl_data_addr(c, m.addr, sizeof(m.addr), e)) != 0)
		return r;
	/* a relay dials the sink's ports itself */
	memcpy(c->dp.dst_ports, l->ports, sizeof(c->dp.dst_ports));
	m.streams = l->streams;
	m.window = c->window;
	m.block = c->block;
	m.csum = (uint32_t)c->o->csum_alg;
	m.rate = c->o->rate;
	memcpy(m.key, c->key, LC_KEY_LEN);
	memcpy(m.ports, l->ports, sizeof(m.ports));
	if (c->dp.path == LC_PATH_DIRECT && (r = lc_testhook_proxy(m.addr,
	    m.ports, m.streams, &c->dp.test_proxy, e)) != 0)
		return r;
	snprintf(daddr, sizeof(daddr), "%s", m.addr);
	r = lc_msg_put_connect(&c->src.out, &m);
	OPENSSL_cleanse(&m, sizeof(m));
	/* a listing that ended before CONNECT: its SRC_NOMORE now */
	if (r == 0)
		r = lc__ctl_maybe_nomore(c);
	if (lc_log_level() >= LC_LOG_DEBUG) {
		char ports[LC_MAX_STREAMS * 6 + 1] = "";
		size_t o = 0;
		for (uint32_t i = 0; i < l->streams; i++)
			o += (size_t)snprintf(ports + o, sizeof(ports) - o,
			    "%s%u", i ? "," : "", (unsigned)l->ports[i]);
		lc_log_debug("data ports %s", ports);
	}
	if (l->window != 0) {
		lc_fmt_bytes(win, sizeof(win), l->window);
		if (c->window == 0)	/* the sink's own choice */
			snprintf(win + strlen(win), sizeof(win) - strlen(win),
			    " (receiver's fixed buffer)");
	}
	lc__ctl_path_text(c, daddr, ptext, sizeof(ptext));
	if (c->o->zlevel != 0)
		lc_log_verbose("compression level %u (zlib per block; blocks "
		    "that do not shrink go raw)", c->o->zlevel);
	lc_log_verbose("%u streams to %s (%s), "
	    "window %s, block %u KiB, sink quota %u blocks per stream, "
	    "data %s", l->streams,
	    c->dst_ep.remote ? c->dst_ep.name : "this host", ptext,
	    l->window != 0 ? win : "autotuned", c->block >> 10, l->quota,
	    c->dp.tls ? "encrypted (TLS 1.3, AES-128-GCM)" :
	    c->dp.path == LC_PATH_SSH && c->o->encrypt ? "encrypted by SSH "
	    "(streams authenticated, no second encryption)" :
	    "in the clear (--no-encrypt; streams authenticated)");
	c->res->streams = l->streams;
	c->res->window = l->window;
	c->res->block = c->block;
	c->res->encrypted = c->o->encrypt;
	c->res->zlevel = c->o->zlevel;
	return r;
}
