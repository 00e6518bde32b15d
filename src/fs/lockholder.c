/*
 * Transfer ids and part-file lock holders (lockholder.h).
 *
 * Why a sink stops a stale agent of its own transfer rather than waiting
 * for it: the only process that speaks for a transfer id is the one
 * controller that made it, and it has moved on to a new attempt, so the
 * old agent's work is abandoned by definition.  Waiting for it to notice
 * (up to the PING grace, LC_AGENT_GRACE_S, plus its exit deadline) would
 * stall the new sink's main thread, which also runs the control channel,
 * for more than a minute.  So: confirm the holder is ours (same uid, its
 * command line carries our --transfer id) on a pidfd, have it confirm
 * that we hold this run's takeover key and its directory (takeover.h: the
 * id alone is public), SIGTERM it (an agent keeps the default action),
 * and poll the lock for at most
 * LC_TAKEOVER_WAIT_MS.  The new agent writes only once flock() has
 * succeeded on its own descriptor, and the kernel releases the old
 * agent's lock only when its last descriptor for the file is closed, so
 * two agents never write one part file at once.
 */
#include "lockholder.h"

#include "clock.h"
#include "log.h"
#include "takeover.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <openssl/rand.h>

#define LC_PROC_READ_MAX 8192	/* of /proc/PID/cmdline and status */
#define LC_LOCKS_LINE_MAX 256

int
lc_transfer_new(char *out)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[LC_TRANSFER_BYTES];

	out[0] = '\0';
	if (RAND_bytes(b, (int)sizeof(b)) != 1)
		return -LC_ERR_INTERNAL;
	for (size_t i = 0; i < sizeof(b); i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[LC_TRANSFER_HEX] = '\0';
	return 0;
}

int
lc_transfer_valid(const char *s)
{
	size_t i;

	for (i = 0; i < LC_TRANSFER_HEX; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[i] == '\0';
}

int
lc_transfer_from_command(const char *cmd, char *out)
{
	static const char opt[] = "--transfer";
	const char *p = cmd, *w, *end = cmd + strnlen(cmd, 4096);
	int want = 0;
	size_t n;

	out[0] = '\0';
	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		for (w = p; p < end && *p != ' ' && *p != '\t'; p++)
			;
		if ((n = (size_t)(p - w)) == 0)
			break;
		if (want || (n == sizeof(opt) + LC_TRANSFER_HEX &&
		    memcmp(w, opt, sizeof(opt) - 1) == 0 &&
		    w[sizeof(opt) - 1] == '=')) {
			if (!want) {
				w += sizeof(opt);
				n -= sizeof(opt);
			}
			if (n != LC_TRANSFER_HEX)
				return 0;
			memcpy(out, w, n);
			out[n] = '\0';
			if (lc_transfer_valid(out))
				return 1;
			out[0] = '\0';
			return 0;
		}
		want = n == sizeof(opt) - 1 && memcmp(w, opt, n) == 0;
	}
	return 0;
}

/*
 * Parse an unsigned number of [s, end) in base 10 or 16: every character
 * a digit, at least one, no overflow past max.  0 or -1.
 */
static int
lc_num(const char *s, const char *end, int base, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	unsigned d;

	if (s >= end)
		return -1;
	for (; s < end; s++) {
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return -1;
		if (v > (max - d) / (unsigned)base)
			return -1;
		v = v * (unsigned)base + d;
	}
	*out = v;
	return 0;
}

/* Split line into at most ntok space-separated tokens; their count. */
static size_t
lc_tokens(const char *line, const char **tok, const char **tend, size_t ntok)
{
	size_t n = 0;
	const char *p = line;

	while (*p != '\0' && *p != '\n' && n < ntok) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || *p == '\n')
			break;
		tok[n] = p;
		while (*p != '\0' && *p != '\n' && *p != ' ' && *p != '\t')
			p++;
		tend[n++] = p;
	}
	return n;
}

static int
lc_tok_is(const char *t, const char *end, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(end - t) == n && memcmp(t, word, n) == 0;
}

/*
 * "12: FLOCK  ADVISORY  WRITE 4711 08:01:1234 0 EOF"; a waiter has "->"
 * after the id.  The pid may be -1 (not in our pid namespace).
 */
int
lc_locks_line(const char *line, unsigned maj, unsigned min, uint64_t ino,
    pid_t *pid)
{
	const char *tok[8], *end[8], *c1, *c2;
	uint64_t v, m;
	size_t n;

	*pid = 0;
	n = lc_tokens(line, tok, end, 8);
	if (n < 6 || end[0] == tok[0] || end[0][-1] != ':' ||
	    !lc_tok_is(tok[1], end[1], "FLOCK") ||
	    !lc_tok_is(tok[2], end[2], "ADVISORY") ||
	    !(lc_tok_is(tok[3], end[3], "WRITE") ||
	    lc_tok_is(tok[3], end[3], "READ")))
		return 0;
	/* dev:ino, "MAJ:MIN:INO", major and minor in hex */
	if ((c1 = memchr(tok[5], ':', (size_t)(end[5] - tok[5]))) == NULL ||
	    (c2 = memchr(c1 + 1, ':', (size_t)(end[5] - c1 - 1))) == NULL ||
	    lc_num(tok[5], c1, 16, 0xffffffffu, &m) != 0 || m != maj ||
	    lc_num(c1 + 1, c2, 16, 0xffffffffu, &m) != 0 || m != min ||
	    lc_num(c2 + 1, end[5], 10, UINT64_MAX, &v) != 0 || v != ino)
		return 0;
	if (tok[4][0] == '-')
		return 1;	/* ours, holder not visible: pid stays 0 */
	if (lc_num(tok[4], end[4], 10, 0x7fffffff, &v) != 0)
		return 0;
	*pid = (pid_t)v;
	return 1;
}

int
lc_locks_find(const char *locks_path, dev_t dev, ino_t ino, pid_t *pid)
{
	char line[LC_LOCKS_LINE_MAX];
	int found = 0, skipping = 0;
	FILE *f;

	*pid = 0;
	if ((f = fopen(locks_path, "re")) == NULL)
		return -LC_ERR_IO;
	for (long i = 0; i < LC_LOCKS_MAX_LINES &&
	    fgets(line, sizeof(line), f) != NULL; i++) {
		int whole = strchr(line, '\n') != NULL;
		pid_t p;

		/* an overlong line is no line of ours: skip all of it */
		if (!skipping && whole && lc_locks_line(line, major(dev),
		    minor(dev), (uint64_t)ino, &p) == 1 && p > 0) {
			*pid = p;
			found = 1;
			break;
		}
		skipping = !whole;
	}
	fclose(f);
	return found ? 0 : -LC_ERR_IO;
}

/* The next argument of a cmdline buffer at *off, or NULL at its end. */
static const char *
lc_next_arg(const char *buf, size_t n, size_t *off, size_t *len)
{
	const char *a, *z;

	if (*off >= n)
		return NULL;
	a = buf + *off;
	z = memchr(a, '\0', n - *off);
	*len = z != NULL ? (size_t)(z - a) : n - *off;
	*off += *len + 1;
	return a;
}

static int
lc_arg_is(const char *a, size_t len, const char *word)
{
	return len == strlen(word) && memcmp(a, word, len) == 0;
}

int
lc_cmdline_classify(const char *buf, size_t n, const char *transfer,
    int *lanecp)
{
	static const char opt[] = "--transfer";
	size_t off = 0, len, base;
	const char *a;
	int agent = 0, same = 0, want_id = 0, ok;

	ok = transfer != NULL && lc_transfer_valid(transfer);
	*lanecp = 0;
	if ((a = lc_next_arg(buf, n, &off, &len)) == NULL)
		return LC_HOLDER_OTHER;
	for (base = len; base > 0 && a[base - 1] != '/'; base--)
		;
	*lanecp = lc_arg_is(a + base, len - base, "lanecp");
	while ((a = lc_next_arg(buf, n, &off, &len)) != NULL) {
		if (lc_arg_is(a, len, "--"))
			break;	/* operands follow */
		if (want_id) {
			same = ok && lc_arg_is(a, len, transfer);
			want_id = 0;
		} else if (lc_arg_is(a, len, "--agent"))
			agent = 1;
		else if (lc_arg_is(a, len, opt))
			want_id = 1;
		else if (len > sizeof(opt) && memcmp(a, opt, sizeof(opt) - 1) ==
		    0 && a[sizeof(opt) - 1] == '=')
			same = ok && lc_arg_is(a + sizeof(opt),
			    len - sizeof(opt), transfer);
	}
	*lanecp = *lanecp || agent;
	return agent && same ? LC_HOLDER_SAME : LC_HOLDER_OTHER;
}

int
lc_status_uid_is(const char *buf, size_t n, uid_t uid)
{
	const char *p = buf, *end = buf + n, *eol, *tok[5], *tend[5];
	char line[128];
	uint64_t v;
	size_t len;

	for (; p < end; p = eol + 1) {
		if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
			eol = end;
		len = (size_t)(eol - p);
		if (len < 4 || memcmp(p, "Uid:", 4) != 0)
			continue;
		if (len >= sizeof(line))
			return 0;
		memcpy(line, p + 4, len - 4);
		line[len - 4] = '\0';
		/* real, effective, saved, filesystem */
		if (lc_tokens(line, tok, tend, 5) != 4)
			return 0;
		for (int i = 0; i < 3; i++)
			if (lc_num(tok[i], tend[i], 10, 0xffffffffu, &v) != 0 ||
			    v != (uint64_t)uid)
				return 0;
		return 1;
	}
	return 0;
}

/* Read at most LC_PROC_READ_MAX - 1 bytes of /proc/PID/what. */
static ssize_t
lc_proc_read(pid_t pid, const char *what, char *buf, size_t bufsz)
{
	char path[64];
	size_t got = 0;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -1;
	while (got < bufsz - 1) {
		r = read(fd, buf + got, bufsz - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

/* Classify pid as a holder (after its pid is known). */
static void
lc_holder_of(pid_t pid, const char *transfer, struct lc_holder *h)
{
	char buf[LC_PROC_READ_MAX];
	ssize_t n;

	h->pid = pid;
	h->kind = LC_HOLDER_UNKNOWN;
	h->lanecp = 0;
	if (pid == getpid()) {
		h->kind = LC_HOLDER_SELF;
		return;
	}
	/* another user's process is never ours, whatever it claims */
	if ((n = lc_proc_read(pid, "status", buf, sizeof(buf))) <= 0 ||
	    !lc_status_uid_is(buf, (size_t)n, geteuid()))
		return;
	if ((n = lc_proc_read(pid, "cmdline", buf, sizeof(buf))) <= 0)
		return;
	h->kind = lc_cmdline_classify(buf, (size_t)n, transfer, &h->lanecp);
}

void
lc_lock_holder(int fd, const char *transfer, struct lc_holder *h)
{
	struct stat st;
	pid_t pid;

	memset(h, 0, sizeof(*h));
	h->kind = LC_HOLDER_UNKNOWN;
	if (fstat(fd, &st) != 0 ||
	    lc_locks_find("/proc/locks", st.st_dev, st.st_ino, &pid) != 0)
		return;
	lc_holder_of(pid, transfer, h);
}

int
lc_lock_held_error(const char *path, const struct lc_holder *h,
    struct lc_err *e)
{
	switch (h->kind) {
	case LC_HOLDER_SELF:
		return lc_err_set(e, LC_ERR_LOCKED, "%s: this lanecp is "
		    "already writing this file (named twice?)", path);
	case LC_HOLDER_SAME:
		return lc_err_set(e, LC_ERR_LOCKED, "%s: an earlier attempt "
		    "of this transfer (pid %d) is still writing this file",
		    path, (int)h->pid);
	case LC_HOLDER_OTHER:
		if (h->lanecp)
			return lc_err_set(e, LC_ERR_LOCKED, "%s: another "
			    "lanecp (pid %d, a different transfer) is writing "
			    "this file", path, (int)h->pid);
		return lc_err_set(e, LC_ERR_LOCKED, "%s: another process "
		    "(pid %d, not lanecp) holds the lock on this file", path,
		    (int)h->pid);
	default:
		if (h->pid > 0)
			return lc_err_set(e, LC_ERR_LOCKED, "%s: another "
			    "process (pid %d, not identified) is writing this "
			    "file", path, (int)h->pid);
		return lc_err_set(e, LC_ERR_LOCKED, "%s: another lanecp (not "
		    "identified) is writing this file", path);
	}
}

static int
lc_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

static int
lc_pidfd_signal(int pidfd, int sig)
{
#ifdef SYS_pidfd_send_signal
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
#else
	(void)pidfd, (void)sig;
	errno = ENOSYS;
	return -1;
#endif
}

/*
 * Ask the holder whether it is of our run and directory (takeover.h);
 * 0 on its yes, after saying that we stop it.
 */
static int
lc_lock_confirm(const struct lc_holder *h, const struct lc_lock_self *me,
    const char *path)
{
	struct lc_err why;

	lc_err_clear(&why);
	if (me->key == NULL || lc_takeover_ask(h->pid, me->key,
	    me->root != NULL ? me->root : "", LC_TAKEOVER_IO_MS, &why) != 0) {
		lc_log_debug("%s: pid %d: %s", path, (int)h->pid,
		    why.msg[0] != '\0' ? why.msg : "no takeover key");
		return -1;
	}
	lc_log_warn("%s: an earlier attempt of this transfer (pid %d) still "
	    "holds the partial file; stopping it", path, (int)h->pid);
	return 0;
}

#define LC_STOP_NOT_OURS (-2)	/* it did not confirm: not of this run */

/*
 * Stop h->pid if, on a pidfd taken first, it is still an agent of our
 * transfer holding this very lock and it confirms that we may (a pid
 * reused after the check is then impossible: the pidfd names the process
 * we checked, and signal 0 on it proves it was still alive when we read
 * its /proc files).  0 when it was signalled, is gone already or no
 * longer listed as holding the lock (nothing is signalled then), -1 when
 * the holder is no longer it, LC_STOP_NOT_OURS when it did not confirm.
 * Without pidfds (Linux before 5.3) the check is repeated just before a
 * plain kill(): a pid reused in between would have to be another agent
 * of this run holding this lock to be hit.
 */
static int
lc_lock_stop(int fd, const struct lc_holder *h, const struct lc_lock_self *me,
    const char *path)
{
	struct lc_holder again;
	int pidfd, r = -1;

	if ((pidfd = lc_pidfd_open(h->pid)) < 0 && errno == ENOSYS) {
		lc_lock_holder(fd, me->transfer, &again);
		if (again.pid == 0)
			return 0;	/* released meanwhile */
		if (again.kind != LC_HOLDER_SAME || again.pid != h->pid)
			return -1;
		if (lc_lock_confirm(h, me, path) != 0)
			return LC_STOP_NOT_OURS;
		return kill(h->pid, SIGTERM) == 0 || errno == ESRCH ? 0 : -1;
	}
	if (pidfd < 0)
		return errno == ESRCH ? 0 : -1;
	lc_lock_holder(fd, me->transfer, &again);
	if (again.pid == 0)
		r = 0;		/* no holder listed: let flock() tell */
	else if (again.kind == LC_HOLDER_SAME && again.pid == h->pid &&
	    lc_pidfd_signal(pidfd, 0) == 0) {
		if (lc_lock_confirm(h, me, path) != 0)
			r = LC_STOP_NOT_OURS;
		else
			r = lc_pidfd_signal(pidfd, SIGTERM) == 0 ||
			    errno == ESRCH ? 0 : -1;
	}
	close(pidfd);
	return r;
}

int
lc_lock_takeover(int fd, const struct lc_holder *h,
    const struct lc_lock_self *me, unsigned wait_ms, const char *path,
    struct lc_err *e)
{
	uint64_t deadline = lc_now_ms() + wait_ms;
	int pause_ms = 10, r;

	if (h->kind != LC_HOLDER_SAME || h->pid <= 0)
		return lc_lock_held_error(path, h, e);
	if ((r = lc_lock_stop(fd, h, me, path)) == LC_STOP_NOT_OURS)
		return lc_err_set(e, LC_ERR_LOCKED, "%s: an agent with this "
		    "transfer id (pid %d) holds this file, and it is not of "
		    "this run (it did not accept our takeover)", path,
		    (int)h->pid);
	if (r != 0)
		return lc_err_set(e, LC_ERR_LOCKED, "%s: an earlier attempt of "
		    "this transfer (pid %d) holds this file and cannot be "
		    "stopped", path, (int)h->pid);
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return lc_err_sys(e, LC_ERR_IO, errno, "lock %s", path);
		if (lc_now_ms() >= deadline)
			break;
		(void)poll(NULL, 0, pause_ms);
		pause_ms = pause_ms * 2 > 200 ? 200 : pause_ms * 2;
	}
	return lc_err_set(e, LC_ERR_LOCKED, "%s: an earlier attempt of this "
	    "transfer (pid %d) did not release the file within %u s of "
	    "SIGTERM", path, (int)h->pid, wait_ms / 1000);
}
