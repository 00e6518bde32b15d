/*
 * The data path, the controller's side: which way the data streams go
 * (enum lc_path), the addresses each side dials, and for the paths that
 * run through the controller (--relay, --via-ssh) the relay (relay.c).
 *
 *   direct    the source dials the sink's ports (the address the
 *             controller used to reach the sink's host)
 *   reverse   -z: the source listens, the sink dials it (DIAL), for a
 *             sink that cannot be reached from outside
 *   relay     --relay: both listen, the controller dials both and joins
 *             them, for two hosts that cannot reach each other
 *   ssh       --via-ssh: as relay, but each remote end is reached through
 *             its own SSH connection (direct-tcpip to its loopback port):
 *             only port 22 needs to be open
 *
 * The default (LC_PATH_AUTO) is direct; when the data streams cannot
 * connect, copy.c tries the next path (lc_ctl_fallback: reverse, the
 * relay between two remote hosts, then via SSH), and via SSH at once for
 * a host reached through a jump host.
 */
#include "controller_int.h"

#include "log.h"
#include "stream.h"
#include "testhook_ctl.h"

#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

const char *
lc_path_name(int path)
{
	switch (path) {
	case LC_PATH_REVERSE: return "reverse";
	case LC_PATH_RELAY: return "relay";
	case LC_PATH_SSH: return "ssh";
	default: return "direct";
	}
}

static int
lc_ctl_proxied(const struct lc_endpoint *ep)
{
	return ep->ssh != NULL && lc_ssh_proxied(ep->ssh);
}

/*
 * A host reached through a jump host or ProxyCommand (with --direct): we
 * do not know the address of the sshd we reached, so the data streams try
 * the target's HostName as resolved here.  0 or -LC_ERR_CONNECT.
 */
static int
lc_ctl_target_addr(const char *host, char *out, size_t outsz,
    struct lc_err *e)
{
	struct addrinfo hints, *res = NULL;
	int gai;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((gai = getaddrinfo(host, NULL, &hints, &res)) != 0)
		return lc_err_set(e, LC_ERR_CONNECT, "data streams: cannot "
		    "resolve %s: %s", host, gai_strerror(gai));
	gai = getnameinfo(res->ai_addr, res->ai_addrlen, out,
	    (socklen_t)outsz, NULL, 0, NI_NUMERICHOST);
	freeaddrinfo(res);
	if (gai != 0)
		return lc_err_set(e, LC_ERR_CONNECT, "data streams: %s: %s",
		    host, gai_strerror(gai));
	return 0;
}

static int
lc_ctl_copy_addr(const char *a, char *out, size_t outsz, struct lc_err *e)
{
	if (a == NULL || a[0] == '\0' || strlen(a) >= outsz)
		return lc_err_set(e, LC_ERR_CONNECT, "no address for the data "
		    "streams (a host reached through a ProxyCommand has none; "
		    "use --via-ssh)");
	snprintf(out, outsz, "%s", a);
	return 0;
}

/*
 * Numeric address of ep's host as the controller reached it: the sshd's
 * address, a proxied host's HostName resolved here, or (local) loopback.
 */
static int
lc_ctl_host_addr(const struct lc_endpoint *ep, char *out, size_t outsz,
    struct lc_err *e)
{
	if (ep->ssh == NULL)
		return lc_ctl_copy_addr("127.0.0.1", out, outsz, e);
	if (lc_ctl_proxied(ep))
		return lc_ctl_target_addr(lc_ssh_target_host(ep->ssh), out,
		    outsz, e);
	return lc_ctl_copy_addr(lc_ssh_peer_addr(ep->ssh), out, outsz, e);
}

/*
 * The address one end dials to reach the other end's host (`to`): the
 * address the controller used for that host, or when that host is this
 * one, our address on the SSH connection to the dialling end's host.
 */
static int
lc_ctl_addr_from(const struct lc_endpoint *from, const struct lc_endpoint *to,
    char *out, size_t outsz, struct lc_err *e)
{
	if (to->ssh != NULL)
		return lc_ctl_host_addr(to, out, outsz, e);
	if (from->ssh != NULL)
		return lc_ctl_copy_addr(lc_ssh_local_addr(from->ssh), out,
		    outsz, e);
	return lc_ctl_copy_addr("127.0.0.1", out, outsz, e);
}

/*
 * A restricted agent (its HELLO says so) dials only the address its SSH
 * client comes from (agent.c), which is ours on its SSH connection: 1 if
 * `from` is one and addr is not that address, else 0.  Between two remote
 * hosts that is the other host; to this host it is always ours (unless a
 * NAT changes it, which the agent then refuses: LC_ERR_NOPATH).
 */
static int
lc_ctl_dial_refused(const struct lc_endpoint *from, const char *addr)
{
	const char *me;

	if (!from->remote || !from->hello_seen ||
	    !(from->hello.flags & LC_HELLO_RESTRICTED))
		return 0;
	me = from->ssh != NULL ? lc_ssh_local_addr(from->ssh) : NULL;
	return me == NULL || !lc_addr_same(me, addr);
}

/*
 * The address `from` dials to reach `to`, or LC_ERR_NOPATH saying what to
 * do when `from` is a restricted agent that would refuse it.
 */
static int
lc_ctl_dial_addr(const struct lc_endpoint *from, const struct lc_endpoint *to,
    char *out, size_t outsz, struct lc_err *e)
{
	int r;

	if ((r = lc_ctl_addr_from(from, to, out, outsz, e)) != 0)
		return r;
	if (lc_ctl_dial_refused(from, out))
		return lc_err_set(e, LC_ERR_NOPATH, "%.100s: the agent there is "
		    "restricted (--restrict) and dials only this host, not "
		    "%.100s; copy between such hosts with --relay", from->name,
		    to->remote ? to->name : out);
	return 0;
}

/* Address the source connects to: the one the controller itself used. */
int
lc__ctl_data_addr(struct lc_ctl *c, char *out, size_t outsz, struct lc_err *e)
{
	return lc_ctl_dial_addr(&c->src, &c->dst_ep, out, outsz, e);
}

/* Reverse: the address the sink dials, the source's host's, likewise. */
static int
lc_ctl_src_addr(struct lc_ctl *c, char *out, size_t outsz, struct lc_err *e)
{
	return lc_ctl_dial_addr(&c->dst_ep, &c->src, out, outsz, e);
}

/*
 * LC_PATH_AUTO: the restricted agent that path would have dial a host it
 * refuses (known from its HELLO: always the source's, the sink's if it
 * has come), or NULL; the next path is then taken at once.
 */
static const struct lc_endpoint *
lc_ctl_path_refused(struct lc_ctl *c, int path)
{
	const struct lc_endpoint *from, *to;
	char addr[LC_ADDR_MAX];

	if (path != LC_PATH_DIRECT && path != LC_PATH_REVERSE)
		return NULL;
	from = path == LC_PATH_DIRECT ? &c->src : &c->dst_ep;
	to = path == LC_PATH_DIRECT ? &c->dst_ep : &c->src;
	if (lc_ctl_addr_from(from, to, addr, sizeof(addr), NULL) != 0 ||
	    !lc_ctl_dial_refused(from, addr))
		return NULL;
	return from;
}

/*
 * The automatic order, fastest first: direct; reverse (the receiver
 * behind NAT or an inbound-blocking firewall); between two remote hosts
 * the relay; over SSH last (only port 22).  A path whose first
 * connections fail (LC_ERR_NOPATH: refused, unreachable, or nothing
 * within 7 s) moves copy.c on to the next.
 */
static int
lc_ctl_fallback(int both_remote, int stage)
{
	static const int one[] = { LC_PATH_DIRECT, LC_PATH_REVERSE,
	    LC_PATH_SSH };
	static const int two[] = { LC_PATH_DIRECT, LC_PATH_REVERSE,
	    LC_PATH_RELAY, LC_PATH_SSH };
	int n = both_remote ? 4 : 3;

	if (stage < 0 || stage >= n)
		stage = n - 1;
	return both_remote ? two[stage] : one[stage];
}

int
lc__ctl_path_setup(struct lc_ctl *c, struct lc_err *e)
{
	const struct lc_copy_opts *o = c->o;
	int both = c->src.remote && c->dst_ep.remote;
	int path = o->path;

	c->dp.path_why[0] = '\0';
	if (path == LC_PATH_AUTO) {
		const struct lc_endpoint *px = lc_ctl_proxied(&c->dst_ep) ?
		    &c->dst_ep : lc_ctl_proxied(&c->src) ? &c->src : NULL;
		if (px != NULL) {
			path = LC_PATH_SSH;
			snprintf(c->dp.path_why, sizeof(c->dp.path_why),
			    "%.100s is reached through a jump host "
			    "(--direct tries its data ports first)", px->name);
		} else {
			const struct lc_endpoint *ra, *rb = NULL;
			int stage = o->path_stage;

			path = lc_ctl_fallback(both, stage);
			if (stage > 0)
				snprintf(c->dp.path_why, sizeof(c->dp.path_why),
				    "%.190s", o->path_why != NULL ?
				    o->path_why : "");
			/* a path a restricted agent would refuse: the next */
			while (lc_ctl_fallback(both, stage + 1) != path &&
			    (ra = lc_ctl_path_refused(c, path)) != NULL) {
				path = lc_ctl_fallback(both, ++stage);
				if (rb != NULL && rb != ra)
					snprintf(c->dp.path_why,
					    sizeof(c->dp.path_why), "the "
					    "agents on %.60s and %.60s are "
					    "restricted and dial only this "
					    "host", rb->name, ra->name);
				else
					snprintf(c->dp.path_why,
					    sizeof(c->dp.path_why), "the "
					    "agent on %.100s is restricted "
					    "and dials only this host",
					    ra->name);
				rb = ra;
			}
			c->res->path_stage = stage;
		}
	}
	if (path == LC_PATH_SSH && !c->src.remote && !c->dst_ep.remote) {
		lc_log_verbose("both ends are local: no SSH to carry the data "
		    "streams, they go direct");
		path = LC_PATH_DIRECT;
	}
	c->dp.path = path;
	c->res->path = path;
	snprintf(c->res->path_why, sizeof(c->res->path_why), "%s",
	    c->dp.path_why);
	/* a chain hop through this host: copy from this host instead */
	if (o->hop && (path == LC_PATH_RELAY || path == LC_PATH_SSH))
		return lc_err_set(e, LC_ERR_NOPATH, "%.60s and %.60s cannot "
		    "reach each other (a chain hop does not go through this "
		    "host%s%.100s)", c->src.name, c->dst_ep.name,
		    c->dp.path_why[0] != '\0' ? ": " : "", c->dp.path_why);
	if (path != LC_PATH_SSH)
		return 0;
	/* one SSH connection per stream, to each remote end */
	for (int k = 0; k < 2; k++) {
		const struct lc_endpoint *ep = k == 0 ? &c->src : &c->dst_ep;
		int n;
		if (!ep->remote)
			continue;
		n = lc_relay_open_ssh(k == 0 ? &c->dp.so_src : &c->dp.so_dst,
		    c->streams, c->dp.pre[k], e);
		if (n < 0)
			return n;
		if ((uint32_t)n < c->streams)
			c->streams = (uint32_t)n;
	}
	for (int k = 0; k < 2; k++)	/* more than the other end got */
		for (uint32_t i = c->streams; i < LC_MAX_STREAMS; i++) {
			lc_ssh_free(c->dp.pre[k][i]);
			c->dp.pre[k][i] = NULL;
		}
	return 0;
}

uint32_t
lc__ctl_listen_flags(const struct lc_ctl *c)
{
	return (c->dp.path == LC_PATH_REVERSE ? LC_XFER_REVERSE : 0) |
	    (c->dp.path == LC_PATH_SSH ? LC_XFER_LOOPBACK : 0);
}

uint32_t
lc__ctl_connect_flags(const struct lc_ctl *c)
{
	switch (c->dp.path) {
	case LC_PATH_REVERSE:
	case LC_PATH_RELAY:
		return LC_XFER_REVERSE;
	case LC_PATH_SSH:
		return LC_XFER_REVERSE | LC_XFER_LOOPBACK;
	default:
		return 0;
	}
}

int
lc__ctl_connected(struct lc_ctl *c, const struct lc_msg_connected *m,
    struct lc_err *e)
{
	struct lc_relay_end end[2];
	struct lc_msg_dial d;
	int r;

	if (c->dp.path == LC_PATH_DIRECT || c->dp.path == LC_PATH_AUTO)
		return 0;
	if (c->dp.path == LC_PATH_REVERSE) {
		memset(&d, 0, sizeof(d));
		if ((r = lc_ctl_src_addr(c, d.addr, sizeof(d.addr), e)) != 0)
			return r;
		d.streams = c->streams;
		memcpy(d.ports, m->ports, sizeof(d.ports));
		if ((r = lc_testhook_proxy(d.addr, d.ports, d.streams,
		    &c->dp.test_proxy, e)) != 0)
			return r;
		lc_log_debug("reverse: %s dials %s", c->dst_ep.name, d.addr);
		return lc_msg_put_dial(&c->dst_ep.out, &d);
	}
	memset(end, 0, sizeof(end));
	for (int k = 0; k < 2; k++) {
		const struct lc_endpoint *ep = k == 0 ? &c->src : &c->dst_ep;
		memcpy(end[k].ports, k == 0 ? m->ports : c->dp.dst_ports,
		    sizeof(end[k].ports));
		if (c->dp.path == LC_PATH_SSH && ep->remote) {
			end[k].ssh = k == 0 ? &c->dp.so_src : &c->dp.so_dst;
			memcpy(end[k].conn, c->dp.pre[k], sizeof(end[k].conn));
			memset(c->dp.pre[k], 0, sizeof(c->dp.pre[k]));
		} else if ((r = lc_ctl_host_addr(ep, end[k].addr,
		    sizeof(end[k].addr), e)) != 0) {
			return r;	/* by TCP: the agent's host, or loopback */
		}
	}
	return lc_relay_start(end, c->streams, c->window, &c->dp.relay, e);
}

void
lc__ctl_path_text(const struct lc_ctl *c, const char *daddr, char *out,
    size_t outsz)
{
	char why[240] = "";
	const char *sink = c->dst_ep.remote ? c->dst_ep.name : "this host";
	const char *src = c->src.remote ? c->src.name : "this host";

	if (c->dp.path_why[0] != '\0')
		snprintf(why, sizeof(why), ", because %s", c->dp.path_why);
	switch (c->dp.path) {
	case LC_PATH_REVERSE:
		snprintf(out, outsz, "data path: reverse, %.200s dials %.200s"
		    "%s", sink, src, why);
		break;
	case LC_PATH_RELAY:
		snprintf(out, outsz, "data path: relay, %.200s -> this host "
		    "-> %.200s%s", src, sink, why);
		break;
	case LC_PATH_SSH:
		snprintf(out, outsz, "data path: via SSH x %u%s", c->streams,
		    why);
		break;
	default:
		snprintf(out, outsz, "data path: direct, data streams to %s%s",
		    daddr, why);
		break;
	}
}

void
lc__ctl_path_lost(struct lc_ctl *c, uint32_t i)
{
	lc_relay_redial(c->dp.relay, i);
}

void
lc__ctl_path_free(struct lc_ctl *c)
{
	lc_relay_free(c->dp.relay);
	c->dp.relay = NULL;
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < LC_MAX_STREAMS; i++) {
			lc_ssh_free(c->dp.pre[k][i]);
			c->dp.pre[k][i] = NULL;
		}
}
