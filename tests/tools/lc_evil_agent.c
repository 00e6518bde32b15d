/*
 * lc_evil_agent: a hostile source agent for tests (scp CVE-2019-6111
 * style), run as "-T 'VAR=value ... lc_evil_agent'" (lanecp appends
 * "--agent"; the variables reach it through the remote shell).
 *
 * Without LC_EVIL_REAL it answers HELLO like a real agent and, asked for
 * any file, announces one named $LC_EVIL_NAME (default "../evil") of 5
 * bytes, then SRC_LISTED; it never sends data.  A correct controller or
 * sink refuses the name before any byte is written.
 *
 * With LC_EVIL_REAL=/path/to/lanecp it runs "$LC_EVIL_REAL --agent" and
 * relays both ways, so the copy is real, but rewrites the FILE messages
 * the real source sends:
 *   LC_EVIL_NAME=NAME      name (LC_EVIL_NAME_HEX=ff01: the bytes in hex)
 *   LC_EVIL_ID=N           file id
 *   LC_EVIL_SIZE=N         size
 *   LC_EVIL_MODE=OCTAL     mode bits
 *   LC_EVIL_EXTRA=NAME     announce a second FILE after it: that name,
 *                          id LC_EVIL_EXTRA_ID (default id + 1), 0 bytes
 * and its SRC_LISTED messages:
 *   LC_EVIL_LISTED_FILES=N the file count
 *   LC_EVIL_LATE=NAME      a FILE of that name (id 2, 0 bytes) after it
 *
 * Trees (lanecp -r):
 *   LC_EVIL_AT=NAME        the FILE rewrites above and below apply only to
 *                          the FILE the real source names NAME (default:
 *                          every FILE)
 *   LC_EVIL_LINK=TARGET    the link target of a symlink (kind 3)
 *   LC_EVIL_EXTRA_KIND=K   the kind of the EXTRA FILE (default 1; 3 takes
 *   LC_EVIL_EXTRA_LINK=T   its link target from LC_EVIL_EXTRA_LINK)
 *   LC_EVIL_FAIL=NAME      a FILE_FAIL for NAME after the FILE
 *   LC_EVIL_FLOOD=N        N more FILEs after it, "NAME/f000002"... with
 *                          the next ids, 1 byte each, ignoring the credit
 *                          window; every later FILE from the real source
 *                          and every FILE_READY to it are dropped
 * and the FILE messages the controller sends (the wrapped agent is a sink,
 * a push):
 *   LC_EVIL_SINK_AT=NAME   the FILE named NAME (default: every FILE)
 *   LC_EVIL_SINK_NAME=NAME gets this name before it reaches the real sink
 *
 * In either mode LC_EVIL_ERROR_HEX=HEX answers SRC_ADD with an ERROR
 * whose text is those bytes (for --json and terminal-escape tests).
 *
 * With LC_EVIL_REAL, LC_EVIL_KEY_FILE=PATH also writes the per-transfer key
 * of each LISTEN or CONNECT the controller sends (one line of hex) to PATH:
 * the test sees the key where it legitimately travels, on the SSH control
 * channel, and can then look for it where it must never be (command
 * lines, environments, logs).  LC_EVIL_TAKEOVER_FILE=PATH likewise writes
 * the takeover key of the SINK_TARGET the controller sends.
 */
#include "buf.h"
#include "err.h"
#include "fdio.h"
#include "wire.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int
flush(int fd, struct lc_buf *b)
{
	int r = lc_write_all(fd, lc_buf_ptr(b), lc_buf_len(b));

	lc_buf_reset(b);
	return r;
}

/* $var as an unsigned number in base (0 if unset), 1 if set. */
static int
env_num(const char *var, int base, unsigned long long *v)
{
	const char *s = getenv(var);
	char *end;

	if (s == NULL || *s == '\0')
		return 0;
	errno = 0;
	*v = strtoull(s, &end, base);
	if (errno != 0 || *end != '\0') {
		fprintf(stderr, "lc_evil_agent: bad %s\n", var);
		exit(2);
	}
	return 1;
}

/* The name to announce: LC_EVIL_NAME_HEX, LC_EVIL_NAME or NULL. */
static const char *
env_name(char *out, size_t outsz)
{
	const char *hex = getenv("LC_EVIL_NAME_HEX"), *name;
	size_t n = 0;
	unsigned v;

	if (hex != NULL) {
		for (; hex[0] != '\0' && hex[1] != '\0' && n + 1 < outsz;
		    hex += 2) {
			if (sscanf(hex, "%2x", &v) != 1)
				break;
			out[n++] = (char)v;
		}
		out[n] = '\0';
		return out;
	}
	name = getenv("LC_EVIL_NAME");
	if (name != NULL)
		snprintf(out, outsz, "%s", name);
	return name != NULL ? out : NULL;
}

/* Answer SRC_ADD with an ERROR if LC_EVIL_ERROR_HEX asks for it. */
static int
evil_error(struct lc_buf *out)
{
	const char *hex = getenv("LC_EVIL_ERROR_HEX");
	char msg[512];
	size_t n = 0;
	unsigned v;

	if (hex == NULL)
		return 0;
	for (; hex[0] != '\0' && hex[1] != '\0' && n + 1 < sizeof(msg);
	    hex += 2) {
		if (sscanf(hex, "%2x", &v) != 1)
			break;
		msg[n++] = (char)v;
	}
	msg[n] = '\0';
	lc_msg_put_error(out, LC_ERR_IO, msg);
	return 1;
}

static int flooding;	/* LC_EVIL_FLOOD done: drop the rest */

/* 1 if the rewrites apply to a FILE named name ($var unset: every FILE). */
static int
env_at(const char *var, const char *name)
{
	const char *at = getenv(var);

	return at == NULL || strcmp(at, name) == 0;
}

/* Rewrite one FILE from the real source as the environment says. */
static void
evil_file(const struct lc_msg_file *in, struct lc_buf *out)
{
	struct lc_msg_file f = *in, x;
	unsigned long long v;
	char name[LC_PATH_MAX];
	const char *extra = getenv("LC_EVIL_EXTRA"), *s;

	if (flooding)
		return;
	if (!env_at("LC_EVIL_AT", in->name)) {
		lc_msg_put_file(out, &f);
		return;
	}
	if (env_name(name, sizeof(name)) != NULL)
		snprintf(f.name, sizeof(f.name), "%s", name);
	if (env_num("LC_EVIL_ID", 10, &v))
		f.id = (uint32_t)v;
	if (env_num("LC_EVIL_SIZE", 10, &v))
		f.size = (uint64_t)v;
	if (env_num("LC_EVIL_MODE", 8, &v))
		f.mode = (uint32_t)v;
	if ((s = getenv("LC_EVIL_LINK")) != NULL)
		snprintf(f.link, sizeof(f.link), "%s", s);
	lc_msg_put_file(out, &f);
	if (extra != NULL) {
		x = f;
		x.id = f.id + 1;
		if (env_num("LC_EVIL_EXTRA_ID", 10, &v))
			x.id = (uint32_t)v;
		x.kind = LC_KIND_REG;
		if (env_num("LC_EVIL_EXTRA_KIND", 10, &v))
			x.kind = (uint8_t)v;
		x.size = 0;
		x.mode = 0644;
		x.link[0] = '\0';
		if (x.kind == LC_KIND_SYMLINK)
			snprintf(x.link, sizeof(x.link), "%s",
			    (s = getenv("LC_EVIL_EXTRA_LINK")) != NULL ? s :
			    "/etc");
		snprintf(x.name, sizeof(x.name), "%s", extra);
		lc_msg_put_file(out, &x);
	}
	if ((s = getenv("LC_EVIL_FAIL")) != NULL) {
		struct lc_msg_file_fail ff;
		memset(&ff, 0, sizeof(ff));
		snprintf(ff.name, sizeof(ff.name), "%s", s);
		snprintf(ff.msg, sizeof(ff.msg), "evil: cannot read it");
		lc_msg_put_file_fail(out, &ff);
	}
	if (env_num("LC_EVIL_FLOOD", 10, &v)) {
		for (unsigned long long i = 1; i <= v; i++) {
			memset(&x, 0, sizeof(x));
			x.id = f.id + (uint32_t)i;
			x.kind = LC_KIND_REG;
			x.mode = 0644;
			x.size = 1;
			snprintf(x.name, sizeof(x.name), "%.4000s/f%06u",
			    f.name, (unsigned)x.id);
			lc_msg_put_file(out, &x);
		}
		flooding = 1;
	}
}

/* Rewrite one FILE from the controller to the real sink. */
static void
evil_sink_file(const struct lc_msg_file *in, struct lc_buf *out)
{
	struct lc_msg_file f = *in;
	const char *name = getenv("LC_EVIL_SINK_NAME");

	if (name != NULL && env_at("LC_EVIL_SINK_AT", in->name))
		snprintf(f.name, sizeof(f.name), "%s", name);
	lc_msg_put_file(out, &f);
}

/* Rewrite one SRC_LISTED from the real source as the environment says. */
static void
evil_listed(const struct lc_msg_src_listed *in, struct lc_buf *out)
{
	struct lc_msg_src_listed l = *in;
	struct lc_msg_file x;
	unsigned long long v;
	const char *late = getenv("LC_EVIL_LATE");

	if (env_num("LC_EVIL_LISTED_FILES", 10, &v))
		l.files = (uint32_t)v;
	lc_msg_put_src_listed(out, &l);
	if (late == NULL)
		return;
	memset(&x, 0, sizeof(x));
	x.id = 2;
	x.kind = LC_KIND_REG;
	x.mode = 0644;
	snprintf(x.name, sizeof(x.name), "%s", late);
	lc_msg_put_file(out, &x);
}

/* Standalone: a fake source that announces LC_EVIL_NAME and stops. */
static int
standalone(void)
{
	char nbuf[LC_PATH_MAX];
	const char *name = env_name(nbuf, sizeof(nbuf));
	struct lc_buf in, out;
	uint8_t *p, type;
	const uint8_t *payload;
	size_t plen, flen;
	ssize_t n;

	if (name == NULL)
		name = "../evil";
	lc_buf_init(&in, 1 << 21);
	lc_buf_init(&out, 1 << 21);
	for (;;) {
		if (lc_buf_reserve(&in, 65536, &p) != 0)
			break;
		n = read(0, p, 65536);
		lc_buf_unappend(&in, n > 0 ? 65536 - (size_t)n : 65536);
		if (n <= 0)
			break;
		while (lc_msg_peek(lc_buf_ptr(&in), lc_buf_len(&in), &type,
		    &payload, &plen, &flen) == 1) {
			if (type == LC_MSG_HELLO) {
				struct lc_msg_hello h;
				memset(&h, 0, sizeof(h));
				h.magic = LC_PROTO_MAGIC;
				h.proto = LC_PROTO_VERSION;
				snprintf(h.software, sizeof(h.software), "evil");
				h.max_streams = LC_MAX_STREAMS;
				snprintf(h.hostname, sizeof(h.hostname), "evil");
				lc_msg_put_hello(&out, &h);
			} else if (type == LC_MSG_SRC_ADD && !evil_error(&out)) {
				struct lc_msg_file f;
				struct lc_msg_src_listed l = { 1, 5 };
				memset(&f, 0, sizeof(f));
				f.id = 1;
				f.kind = LC_KIND_REG;
				f.mode = 0644;
				f.size = 5;
				snprintf(f.name, sizeof(f.name), "%s", name);
				lc_msg_put_file(&out, &f);
				lc_msg_put_src_listed(&out, &l);
			}
			lc_buf_consume(&in, flen);
		}
		if (flush(1, &out) != 0)
			break;
	}
	lc_buf_free(&in);
	lc_buf_free(&out);
	return 0;
}

/* Append the key to $var (a file) as a line of hex, if that is set. */
static void
record_key_in(const char *var, const uint8_t *key, size_t len)
{
	const char *path = getenv(var);
	FILE *f;

	if (path == NULL || (f = fopen(path, "a")) == NULL)
		return;
	for (size_t i = 0; i < len; i++)
		fprintf(f, "%02x", key[i]);
	fprintf(f, "\n");
	fclose(f);
}

static void
record_key(const uint8_t *key, size_t len)
{
	record_key_in("LC_EVIL_KEY_FILE", key, len);
}

/* Frames from the controller: passed on, except SRC_ADD with an error. */
static int
from_ctl(struct lc_buf *in, int to_child, struct lc_buf *out)
{
	const uint8_t *payload;
	size_t plen, flen;
	uint8_t type;
	static struct lc_msg_sink_target t;
	struct lc_msg_listen l;
	struct lc_msg_connect c;
	struct lc_msg_file f;
	struct lc_buf fb;

	while (lc_msg_peek(lc_buf_ptr(in), lc_buf_len(in), &type, &payload,
	    &plen, &flen) == 1) {
		if (type == LC_MSG_LISTEN &&
		    lc_msg_get_listen(payload, plen, &l) == 0)
			record_key(l.key, sizeof(l.key));
		else if (type == LC_MSG_CONNECT &&
		    lc_msg_get_connect(payload, plen, &c) == 0)
			record_key(c.key, sizeof(c.key));
		else if (type == LC_MSG_SINK_TARGET &&
		    lc_msg_get_sink_target(payload, plen, &t) == 0)
			record_key_in("LC_EVIL_TAKEOVER_FILE", t.takeover,
			    sizeof(t.takeover));
		if (type == LC_MSG_FILE && getenv("LC_EVIL_SINK_NAME") != NULL &&
		    lc_msg_get_file(payload, plen, &f) == 0) {
			int r;
			lc_buf_init(&fb, LC_CTL_MAX);
			evil_sink_file(&f, &fb);
			r = lc_write_all(to_child, lc_buf_ptr(&fb),
			    lc_buf_len(&fb));
			lc_buf_free(&fb);
			if (r != 0)
				return -1;
		} else if (type == LC_MSG_FILE_READY && flooding) {
			;	/* the fake files are never sent */
		} else if (type != LC_MSG_SRC_ADD || !evil_error(out)) {
			if (lc_write_all(to_child, lc_buf_ptr(in), flen) != 0)
				return -1;
		}
		lc_buf_consume(in, flen);
	}
	return flush(1, out);
}

/* Frames from the real agent: FILE rewritten, the rest passed on. */
static int
from_child(struct lc_buf *in, struct lc_buf *out)
{
	const uint8_t *payload;
	size_t plen, flen;
	uint8_t type;
	struct lc_msg_file f;
	struct lc_msg_src_listed l;

	while (lc_msg_peek(lc_buf_ptr(in), lc_buf_len(in), &type, &payload,
	    &plen, &flen) == 1) {
		if (type == LC_MSG_FILE &&
		    lc_msg_get_file(payload, plen, &f) == 0)
			evil_file(&f, out);
		else if (type == LC_MSG_SRC_LISTED &&
		    lc_msg_get_src_listed(payload, plen, &l) == 0)
			evil_listed(&l, out);
		else
			lc_buf_put(out, lc_buf_ptr(in), flen);
		lc_buf_consume(in, flen);
	}
	return flush(1, out);
}

static int
fill(int fd, struct lc_buf *b)
{
	uint8_t *p;
	ssize_t n;

	if (lc_buf_reserve(b, 65536, &p) != 0)
		return -1;
	n = read(fd, p, 65536);
	lc_buf_unappend(b, n > 0 ? 65536 - (size_t)n : 65536);
	return n > 0 ? 0 : -1;
}

static int
proxy(const char *real)
{
	int up[2], down[2], st = 0;
	struct lc_buf cin, kin, out;
	struct pollfd pfd[2];
	pid_t pid;

	if (pipe(up) != 0 || pipe(down) != 0)
		return 1;
	if ((pid = fork()) < 0)
		return 1;
	if (pid == 0) {
		dup2(down[0], 0);
		dup2(up[1], 1);
		close(down[0]);
		close(down[1]);
		close(up[0]);
		close(up[1]);
		execl(real, real, "--agent", (char *)NULL);
		_exit(127);
	}
	close(down[0]);
	close(up[1]);
	lc_buf_init(&cin, 1 << 21);
	lc_buf_init(&kin, 1 << 21);
	lc_buf_init(&out, 1 << 21);
	pfd[0].fd = 0;
	pfd[1].fd = up[0];
	while (pfd[1].fd >= 0) {
		pfd[0].events = pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents != 0) {
			if (fill(0, &cin) != 0) {
				pfd[0].fd = -1;	/* controller gone */
				close(down[1]);
			} else if (from_ctl(&cin, down[1], &out) != 0) {
				break;
			}
		}
		if (pfd[1].revents != 0) {
			if (fill(up[0], &kin) != 0 ||
			    from_child(&kin, &out) != 0)
				break;
		}
	}
	if (pfd[0].fd >= 0)
		close(down[1]);
	close(up[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	lc_buf_free(&cin);
	lc_buf_free(&kin);
	lc_buf_free(&out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int
main(void)
{
	const char *real = getenv("LC_EVIL_REAL");

	signal(SIGPIPE, SIG_IGN);
	return real != NULL ? proxy(real) : standalone();
}
