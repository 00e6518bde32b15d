/*
 * lc_proxy: a test-only TCP proxy for lanecp's data streams, started by the
 * controller when LANECP_TEST_PROXY names it (see src/ctl/testhook_ctl.c):
 *
 *     lc_proxy ADDR PORT...
 *
 * listens on one ephemeral port per PORT (on ADDR if it is a 127/8
 * address, else on 127.0.0.1), prints them on one line
 * and relays connection i to ADDR:PORT[i].  What it does to the streams is
 * set by the environment (STREAM is a stream index, OFFSET a byte count in
 * the source-to-sink direction of that stream's first connection):
 *
 *   LC_PROXY_FLIP=STREAM:OFFSET    flip the bits of the byte at OFFSET
 *   LC_PROXY_RESET=STREAM:OFFSET   reset both sides after OFFSET bytes
 *   LC_PROXY_STALL=STREAM:OFFSET   stop relaying after OFFSET bytes (the
 *                                  connections stay open, nothing moves)
 *   LC_PROXY_RECORD=DIR            save the first 64 KiB the source sends
 *                                  on each stream in DIR/stream-N.bin
 *   LC_PROXY_LOG=FILE              append one line per event
 *   LC_PROXY_DELAY_MS=N            hold every chunk N ms before relaying
 *                                  it, both ways (a long path: all the
 *                                  handshakes of a copy overlap)
 *   LC_PROXY_EVERY=1               act on every connection of STREAM,
 *                                  not just the first
 *   LC_PROXY_ONCE=FILE             act only if FILE does not exist, and
 *                                  create it when acting (so that a
 *                                  retried copy goes through clean)
 *   LC_PROXY_HIJACK=STREAM:N       play the attacker on the path for the
 *                                  next N connections of STREAM after its
 *                                  first (its reconnects; N = 0: all of
 *                                  them): answer them without relaying,
 *                                  with a well-formed --no-encrypt sink
 *                                  hello ("LCDS", version 1, a nonce), then
 *                                  after up to 72 bytes from the source a
 *                                  wrong proof ("LCDA", zeros), and save
 *                                  every byte received in
 *                                  LC_PROXY_RECORD/hijack-STREAM-K.bin (K:
 *                                  connection number, the first is 1) until
 *                                  the source closes (then the log says
 *                                  "hijacked connection K: closed after N
 *                                  bytes") or 1 MiB came (then it resets)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAXS 64
#define RECORD_MAX (64 << 10)
#define HIJACK_MAX (1 << 20)

struct action {
	int stream;		/* -1: none */
	unsigned long long at;
};

static struct action flip = { -1, 0 }, reset_at = { -1, 0 },
    stall = { -1, 0 }, hijack = { -1, 0 };
static const char *record_dir, *log_path, *once_path;
static int every;
static unsigned delay_ms;
static const char *dst_addr;
static int dst_port[MAXS];
static int listen_fd[MAXS];
static unsigned seen[MAXS];	/* connections so far, per stream */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void
plog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
plog(const char *fmt, ...)
{
	va_list ap;
	FILE *f;

	if (log_path == NULL || (f = fopen(log_path, "a")) == NULL)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

static int
parse_action(const char *name, struct action *a)
{
	const char *v = getenv(name);
	char *end;
	long s;

	if (v == NULL || *v == '\0')
		return 0;
	errno = 0;
	s = strtol(v, &end, 10);
	if (errno != 0 || *end != ':' || s < 0 || s >= MAXS)
		return -1;
	a->stream = (int)s;
	a->at = strtoull(end + 1, &end, 10);
	return *end == '\0' ? 0 : -1;
}

struct pipe_arg {
	int from, to;
	int stream;
	int first;		/* first connection of this stream */
	int upstream;		/* source -> sink direction */
};

static void
hard_reset(int fd)
{
	struct linger l = { 1, 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	shutdown(fd, SHUT_RDWR);
}

static void *
relay(void *arg)
{
	struct pipe_arg *p = arg;
	unsigned char buf[65536];
	unsigned long long off = 0;
	int rec = -1;

	if (p->upstream && p->first && record_dir != NULL) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/stream-%d.bin", record_dir,
		    p->stream);
		rec = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	}
	for (;;) {
		size_t want = sizeof(buf);
		ssize_t n;
		int tamper = p->upstream && (p->first || every);

		if (tamper && reset_at.stream == p->stream &&
		    off + want > reset_at.at)
			want = (size_t)(reset_at.at - off);
		if (tamper && stall.stream == p->stream &&
		    off + want > stall.at)
			want = (size_t)(stall.at - off);
		if (want == 0) {
			if (reset_at.stream == p->stream &&
			    off >= reset_at.at) {
				plog("stream %d: reset at %llu", p->stream,
				    off);
				hard_reset(p->from);
				hard_reset(p->to);
				break;
			}
			plog("stream %d: stalled at %llu", p->stream, off);
			pause();	/* stall: hold both sockets */
		}
		n = read(p->from, buf, want);
		if (n <= 0)
			break;
		if (delay_ms > 0)
			usleep(delay_ms * 1000u);
		if (rec >= 0 && off < RECORD_MAX) {
			size_t k = (size_t)n;
			if (off + k > RECORD_MAX)
				k = (size_t)(RECORD_MAX - off);
			if (write(rec, buf, k) < 0)
				break;
		}
		if (tamper && flip.stream == p->stream && flip.at >= off &&
		    flip.at < off + (unsigned long long)n) {
			buf[flip.at - off] ^= 0xff;
			plog("stream %d: flipped byte %llu", p->stream,
			    flip.at);
		}
		if (write(p->to, buf, (size_t)n) != n)
			break;
		off += (unsigned long long)n;
	}
	if (rec >= 0)
		close(rec);
	shutdown(p->to, SHUT_WR);
	return NULL;
}

struct hijack_arg {
	int fd;
	int stream;
	unsigned conn;
};

/*
 * The attacker's end of a reconnect: a plausible sink hello, a wrong
 * proof, and a record of everything the source sends.
 */
static void *
hijack_conn(void *arg)
{
	struct hijack_arg *h = arg;
	unsigned char buf[65536], hello[40] = { 'L', 'C', 'D', 'S', 1 };
	unsigned char fin[36] = { 'L', 'C', 'D', 'A' };
	unsigned long long got = 0;
	char path[4096];
	int rec = -1, closed = 0;

	plog("stream %d: hijacking connection %u", h->stream, h->conn);
	for (size_t i = 8; i < sizeof(hello); i++)
		hello[i] = (unsigned char)rand();
	if (record_dir != NULL) {
		snprintf(path, sizeof(path), "%s/hijack-%d-%u.bin", record_dir,
		    h->stream, h->conn);
		rec = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	}
	(void)!write(h->fd, hello, sizeof(hello));
	while (got < HIJACK_MAX) {
		size_t want = sizeof(buf);
		ssize_t n;

		if (got < 72 && want > 72 - got)	/* the source's answer */
			want = (size_t)(72 - got);
		if ((n = read(h->fd, buf, want)) <= 0) {
			closed = 1;
			break;
		}
		if (rec >= 0 && write(rec, buf, (size_t)n) != n)
			break;
		got += (unsigned long long)n;
		if (got == 72)
			(void)!write(h->fd, fin, sizeof(fin));
	}
	if (rec >= 0)
		close(rec);
	if (closed) {
		plog("stream %d: hijacked connection %u: closed after %llu "
		    "bytes", h->stream, h->conn, got);
		close(h->fd);
	} else {
		plog("stream %d: hijacked connection %u: reset after %llu "
		    "bytes", h->stream, h->conn, got);
		hard_reset(h->fd);
		close(h->fd);
	}
	free(h);
	return NULL;
}

static int
connect_dst(int port)
{
	struct addrinfo hints, *res;
	char serv[16];
	int fd;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	snprintf(serv, sizeof(serv), "%d", port);
	if (getaddrinfo(dst_addr, serv, &hints, &res) != 0)
		return -1;
	fd = socket(res->ai_family, SOCK_STREAM, 0);
	if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

static void *
serve(void *arg)
{
	int i = (int)(intptr_t)arg;

	for (;;) {
		int c = accept(listen_fd[i], NULL, NULL), u, first;
		unsigned k;
		pthread_t t1, t2;
		struct pipe_arg *a, *b;

		if (c < 0)
			continue;
		pthread_mutex_lock(&mu);
		k = ++seen[i];
		pthread_mutex_unlock(&mu);
		first = k == 1;
		if (hijack.stream == i && k > 1 &&
		    (hijack.at == 0 || k - 1 <= hijack.at)) {
			struct hijack_arg *h = calloc(1, sizeof(*h));
			if (h == NULL)
				exit(1);
			*h = (struct hijack_arg){ c, i, k };
			pthread_create(&t1, NULL, hijack_conn, h);
			pthread_detach(t1);
			continue;
		}
		if ((u = connect_dst(dst_port[i])) < 0) {
			close(c);
			continue;
		}
		a = calloc(1, sizeof(*a));
		b = calloc(1, sizeof(*b));
		if (a == NULL || b == NULL)
			exit(1);
		*a = (struct pipe_arg){ c, u, i, first, 1 };
		*b = (struct pipe_arg){ u, c, i, first, 0 };
		pthread_create(&t1, NULL, relay, a);
		pthread_create(&t2, NULL, relay, b);
		pthread_detach(t1);
		pthread_detach(t2);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in sin;
	socklen_t len;
	const char *v;
	int n = argc - 2;

	if (argc < 3 || n > MAXS) {
		fprintf(stderr, "usage: lc_proxy ADDR PORT...\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (parse_action("LC_PROXY_FLIP", &flip) != 0 ||
	    parse_action("LC_PROXY_RESET", &reset_at) != 0 ||
	    parse_action("LC_PROXY_STALL", &stall) != 0 ||
	    parse_action("LC_PROXY_HIJACK", &hijack) != 0) {
		fprintf(stderr, "lc_proxy: bad LC_PROXY_* value\n");
		return 2;
	}
	record_dir = getenv("LC_PROXY_RECORD");
	once_path = getenv("LC_PROXY_ONCE");
	every = getenv("LC_PROXY_EVERY") != NULL;
	if ((v = getenv("LC_PROXY_DELAY_MS")) != NULL)
		delay_ms = (unsigned)atoi(v);
	if (once_path != NULL && access(once_path, F_OK) == 0) {
		flip.stream = reset_at.stream = stall.stream = -1;
		hijack.stream = -1;
	} else if (once_path != NULL) {
		int fd = open(once_path, O_WRONLY | O_CREAT, 0644);
		if (fd >= 0)
			close(fd);
	}
	log_path = getenv("LC_PROXY_LOG");
	dst_addr = argv[1];
	for (int i = 0; i < n; i++) {
		dst_port[i] = atoi(argv[i + 2]);
		listen_fd[i] = socket(AF_INET, SOCK_STREAM, 0);
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		/* on the sink's own loopback address when it has one (the
		   source dials that address with the proxy's ports) */
		if (inet_pton(AF_INET, dst_addr, &sin.sin_addr) != 1 ||
		    (ntohl(sin.sin_addr.s_addr) >> 24) != 127)
			sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(sin);
		if (listen_fd[i] < 0 ||
		    bind(listen_fd[i], (struct sockaddr *)&sin, sizeof(sin)) ||
		    listen(listen_fd[i], 16) ||
		    getsockname(listen_fd[i], (struct sockaddr *)&sin, &len)) {
			perror("lc_proxy: listen");
			return 1;
		}
		printf("%s%u", i ? " " : "", (unsigned)ntohs(sin.sin_port));
	}
	printf("\n");
	fflush(stdout);
	plog("proxy for %s, %d streams", dst_addr, n);
	for (int i = 0; i < n; i++) {
		pthread_t t;
		pthread_create(&t, NULL, serve, (void *)(intptr_t)i);
		pthread_detach(t);
	}
	for (;;)
		pause();
}
