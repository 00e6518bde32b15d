/*
 * lc_evil_source: a hostile source for tests of the sink's writer (issue
 * 20).  It speaks lanecp's control protocol and opens real data streams
 * (the TLS or HMAC handshake with the transfer's key, as an authenticated
 * peer can), then sends frames a real source never would.  Two places:
 *
 *   lc_evil_source [-n] [-F config] [-i identity] [user@]host ATTACK ...
 *       plays controller and source against the agent on host, as the
 *       client of a restricted key can (its forced command runs
 *       "lanecp --agent --restrict DIR" whatever we ask).  Target: the
 *       directory "evil/" (relative: inside DIR).  -n: no encryption.
 *   lc_evil_source --agent
 *       run by lanecp as the remote agent of a pull ("-T lc_evil_source";
 *       lanecp appends --agent): plays the source of that pull, announcing
 *       one file of 64 KiB named as asked for; the attack is "retire".
 *
 * Attacks:
 *   retire          DATA header for file 1 (its payload held back); once
 *                   the sink has read the header, FILE_ABORT for file 1;
 *                   once the sink dropped the file (FILE_SKIP, or in a
 *                   pull the controller's next SRC_CREDIT), the payload.
 *                   A sink that kept the file's writer pointer uses freed
 *                   memory (and writes); a correct one refuses the frame.
 *   holes N H       N files, H holes each (1 byte every other byte, never
 *                   the first), none of which the writer can take: each
 *                   waits in the sink's memory (one stream, issue 20 item
 *                   4).  Prints "holes: all consumed" once the sink has
 *                   read every frame; a sink that bounds them stops
 *                   reading instead (its -v log says so).
 *   inflight N      SINK_TARGET with N files in flight, nothing else
 *                   (TARGET_OK's grant is printed).
 *
 * Output on stdout, one line each: "outcome: ERROR <code> <message>" (the
 * agent's ERROR), "outcome: EOF" (the agent ended without one),
 * "outcome: raced" (retire: the sink read the header only after it
 * dropped the file, so the attack did not happen: try again; exit 3),
 * "outcome: TARGET_OK inflight N" (N: the files in flight granted).  The agent's stderr (log lines, sanitizer
 * reports) comes out on stderr as "lanecp: [host] ..." lines.
 */
#include "buf.h"
#include "err.h"
#include "fdio.h"
#include "log.h"
#include "ssh.h"
#include "stream.h"
#include "tls.h"
#include "wire.h"

#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <openssl/rand.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define EV_FILE_SIZE 65536u	/* the pull's one file */
#define EV_MAX_FILES 65536u

static uint8_t ev_payload[LC_CTL_MAX];

struct ev {
	int ctl;		/* control channel (read and write) */
	int ctl_out;		/* where we write it (the same, or stdout) */
	struct lc_buf in;
	const char *addr;	/* where the sink's ports are */
	uint8_t key[LC_KEY_LEN];
	uint32_t flags;		/* LISTEN/CONNECT flags */
	uint32_t block;
	uint32_t nstreams;
	uint16_t ports[LC_MAX_STREAMS];
	struct lc_tls *tls;
	struct lc_stream *st;	/* stream 0 */
	int st_fd;		/* its socket (ours; the stream closes it) */
	atomic_bool cancel;
};

static void ev_die(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void
ev_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lc_evil_source: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static void
ev_send(struct ev *v, struct lc_buf *b)
{
	if (lc_write_all(v->ctl_out, lc_buf_ptr(b), lc_buf_len(b)) != 0)
		ev_die("control channel: %s", strerror(errno));
	lc_buf_reset(b);
}

/*
 * The next control message (PROGRESS and PING skipped): its type, the
 * payload in ev_payload.  0 at EOF.
 */
static uint8_t
ev_recv(struct ev *v, size_t *plen)
{
	for (;;) {
		const uint8_t *p;
		uint8_t type, *w;
		size_t n, flen;
		ssize_t got;
		int r = lc_msg_peek(lc_buf_ptr(&v->in), lc_buf_len(&v->in),
		    &type, &p, &n, &flen);

		if (r < 0)
			ev_die("%s", "malformed control message");
		if (r == 1) {
			memcpy(ev_payload, p, n);
			*plen = n;
			lc_buf_consume(&v->in, flen);
			if (type == LC_MSG_PROGRESS || type == LC_MSG_PING)
				continue;
			return type;
		}
		if (lc_buf_reserve(&v->in, 65536, &w) != 0)
			ev_die("%s", "control message too long");
		got = read(v->ctl, w, 65536);
		lc_buf_unappend(&v->in, got > 0 ? 65536 - (size_t)got : 65536);
		if (got == 0 || (got < 0 && errno != EINTR))
			return 0;
	}
}

/* Print the outcome an ERROR or EOF makes; exit 0. */
static void
ev_outcome(uint8_t type, size_t n)
{
	struct lc_msg_error m;

	if (type == LC_MSG_ERROR && lc_msg_get_error(ev_payload, n, &m) == 0) {
		printf("outcome: ERROR %u %s\n", m.code, m.msg);
		/* the sink read the header after it had dropped the file */
		if (strstr(m.msg, "data for unknown file") != NULL) {
			printf("outcome: raced\n");
			fflush(stdout);
			exit(3);
		}
	} else if (type == 0) {
		printf("outcome: EOF\n");
	} else {
		printf("outcome: %s\n", lc_msg_name(type));
	}
	fflush(stdout);
}

/* Wait for want; anything but want, PROGRESS or PING ends the run. */
static void
ev_expect(struct ev *v, uint8_t want, size_t *n)
{
	uint8_t type = ev_recv(v, n);

	if (type == want)
		return;
	ev_outcome(type, *n);
	exit(type == LC_MSG_ERROR || type == 0 ? 0 : 1);
}

static void
ev_pending(void *arg, int fd)
{
	struct ev *v = arg;

	if (fd >= 0)
		v->st_fd = fd;
}

/* Stream 0, authenticated with the transfer's key. */
static void
ev_dial(struct ev *v)
{
	struct lc_dial d;
	struct lc_err e;

	lc_err_clear(&e);
	if ((v->flags & LC_XFER_ENCRYPT) && v->tls == NULL &&
	    lc_tls_new(0, v->key, &v->tls, &e) != 0)
		ev_die("tls: %s", e.msg);
	memset(&d, 0, sizeof(d));
	d.addr = v->addr;
	d.port = v->ports[0];
	d.idx = 0;
	d.key = v->key;
	d.tls = v->tls;
	d.connect_timeout_ms = 10000;
	d.cancel = &v->cancel;
	d.pending = ev_pending;
	d.arg = v;
	if (lc_stream_dial(&d, &v->st, &e) != 0)
		ev_die("dial: %s", e.msg);
}

/*
 * The sink's end of stream 0 holds no unread byte, and ours nothing
 * unacknowledged: everything written so far has been read by the sink's
 * receiver.  From /proc/net/tcp{,6} (the sink is on this host).  -1 when
 * that connection is not found there.
 */
static int
ev_consumed(struct ev *v)
{
	static const char *const tabs[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	unsigned lport, rport, st, txq, rxq, me;
	int outq = 0, found = -1;
	char line[512];

	if (getsockname(v->st_fd, (struct sockaddr *)&ss, &sl) != 0)
		ev_die("getsockname: %s", strerror(errno));
	me = ss.ss_family == AF_INET6 ?
	    ntohs(((struct sockaddr_in6 *)&ss)->sin6_port) :
	    ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ioctl(v->st_fd, SIOCOUTQ, &outq) != 0)
		ev_die("SIOCOUTQ: %s", strerror(errno));
	for (size_t i = 0; i < 2 && found < 0; i++) {
		FILE *f = fopen(tabs[i], "r");
		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL) {
			if (sscanf(line, " %*u: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%x "
			    "%x %x:%x", &lport, &rport, &st, &txq, &rxq) != 5)
				continue;
			if (lport == v->ports[0] && rport == me && st == 1) {
				found = rxq == 0 && outq == 0;
				break;
			}
		}
		fclose(f);
	}
	return found;
}

/* Wait (polling, it is an event) until the sink has read what we sent. */
static void
ev_wait_consumed(struct ev *v)
{
	int c;

	while ((c = ev_consumed(v)) == 0)
		(void)poll(NULL, 0, 1);
	if (c < 0)
		ev_die("%s", "the sink's end of stream 0 is not in "
		    "/proc/net/tcp (the sink must be on this host)");
}

/* A frame on stream 0: header, payload of len bytes, sealed. */
static uint8_t *
ev_frame(struct ev *v, const struct lc_frame *fr, size_t *outlen)
{
	size_t len = LC_FRAME_HDR_LEN + fr->len;
	uint8_t *buf = calloc(1, len + LC_AEAD_TAG_LEN);
	struct lc_err e;

	if (buf == NULL)
		ev_die("%s", "out of memory");
	lc_frame_put(buf, fr);
	memset(buf + LC_FRAME_HDR_LEN, 0xee, fr->len);
	lc_err_clear(&e);
	if (lc_stream_seal(v->st, buf, LC_FRAME_HDR_LEN, len, outlen, &e) != 0)
		ev_die("seal: %s", e.msg);
	return buf;
}

static void
ev_write(struct ev *v, const uint8_t *p, size_t n)
{
	struct lc_err e;

	lc_err_clear(&e);
	if (lc_stream_write(v->st, p, n, &e) != 0)
		ev_die("stream 0: %s", e.msg);
}

/*
 * retire, step 1: the DATA header of file 1's first block alone, read by
 * the sink's receiver, which now holds file 1's writer while it waits for
 * the payload.  Returns the rest of the frame (*n bytes).
 */
static uint8_t *
ev_retire_header(struct ev *v, size_t *n)
{
	struct lc_frame fr;
	uint8_t *buf;
	size_t out;

	memset(&fr, 0, sizeof(fr));
	fr.type = LC_FRAME_DATA;
	fr.file_id = 1;
	fr.offset = 0;
	fr.len = fr.raw_len = v->block < EV_FILE_SIZE ? v->block :
	    EV_FILE_SIZE;
	buf = ev_frame(v, &fr, &out);
	ev_write(v, buf, LC_FRAME_HDR_LEN);
	ev_wait_consumed(v);
	fprintf(stderr, "lc_evil_source: the sink has read the header\n");
	*n = out;
	return buf;
}

static void
ev_file_abort(struct ev *v)
{
	struct lc_msg_file_abort ab;
	struct lc_buf b;

	memset(&ab, 0, sizeof(ab));
	ab.id = 1;
	snprintf(ab.msg, sizeof(ab.msg), "evil: cannot open it after all");
	lc_buf_init(&b, LC_CTL_MAX + 16);
	lc_msg_put_file_abort(&b, &ab);
	ev_send(v, &b);
	lc_buf_free(&b);
}

/* retire, step 3: the payload, then whatever the agent says. */
static void
ev_retire_payload(struct ev *v, uint8_t *buf, size_t n)
{
	size_t len;

	fprintf(stderr, "lc_evil_source: the sink dropped file 1; sending "
	    "its payload\n");
	ev_write(v, buf + LC_FRAME_HDR_LEN, n - LC_FRAME_HDR_LEN);
	free(buf);
	for (;;) {
		uint8_t type = ev_recv(v, &len);
		if (type == 0 || type == LC_MSG_ERROR) {
			ev_outcome(type, len);
			return;
		}
	}
}

/* ---- controller and source against an agent (a restricted key) ---- */

static void
ev_ctl_hello(struct ev *v)
{
	struct lc_msg_hello h;
	struct lc_buf b;
	size_t n;

	memset(&h, 0, sizeof(h));
	h.magic = LC_PROTO_MAGIC;
	h.proto = LC_PROTO_VERSION;
	h.log_level = LC_LOG_VERBOSE;	/* the agent's -v lines, please */
	snprintf(h.software, sizeof(h.software), "evil");
	snprintf(h.hostname, sizeof(h.hostname), "evil");
	lc_buf_init(&b, LC_CTL_MAX + 16);
	lc_msg_put_hello(&b, &h);
	ev_send(v, &b);
	lc_buf_free(&b);
	ev_expect(v, LC_MSG_HELLO, &n);
	if (lc_msg_get_hello(ev_payload, n, &h) != 0)
		ev_die("%s", "bad HELLO");
	fprintf(stderr, "lc_evil_source: agent %s%s\n", h.software,
	    (h.flags & LC_HELLO_RESTRICTED) ? " (restricted)" : "");
}

/* SINK_TARGET, then TARGET_OK: the files in flight it granted. */
static uint32_t
ev_ctl_target(struct ev *v, uint32_t inflight)
{
	struct lc_msg_target_ok ok;
	struct lc_msg_sink_target t;
	struct lc_buf b;
	size_t n;

	memset(&t, 0, sizeof(t));
	t.flags = LC_TGT_WANT_DIR | LC_TGT_NO_FSYNC | LC_TGT_NO_SPACE_CHECK |
	    LC_TGT_FORCE;
	t.inflight = inflight;
	snprintf(t.target, sizeof(t.target), "evil/");
	lc_buf_init(&b, LC_CTL_MAX + 16);
	lc_msg_put_sink_target(&b, &t);
	ev_send(v, &b);
	lc_buf_free(&b);
	ev_expect(v, LC_MSG_TARGET_OK, &n);
	if (lc_msg_get_target_ok(ev_payload, n, &ok) != 0)
		ev_die("%s", "malformed TARGET_OK");
	return ok.inflight;
}

static void
ev_ctl_listen(struct ev *v, uint32_t block)
{
	struct lc_msg_listening l;
	struct lc_msg_listen m;
	struct lc_buf b;
	size_t n;

	memset(&m, 0, sizeof(m));
	m.streams = 1;
	m.block = block;
	m.flags = v->flags;
	memcpy(m.key, v->key, sizeof(m.key));
	lc_buf_init(&b, LC_CTL_MAX + 16);
	lc_msg_put_listen(&b, &m);
	ev_send(v, &b);
	lc_buf_free(&b);
	ev_expect(v, LC_MSG_LISTENING, &n);
	if (lc_msg_get_listening(ev_payload, n, &l) != 0 || l.nports < 1)
		ev_die("%s", "bad LISTENING");
	v->block = l.block;
	v->nstreams = l.streams;
	v->ports[0] = l.ports[0];
}

/* Announce files 1..n of size bytes each; wait for every FILE_READY. */
static void
ev_ctl_files(struct ev *v, uint32_t nfiles, uint64_t size)
{
	struct lc_msg_file f;
	struct lc_buf b;
	size_t n;

	lc_buf_init(&b, 2 * LC_CTL_MAX);
	for (uint32_t id = 1; id <= nfiles; id++) {
		memset(&f, 0, sizeof(f));
		f.id = id;
		f.kind = LC_KIND_REG;
		f.mode = 0600;
		f.size = size;
		snprintf(f.name, sizeof(f.name), "f%06u", id);
		lc_msg_put_file(&b, &f);
		if (lc_buf_len(&b) > LC_CTL_MAX)
			ev_send(v, &b);
	}
	ev_send(v, &b);
	lc_buf_free(&b);
	for (uint32_t i = 0; i < nfiles; i++)
		ev_expect(v, LC_MSG_FILE_READY, &n);
}

static int
ev_ctl_retire(struct ev *v)
{
	uint8_t *buf;
	size_t n, len;

	(void)ev_ctl_target(v, LC_FILES_INFLIGHT);
	ev_ctl_listen(v, EV_FILE_SIZE);
	ev_ctl_files(v, 1, EV_FILE_SIZE);
	ev_dial(v);
	buf = ev_retire_header(v, &n);
	ev_file_abort(v);
	ev_expect(v, LC_MSG_FILE_SKIP, &len);
	ev_retire_payload(v, buf, n);
	return 0;
}

/* Every hole of file id: 1 byte at every odd offset below 2h. */
static void
ev_holes_of(struct ev *v, uint32_t id, uint32_t h, uint8_t *buf)
{
	struct lc_frame fr;
	size_t out, at = 0;
	uint8_t *one;

	for (uint32_t k = 0; k < h; k++) {
		memset(&fr, 0, sizeof(fr));
		fr.type = LC_FRAME_HOLE;
		fr.file_id = id;
		fr.offset = 2 * (uint64_t)k + 1;
		fr.raw_len = 1;
		one = ev_frame(v, &fr, &out);
		memcpy(buf + at, one, out);
		free(one);
		at += out;
	}
	ev_write(v, buf, at);
}

static int
ev_ctl_holes(struct ev *v, uint32_t nfiles, uint32_t h)
{
	uint8_t *buf;

	(void)ev_ctl_target(v, LC_FILES_INFLIGHT);
	ev_ctl_listen(v, 64u << 10);
	ev_ctl_files(v, nfiles, 2 * (uint64_t)h + 1);
	ev_dial(v);
	if ((buf = malloc((size_t)h * (LC_FRAME_HDR_LEN +
	    LC_AEAD_TAG_LEN))) == NULL)
		ev_die("%s", "out of memory");
	for (uint32_t id = 1; id <= nfiles; id++)
		ev_holes_of(v, id, h, buf);
	free(buf);
	printf("holes: all sent (%u files, %u holes each)\n", nfiles, h);
	fflush(stdout);
	ev_wait_consumed(v);
	printf("holes: all consumed\n");
	fflush(stdout);
	/* hold everything where it is until we are stopped */
	for (;;) {
		size_t len;
		uint8_t type = ev_recv(v, &len);
		if (type == 0 || type == LC_MSG_ERROR) {
			ev_outcome(type, len);
			return 0;
		}
	}
}

static int
ev_ctl_inflight(struct ev *v, uint32_t inflight)
{
	printf("outcome: TARGET_OK inflight %u\n", ev_ctl_target(v, inflight));
	return 0;
}

static uint32_t
ev_num(const char *s, uint32_t max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v == 0 || v > max)
		ev_die("bad number %s", s);
	return (uint32_t)v;
}

static int
ev_usage(void)
{
	fprintf(stderr, "usage: lc_evil_source [-n] [-F config] [-i identity] "
	    "[user@]host retire | holes N H | inflight N\n"
	    "       lc_evil_source --agent\n");
	return 2;
}

static int ev_agent(void);

int
main(int argc, char **argv)
{
	static struct ev v;
	struct lc_ssh_opts o;
	struct lc_ssh *s = NULL;
	struct lc_err e;
	const char *attack;
	char *host, *at, sig[32];
	int c, fd = -1, status, rc = 0;

	signal(SIGPIPE, SIG_IGN);
	/* lanecp runs "PROGRAM --agent --transfer ID" */
	if (argc >= 2 && strcmp(argv[1], "--agent") == 0)
		return ev_agent();
	memset(&o, 0, sizeof(o));
	o.batch = 1;
	v.flags = LC_XFER_ENCRYPT;
	while ((c = getopt(argc, argv, "+F:i:n")) != -1) {
		switch (c) {
		case 'F':
			o.config_file = optarg;
			break;
		case 'i':
			o.identity_file = optarg;
			break;
		case 'n':
			v.flags = 0;
			break;
		default:
			return ev_usage();
		}
	}
	if (argc - optind < 2)
		return ev_usage();
	lc_log_init("lanecp", LC_LOG_INFO, 2);
	host = argv[optind];
	if ((at = strrchr(host, '@')) != NULL) {
		*at = '\0';
		o.user = host;
		host = at + 1;
	}
	o.host = host;
	attack = argv[optind + 1];
	lc_err_clear(&e);
	if (lc_ssh_connect(&o, &s, &e) != 0 ||
	    lc_ssh_exec(s, "lanecp --agent", &fd, &e) != 0) {
		fprintf(stderr, "lc_evil_source: %s\n", e.msg);
		lc_ssh_free(s);
		return 1;
	}
	v.ctl = v.ctl_out = fd;
	v.addr = lc_ssh_peer_addr(s);
	v.st_fd = -1;
	atomic_init(&v.cancel, false);
	lc_buf_init(&v.in, 2 * LC_CTL_MAX);
	if (RAND_bytes(v.key, sizeof(v.key)) != 1)
		ev_die("%s", "RAND_bytes");
	ev_ctl_hello(&v);
	if (strcmp(attack, "retire") == 0 && argc - optind == 2)
		rc = ev_ctl_retire(&v);
	else if (strcmp(attack, "holes") == 0 && argc - optind == 4)
		rc = ev_ctl_holes(&v, ev_num(argv[optind + 2], EV_MAX_FILES),
		    ev_num(argv[optind + 3], 1u << 20));
	else if (strcmp(attack, "inflight") == 0 && argc - optind == 3)
		rc = ev_ctl_inflight(&v, ev_num(argv[optind + 2], UINT32_MAX));
	else
		rc = ev_usage();
	fflush(stdout);
	lc_stream_free(v.st);
	shutdown(fd, SHUT_WR);
	close(fd);
	if (lc_ssh_wait(s, 30000, &status, sig, sizeof(sig)) == 0 &&
	    status < 0 && sig[0] != '\0')
		fprintf(stderr, "lc_evil_source: the agent was killed by "
		    "signal %s\n", sig);
	lc_ssh_free(s);
	lc_tls_free(v.tls);
	lc_buf_free(&v.in);
	return rc;
}

/* ---- the source agent of a pull ---- */

static void
ev_agent_hello(struct ev *v)
{
	struct lc_msg_hello h;
	struct lc_buf b;

	memset(&h, 0, sizeof(h));
	h.magic = LC_PROTO_MAGIC;
	h.proto = LC_PROTO_VERSION;
	h.flags = LC_HELLO_PIPES;
	h.max_streams = LC_MAX_STREAMS;
	snprintf(h.software, sizeof(h.software), "evil");
	snprintf(h.hostname, sizeof(h.hostname), "evil");
	lc_buf_init(&b, LC_CTL_MAX + 16);
	lc_msg_put_hello(&b, &h);
	ev_send(v, &b);
	lc_buf_free(&b);
}

/* SRC_ADD: one file of EV_FILE_SIZE bytes, named as asked for. */
static void
ev_agent_add(struct ev *v, size_t n)
{
	struct lc_msg_src_listed l = { 1, EV_FILE_SIZE };
	struct lc_msg_src_add a;
	struct lc_msg_file f;
	struct lc_buf b;
	const char *slash;

	if (lc_msg_get_src_add(ev_payload, n, &a) != 0)
		ev_die("%s", "bad SRC_ADD");
	slash = strrchr(a.path, '/');
	memset(&f, 0, sizeof(f));
	f.id = 1;
	f.kind = LC_KIND_REG;
	f.mode = 0644;
	f.size = EV_FILE_SIZE;
	snprintf(f.name, sizeof(f.name), "%s", slash != NULL ? slash + 1 :
	    a.path);
	lc_buf_init(&b, LC_CTL_MAX + 16);
	lc_msg_put_file(&b, &f);
	lc_msg_put_src_listed(&b, &l);
	ev_send(v, &b);
	lc_buf_free(&b);
}

static void
ev_agent_connect(struct ev *v, size_t n)
{
	static struct lc_msg_connect m;
	struct lc_msg_connected c;
	struct lc_buf b;

	if (lc_msg_get_connect(ev_payload, n, &m) != 0 ||
	    (m.flags & LC_XFER_REVERSE))
		ev_die("%s", "bad or reverse CONNECT");
	v->addr = m.addr;
	memcpy(v->key, m.key, sizeof(v->key));
	v->flags = m.flags;
	v->block = m.block;
	v->nstreams = m.streams;
	memcpy(v->ports, m.ports, sizeof(v->ports));
	ev_dial(v);
	/* the other streams are not needed: the sink waits for them */
	memset(&c, 0, sizeof(c));
	c.streams = m.streams;
	lc_buf_init(&b, LC_CTL_MAX + 16);
	lc_msg_put_connected(&b, &c);
	ev_send(v, &b);
	lc_buf_free(&b);
}

static int
ev_agent(void)
{
	static struct ev v;
	struct lc_msg_src_credit cr;
	uint32_t credit = 0;
	uint8_t *held = NULL, type;
	size_t n, heldn = 0;
	int ready = 0, aborted = 0;

	lc_log_init("lc_evil_source", LC_LOG_INFO, 2);
	v.ctl = 0;
	v.ctl_out = 1;
	v.st_fd = -1;
	atomic_init(&v.cancel, false);
	lc_buf_init(&v.in, 2 * LC_CTL_MAX);
	while ((type = ev_recv(&v, &n)) != 0) {
		switch (type) {
		case LC_MSG_HELLO:
			ev_agent_hello(&v);
			break;
		case LC_MSG_SRC_ADD:
			ev_agent_add(&v, n);
			break;
		case LC_MSG_CONNECT:
			ev_agent_connect(&v, n);
			break;
		case LC_MSG_FILE_READY:
			ready = 1;
			break;
		case LC_MSG_SRC_CREDIT:
			if (lc_msg_get_src_credit(ev_payload, n, &cr) != 0)
				ev_die("%s", "bad SRC_CREDIT");
			/* after FILE_ABORT: file 1 is done at the controller,
			   which it is only once the sink has dropped it */
			if (aborted && cr.upto > credit && held != NULL) {
				ev_write(&v, held + LC_FRAME_HDR_LEN,
				    heldn - LC_FRAME_HDR_LEN);
				fprintf(stderr, "lc_evil_source: the sink "
				    "dropped file 1; payload sent\n");
				free(held);
				held = NULL;
			}
			credit = cr.upto;
			break;
		case LC_MSG_BYE:
			{
				struct lc_buf b;
				lc_buf_init(&b, 64);
				lc_msg_put_empty(&b, LC_MSG_BYE);
				ev_send(&v, &b);
				lc_buf_free(&b);
			}
			break;
		default:
			break;
		}
		if (ready && v.st != NULL && !aborted) {
			held = ev_retire_header(&v, &heldn);
			ev_file_abort(&v);
			aborted = 1;
		}
	}
	free(held);
	lc_stream_free(v.st);
	lc_tls_free(v.tls);
	lc_buf_free(&v.in);
	return 0;
}
