/*
 * lc_sshfwd: move data both ways through lc_ssh_forward(), for the
 * integration tests.  Only the public lanecp/ssh.h API is used.
 *
 *   lc_sshfwd [-g] [-v] [-F config] [-J jump] [-S sndbuf] [-m MiB]
 *       [-n conns] host [forward_host]
 *
 * Threads and descriptors: the main thread listens on 127.0.0.1 (an
 * ephemeral port), connects to host over SSH and asks the server to
 * forward to forward_host (default 127.0.0.1) at that port.  An echo
 * thread accepts the one connection the server makes and owns it: it
 * sends back everything it reads and shuts down its writing side at EOF.
 * A writer thread owns nothing: it writes MiB MiB (default 8) of a
 * pseudo-random pattern to the caller's end of the forward and then
 * shuts down its writing side; the main thread reads the echo until EOF
 * and checks length and content.  So every byte crosses the forward
 * twice, and EOF is passed on in both directions.  -g gives the forward
 * a descriptor of our own (one end of a socketpair) instead of letting
 * it make one.  -S sets the SSH socket's send buffer (small values make
 * libssh2 send packets in parts).  -n opens that many connections with
 * the same options first (each its own chain of jump hosts), keeps them
 * all open, and then runs the transfer on each in turn.
 *
 * Prints "ok BYTES" on success.  Exit status: 0 ok, 1 data mismatch or
 * local failure, 3 connect/forward error (message on stderr).
 */
#include "err.h"
#include "log.h"
#include "parse.h"
#include "ssh.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LC_FWD_CHUNK (128 * 1024)
#define LC_FWD_CONNS 8

struct lc_fwd_writer {
	int fd;
	uint64_t total;
	int err;
};

/* The pattern byte at offset off: cheap, position dependent. */
static uint8_t
lc_fwd_byte(uint64_t off)
{
	uint64_t x = off * 0x9E3779B97F4A7C15ULL;

	return (uint8_t)(x >> 56 ^ off);
}

static void *
lc_fwd_echo(void *arg)
{
	int lfd = *(int *)arg, fd;
	char *buf;
	ssize_t n, w, off;

	if ((fd = accept(lfd, NULL, NULL)) < 0 ||
	    (buf = malloc(LC_FWD_CHUNK)) == NULL)
		return NULL;
	while ((n = read(fd, buf, LC_FWD_CHUNK)) > 0) {
		for (off = 0; off < n; off += w) {
			w = send(fd, buf + off, (size_t)(n - off),
			    MSG_NOSIGNAL);
			if (w <= 0)
				goto out;
		}
	}
	shutdown(fd, SHUT_WR);
	/* wait for the other side to close, so no data is reset */
	while (read(fd, buf, LC_FWD_CHUNK) > 0)
		;
 out:
	free(buf);
	close(fd);
	return NULL;
}

static void *
lc_fwd_write(void *arg)
{
	struct lc_fwd_writer *wr = arg;
	uint8_t *buf;
	uint64_t off = 0;
	size_t i, len;
	ssize_t w;

	if ((buf = malloc(LC_FWD_CHUNK)) == NULL) {
		wr->err = ENOMEM;
		return NULL;
	}
	while (off < wr->total) {
		len = wr->total - off < LC_FWD_CHUNK ?
		    (size_t)(wr->total - off) : LC_FWD_CHUNK;
		for (i = 0; i < len; i++)
			buf[i] = lc_fwd_byte(off + i);
		for (i = 0; i < len; i += (size_t)w) {
			w = send(wr->fd, buf + i, len - i, MSG_NOSIGNAL);
			if (w <= 0) {
				wr->err = w < 0 ? errno : EPIPE;
				free(buf);
				return NULL;
			}
		}
		off += len;
	}
	shutdown(wr->fd, SHUT_WR);
	free(buf);
	return NULL;
}

static int
lc_fwd_listen(uint16_t *port)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	int fd;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(fd, 1) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
		perror("lc_sshfwd: listen");
		exit(1);
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* Read the echo until EOF; 0 when it is exactly the pattern. */
static int
lc_fwd_check(int fd, uint64_t total)
{
	uint8_t *buf;
	uint64_t off = 0;
	ssize_t n, i;

	if ((buf = malloc(LC_FWD_CHUNK)) == NULL)
		return -1;
	while ((n = read(fd, buf, LC_FWD_CHUNK)) > 0) {
		for (i = 0; i < n; i++) {
			if (buf[i] != lc_fwd_byte(off + (uint64_t)i)) {
				fprintf(stderr, "lc_sshfwd: mismatch at "
				    "%llu\n", (unsigned long long)(off +
				    (uint64_t)i));
				free(buf);
				return -1;
			}
		}
		off += (uint64_t)n;
	}
	free(buf);
	if (n < 0 || off != total) {
		fprintf(stderr, "lc_sshfwd: got %llu of %llu bytes%s%s\n",
		    (unsigned long long)off, (unsigned long long)total,
		    n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
		return -1;
	}
	return 0;
}

static void
lc_fwd_usage(void)
{
	fprintf(stderr, "usage: lc_sshfwd [-gv] [-F config] [-J jump] "
	    "[-S sndbuf] [-m MiB] [-n conns] host [forward_host]\n");
	exit(2);
}

/* One transfer on s: forward to fhost at a fresh listener, echo, check. */
static int
lc_fwd_run(struct lc_ssh *s, const char *fhost, int given, uint64_t total)
{
	struct lc_fwd_writer wr;
	struct lc_err e;
	pthread_t echo, writer;
	uint16_t port;
	int lfd, fd = -1, sv[2] = { -1, -1 }, rc;

	memset(&wr, 0, sizeof(wr));
	wr.total = total;
	lc_err_clear(&e);
	lfd = lc_fwd_listen(&port);
	if (pthread_create(&echo, NULL, lc_fwd_echo, &lfd) != 0)
		return 1;
	if (given) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
		    sv) != 0)
			return 1;
		fd = sv[1];	/* the forward's own, after the call */
	}
	if ((rc = lc_ssh_forward(s, fhost, port, &fd, &e)) != 0) {
		fprintf(stderr, "lc_sshfwd: %s\n", e.msg);
		exit(3);
	}
	if (given) {
		if (fd != -1) {
			fprintf(stderr, "lc_sshfwd: given fd not taken\n");
			return 1;
		}
		fd = sv[0];
	}
	wr.fd = fd;
	if (pthread_create(&writer, NULL, lc_fwd_write, &wr) != 0)
		return 1;
	rc = lc_fwd_check(fd, wr.total);
	pthread_join(writer, NULL);
	if (wr.err != 0) {
		fprintf(stderr, "lc_sshfwd: write: %s\n", strerror(wr.err));
		rc = -1;
	}
	close(fd);
	pthread_join(echo, NULL);
	close(lfd);
	return rc != 0;
}

int
main(int argc, char **argv)
{
	struct lc_ssh_opts o;
	struct lc_ssh *s[LC_FWD_CONNS] = { NULL };
	struct lc_err e;
	const char *fhost;
	uint64_t v, total = 8ull << 20;
	int c, i, n = 1, given = 0, level = LC_LOG_WARN, rc = 0;

	memset(&o, 0, sizeof(o));
	o.batch = 1;
	while ((c = getopt(argc, argv, "gvF:J:S:m:n:")) != -1) {
		switch (c) {
		case 'g':
			given = 1;
			break;
		case 'v':
			level++;
			break;
		case 'F':
			o.config_file = optarg;
			break;
		case 'J':
			o.jump = optarg;
			break;
		case 'S':
			if (lc_parse_uint(optarg, 1, 1 << 24, &v) != 0)
				lc_fwd_usage();
			o.sndbuf = (int)v;
			break;
		case 'm':
			if (lc_parse_uint(optarg, 0, 1024, &v) != 0)
				lc_fwd_usage();
			total = v << 20;
			break;
		case 'n':
			if (lc_parse_uint(optarg, 1, LC_FWD_CONNS, &v) != 0)
				lc_fwd_usage();
			n = (int)v;
			break;
		default:
			lc_fwd_usage();
		}
	}
	if (argc - optind < 1 || argc - optind > 2)
		lc_fwd_usage();
	o.host = argv[optind];
	fhost = argc - optind == 2 ? argv[optind + 1] : "127.0.0.1";
	signal(SIGPIPE, SIG_IGN);
	lc_log_init("lc_sshfwd", level, 2);
	for (i = 0; i < n; i++) {
		lc_err_clear(&e);
		if (lc_ssh_connect(&o, &s[i], &e) != 0) {
			fprintf(stderr, "lc_sshfwd: %s\n", e.msg);
			return 3;
		}
	}
	for (i = 0; i < n && rc == 0; i++)
		rc = lc_fwd_run(s[i], fhost, given, total);
	for (i = 0; i < n; i++)
		lc_ssh_free(s[i]);
	if (rc != 0)
		return 1;
	printf("ok %llu\n", (unsigned long long)(total * (unsigned)n));
	return 0;
}
