/*
 * Taking over a stale agent's part file: the holder's answering thread and
 * the asker (design in takeover.h).
 *
 * Threads.  The holder runs one thread (lc-takeover) that polls its
 * listening socket and a wake pipe; it serves one connection at a time,
 * each with socket timeouts (LC_TAKEOVER_IO_MS), so a silent peer holds it
 * for that long at most.  lc_takeover_stop() pokes the pipe and joins.
 * The key and root are written before the thread starts and only read
 * after, so they need no lock.
 */
#include "takeover.h"

#include "buf.h"
#include "fdio.h"
#include "log.h"
#include "thread.h"
#include "wake.h"
#include "wire.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#define LC_TAKEOVER_NAME_BYTES 16

struct lc_takeover {
	uint8_t key[LC_KEY_LEN];
	char root[LC_PATH_MAX];
	pid_t pid;
	int fd;			/* the listening socket */
	struct lc_wake wake;
	pthread_t thread;
};

int
lc_takeover_key_set(const uint8_t key[LC_KEY_LEN])
{
	uint8_t any = 0;

	for (size_t i = 0; i < LC_KEY_LEN; i++)
		any |= key[i];
	return any != 0;
}

static void
lc_takeover_put_pid(uint8_t out[4], pid_t pid)
{
	uint32_t v = (uint32_t)pid;

	out[0] = (uint8_t)(v >> 24);
	out[1] = (uint8_t)(v >> 16);
	out[2] = (uint8_t)(v >> 8);
	out[3] = (uint8_t)v;
}

void
lc_takeover_addr(const uint8_t key[LC_KEY_LEN], pid_t pid,
    struct sockaddr_un *sa, socklen_t *len)
{
	static const char label[] = "lanecp takeover name v1";
	static const char prefix[] = "lanecp-takeover-";
	uint8_t msg[sizeof(label) - 1 + 4], mac[EVP_MAX_MD_SIZE];
	unsigned maclen = 0;
	size_t n;

	memcpy(msg, label, sizeof(label) - 1);
	lc_takeover_put_pid(msg + sizeof(label) - 1, pid);
	if (HMAC(EVP_sha256(), key, LC_KEY_LEN, msg, sizeof(msg), mac,
	    &maclen) == NULL || maclen < LC_TAKEOVER_NAME_BYTES)
		memset(mac, 0, sizeof(mac));	/* a name nobody serves */
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* abstract: sun_path[0] is NUL, the name follows, not terminated */
	memcpy(sa->sun_path + 1, prefix, sizeof(prefix) - 1);
	n = 1 + sizeof(prefix) - 1;
	for (size_t i = 0; i < LC_TAKEOVER_NAME_BYTES; i++, n += 2)
		snprintf(sa->sun_path + n, 3, "%02x", mac[i]);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	OPENSSL_cleanse(mac, sizeof(mac));
}

/* HMAC-SHA256(key, "lanecp takeover v1" | nonce | u32 pid | root). */
static int
lc_takeover_mac(const uint8_t key[LC_KEY_LEN],
    const uint8_t nonce[LC_TAKEOVER_NONCE_LEN], pid_t pid, const char *root,
    uint8_t out[LC_TAKEOVER_MAC_LEN])
{
	static const char label[] = "lanecp takeover v1";
	uint8_t msg[sizeof(label) - 1 + LC_TAKEOVER_NONCE_LEN + 4 +
	    LC_PATH_MAX], mac[EVP_MAX_MD_SIZE];
	size_t n = 0, rlen = strlen(root);
	unsigned maclen = 0;
	int ok;

	if (rlen >= LC_PATH_MAX)
		return -LC_ERR_INTERNAL;
	memcpy(msg, label, sizeof(label) - 1);
	n += sizeof(label) - 1;
	memcpy(msg + n, nonce, LC_TAKEOVER_NONCE_LEN);
	n += LC_TAKEOVER_NONCE_LEN;
	lc_takeover_put_pid(msg + n, pid);
	n += 4;
	memcpy(msg + n, root, rlen);
	n += rlen;
	ok = HMAC(EVP_sha256(), key, LC_KEY_LEN, msg, n, mac, &maclen) !=
	    NULL && maclen == LC_TAKEOVER_MAC_LEN;
	if (ok)
		memcpy(out, mac, LC_TAKEOVER_MAC_LEN);
	OPENSSL_cleanse(mac, sizeof(mac));
	return ok ? 0 : -LC_ERR_INTERNAL;
}

/* SO_PEERCRED of a connected AF_UNIX socket: 0 with *pid and *uid. */
static int
lc_takeover_peer(int fd, pid_t *pid, uid_t *uid)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 ||
	    len != sizeof(cr))
		return -1;
	*pid = cr.pid;
	*uid = cr.uid;
	return 0;
}

static void
lc_takeover_timeouts(int fd, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
		.tv_usec = (ms % 1000) * 1000 };

	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Read until EOF, at most max bytes; the count, or -1 (error, overlong). */
static ssize_t
lc_takeover_read_all(int fd, uint8_t *buf, size_t max)
{
	size_t got = 0;
	ssize_t n;

	for (;;) {
		n = read(fd, buf + got, max - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return (ssize_t)got;
		got += (size_t)n;
		if (got == max) {	/* one byte more would be too long */
			uint8_t extra;
			return read(fd, &extra, 1) == 0 ? (ssize_t)got : -1;
		}
	}
}

/* The holder: one connection, one verdict. */
static void
lc_takeover_answer(struct lc_takeover *t, int fd)
{
	uint8_t nonce[LC_TAKEOVER_NONCE_LEN], want[LC_TAKEOVER_MAC_LEN];
	uint8_t req[LC_TAKEOVER_REQUEST_MAX], verdict;
	struct lc_takeover_req m;
	struct lc_buf b;
	pid_t pid;
	uid_t uid;
	ssize_t n;

	lc_buf_init(&b, LC_TAKEOVER_CHALLENGE_LEN + LC_TAKEOVER_ANSWER_LEN);
	lc_takeover_timeouts(fd, LC_TAKEOVER_IO_MS);
	/* only our own user may ask (the kernel says who connected) */
	if (lc_takeover_peer(fd, &pid, &uid) != 0 || uid != geteuid())
		goto out;
	if (RAND_bytes(nonce, sizeof(nonce)) != 1 ||
	    lc_takeover_put_challenge(&b, nonce) != 0 ||
	    lc_write_all(fd, lc_buf_ptr(&b), lc_buf_len(&b)) != 0)
		goto out;
	lc_buf_reset(&b);
	if ((n = lc_takeover_read_all(fd, req, sizeof(req))) < 0 ||
	    lc_takeover_get_request(req, (size_t)n, &m) != 0 ||
	    lc_takeover_mac(t->key, nonce, t->pid, m.root, want) != 0)
		goto out;
	if (CRYPTO_memcmp(want, m.mac, sizeof(want)) != 0)
		verdict = LC_TAKEOVER_NO_KEY;
	else if (strcmp(m.root, t->root) != 0)
		verdict = LC_TAKEOVER_NO_ROOT;
	else
		verdict = LC_TAKEOVER_YES;
	lc_log_debug("takeover asked by pid %d: %s", (int)pid,
	    verdict == LC_TAKEOVER_YES ? "yes" : verdict == LC_TAKEOVER_NO_KEY ?
	    "no, not this run's key" : "no, another directory");
	if (lc_takeover_put_answer(&b, verdict) == 0)
		(void)lc_write_all(fd, lc_buf_ptr(&b), lc_buf_len(&b));
 out:
	OPENSSL_cleanse(want, sizeof(want));
	lc_buf_free(&b);
}

static void *
lc_takeover_main(void *arg)
{
	struct lc_takeover *t = arg;
	struct pollfd pfd[2];
	int fd;

	lc_log_set_tag("takeover");
	for (;;) {
		pfd[0].fd = t->fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = t->wake.rfd;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents != 0)
			break;
		if (pfd[0].revents == 0)
			continue;
		fd = accept4(t->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		lc_takeover_answer(t, fd);
		close(fd);
	}
	return NULL;
}

int
lc_takeover_serve(const uint8_t key[LC_KEY_LEN], const char *root,
    struct lc_takeover **out, struct lc_err *e)
{
	struct lc_takeover *t;
	struct sockaddr_un sa;
	socklen_t len;
	int r;

	*out = NULL;
	if (!lc_takeover_key_set(key))
		return lc_err_set(e, LC_ERR_INTERNAL, "takeover: no key");
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "takeover: out of memory");
	t->fd = -1;
	t->wake.rfd = t->wake.wfd = -1;
	memcpy(t->key, key, LC_KEY_LEN);
	snprintf(t->root, sizeof(t->root), "%s", root);
	t->pid = getpid();
	lc_takeover_addr(t->key, t->pid, &sa, &len);
	if ((t->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(t->fd, (struct sockaddr *)&sa, len) != 0 ||
	    listen(t->fd, 4) != 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "takeover socket");
		goto fail;
	}
	if (lc_wake_open(&t->wake) != 0) {
		r = lc_err_set(e, LC_ERR_INTERNAL, "takeover: pipe");
		goto fail;
	}
	if (lc_thread_start(&t->thread, "lc-takeover", lc_takeover_main,
	    t) != 0) {
		r = lc_err_set(e, LC_ERR_INTERNAL, "takeover: thread");
		goto fail;
	}
	*out = t;
	return 0;
 fail:
	if (t->fd >= 0)
		close(t->fd);
	lc_wake_close(&t->wake);
	OPENSSL_cleanse(t->key, sizeof(t->key));
	free(t);
	return r;
}

void
lc_takeover_stop(struct lc_takeover *t)
{
	if (t == NULL)
		return;
	lc_wake_signal(&t->wake);
	pthread_join(t->thread, NULL);
	close(t->fd);
	lc_wake_close(&t->wake);
	OPENSSL_cleanse(t->key, sizeof(t->key));
	free(t);
}

int
lc_takeover_ask(pid_t pid, const uint8_t key[LC_KEY_LEN], const char *root,
    int timeout_ms, struct lc_err *e)
{
	uint8_t nonce[LC_TAKEOVER_NONCE_LEN], buf[LC_TAKEOVER_CHALLENGE_LEN];
	struct lc_takeover_req m;
	struct sockaddr_un sa;
	struct lc_buf b;
	socklen_t len;
	pid_t ppid;
	uid_t puid;
	uint8_t verdict = 0;
	ssize_t n;
	int fd = -1, r;

	memset(&m, 0, sizeof(m));
	lc_buf_init(&b, LC_TAKEOVER_REQUEST_MAX);
	if (!lc_takeover_key_set(key)) {
		r = lc_err_set(e, LC_ERR_LOCKED, "no takeover key");
		goto out;
	}
	if (strlen(root) >= sizeof(m.root)) {
		r = lc_err_set(e, LC_ERR_LOCKED, "root too long");
		goto out;
	}
	lc_takeover_addr(key, pid, &sa, &len);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, len) != 0) {
		r = lc_err_sys(e, LC_ERR_LOCKED, errno, "pid %d does not "
		    "answer takeover requests for this run", (int)pid);
		goto out;
	}
	lc_takeover_timeouts(fd, timeout_ms);
	/* the listener must be the holder itself, of our own user */
	if (lc_takeover_peer(fd, &ppid, &puid) != 0 || ppid != pid ||
	    puid != geteuid()) {
		r = lc_err_set(e, LC_ERR_LOCKED, "the takeover socket for pid "
		    "%d is not that process's", (int)pid);
		goto out;
	}
	if (lc_read_full(fd, buf, sizeof(buf)) != 0 ||
	    lc_takeover_get_challenge(buf, sizeof(buf), nonce) != 0) {
		r = lc_err_set(e, LC_ERR_LOCKED, "pid %d: no takeover "
		    "challenge", (int)pid);
		goto out;
	}
	snprintf(m.root, sizeof(m.root), "%s", root);
	if ((r = lc_takeover_mac(key, nonce, pid, m.root, m.mac)) != 0 ||
	    (r = lc_takeover_put_request(&b, &m)) != 0 ||
	    (r = lc_write_all(fd, lc_buf_ptr(&b), lc_buf_len(&b))) != 0 ||
	    shutdown(fd, SHUT_WR) != 0) {
		r = lc_err_set(e, LC_ERR_LOCKED, "pid %d: takeover request "
		    "failed", (int)pid);
		goto out;
	}
	n = lc_takeover_read_all(fd, buf, LC_TAKEOVER_ANSWER_LEN);
	if (n < 0 || lc_takeover_get_answer(buf, (size_t)n, &verdict) != 0) {
		r = lc_err_set(e, LC_ERR_LOCKED, "pid %d: no takeover answer",
		    (int)pid);
		goto out;
	}
	r = verdict == LC_TAKEOVER_YES ? 0 : lc_err_set(e, LC_ERR_LOCKED,
	    "pid %d refused the takeover (%s)", (int)pid,
	    verdict == LC_TAKEOVER_NO_KEY ? "not this run" :
	    "restricted to another directory, or not alike");
 out:
	if (fd >= 0)
		close(fd);
	OPENSSL_cleanse(&m, sizeof(m));
	lc_buf_free(&b);
	return r;
}
