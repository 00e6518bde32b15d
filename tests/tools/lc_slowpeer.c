/*
 * lc_slowpeer: slow strangers on lanecp's data ports, for tests
 * (tests/integration/test_handshake_deadline.sh).
 *
 *   lc_slowpeer stranger OUT ADDR PORT FROM COUNT KIND
 *
 * opens COUNT connections from address FROM (port 0) to ADDR:PORT, one
 * after the other, appends "up COUNT" to the file OUT once all are
 * connected, then sends one byte a second on each: KIND tls sends a TLS
 * handshake record's header first (so that TLS waits for the rest of the
 * record), sink the bytes of a --no-encrypt response ("LCDC", zeros),
 * source those of a --no-encrypt sink hello ("LCDS" 1 0 0 0, zeros).
 * Whatever the peer sends is read and thrown away.  For each connection
 * the peer closes (or resets), one line "closed FROM:LOCALPORT after S s
 * (N bytes sent)".  It exits when every connection is closed.
 *
 *   lc_slowpeer gate OUT PORT FLAG
 *
 * listens on an ephemeral port of 127.0.0.1 (appends "port P" to OUT);
 * a connection that comes while the file FLAG does not exist is closed at
 * once, a later one is relayed both ways to 127.0.0.1:PORT.  It runs
 * until killed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXC 512

static const char *out_path;

static void
say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
say(const char *fmt, ...)
{
	va_list ap;
	FILE *f = fopen(out_path, "a");

	if (f == NULL)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
addr4(const char *s, uint16_t port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	return inet_pton(AF_INET, s, &sa->sin_addr) == 1 ? 0 : -1;
}

struct conn {
	int fd;
	double t0;
	unsigned sent;
	char name[64];
};

/* The n-th byte a stranger of this kind sends (after the tls header). */
static uint8_t
stranger_byte(const char *kind, unsigned n)
{
	static const uint8_t sink[4] = { 'L', 'C', 'D', 'C' };
	static const uint8_t source[8] = { 'L', 'C', 'D', 'S', 1, 0, 0, 0 };

	if (strcmp(kind, "sink") == 0 && n < sizeof(sink))
		return sink[n];
	if (strcmp(kind, "source") == 0 && n < sizeof(source))
		return source[n];
	return 0;
}

static int
stranger(const char *addr, uint16_t port, const char *from, int count,
    const char *kind)
{
	static const uint8_t tls_hdr[5] = { 0x16, 0x03, 0x03, 0x40, 0x00 };
	static struct conn c[MAXC];
	struct sockaddr_in dst, src;
	int open = 0;
	double next;

	if (count < 1 || count > MAXC || addr4(addr, port, &dst) != 0 ||
	    addr4(from, 0, &src) != 0) {
		fprintf(stderr, "lc_slowpeer: bad arguments\n");
		return 2;
	}
	for (int i = 0; i < count; i++) {
		struct sockaddr_in me;
		socklen_t ml = sizeof(me);
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0 || bind(fd, (struct sockaddr *)&src,
		    sizeof(src)) != 0 || connect(fd, (struct sockaddr *)&dst,
		    sizeof(dst)) != 0 || getsockname(fd, (struct sockaddr *)&me,
		    &ml) != 0) {
			fprintf(stderr, "lc_slowpeer: connect: %s\n",
			    strerror(errno));
			return 1;
		}
		c[i].fd = fd;
		c[i].t0 = now_s();
		c[i].sent = 0;
		snprintf(c[i].name, sizeof(c[i].name), "%s:%u", from,
		    (unsigned)ntohs(me.sin_port));
		if (strcmp(kind, "tls") == 0 &&
		    send(fd, tls_hdr, sizeof(tls_hdr), MSG_NOSIGNAL) !=
		    (ssize_t)sizeof(tls_hdr)) {
			fprintf(stderr, "lc_slowpeer: send failed\n");
			return 1;
		}
		open++;
	}
	say("up %d", count);
	next = now_s() + 1.0;
	while (open > 0) {
		struct pollfd pfd[MAXC];
		double left = next - now_s();
		int ms = left > 0 ? (int)(left * 1000) + 1 : 0;

		for (int i = 0; i < count; i++) {
			pfd[i].fd = c[i].fd;
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		if (poll(pfd, (nfds_t)count, ms) < 0 && errno != EINTR)
			return 1;
		for (int i = 0; i < count; i++) {
			uint8_t buf[4096];
			ssize_t k;
			int gone = 0;

			if (c[i].fd < 0)
				continue;
			if (pfd[i].revents != 0) {
				k = recv(c[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
				gone = k == 0 || (k < 0 && errno != EAGAIN &&
				    errno != EINTR);
			}
			if (!gone && now_s() >= next) {
				uint8_t b = stranger_byte(kind, c[i].sent);
				if (send(c[i].fd, &b, 1, MSG_NOSIGNAL) == 1)
					c[i].sent++;
				else
					gone = 1;
			}
			if (gone) {
				say("closed %s after %.1f s (%u bytes sent)",
				    c[i].name, now_s() - c[i].t0, c[i].sent);
				close(c[i].fd);
				c[i].fd = -1;
				open--;
			}
		}
		if (now_s() >= next)
			next += 1.0;
	}
	return 0;
}

struct pump {
	int from, to;
};

static void *
pump_main(void *arg)
{
	struct pump *p = arg;
	char buf[65536];
	ssize_t k;

	while ((k = read(p->from, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < k;) {
			ssize_t w = send(p->to, buf + off, (size_t)(k - off),
			    MSG_NOSIGNAL);
			if (w <= 0)
				goto out;
			off += w;
		}
	}
 out:
	shutdown(p->from, SHUT_RDWR);
	shutdown(p->to, SHUT_RDWR);
	return NULL;
}

static int
gate(uint16_t port, const char *flag)
{
	struct sockaddr_in sa, up;
	socklen_t sl = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (l < 0 || addr4("127.0.0.1", 0, &sa) != 0 ||
	    bind(l, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(l, 16) != 0 ||
	    getsockname(l, (struct sockaddr *)&sa, &sl) != 0 ||
	    addr4("127.0.0.1", port, &up) != 0) {
		fprintf(stderr, "lc_slowpeer: listen: %s\n", strerror(errno));
		return 1;
	}
	say("port %u", (unsigned)ntohs(sa.sin_port));
	for (;;) {
		struct pump *p;
		pthread_t th;
		int c = accept(l, NULL, NULL), u;

		if (c < 0)
			continue;
		if (access(flag, F_OK) != 0) {
			close(c);
			continue;
		}
		u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (u < 0 || connect(u, (struct sockaddr *)&up,
		    sizeof(up)) != 0 || (p = calloc(2, sizeof(*p))) == NULL) {
			close(c);
			if (u >= 0)
				close(u);
			continue;
		}
		p[0].from = c;
		p[0].to = u;
		p[1].from = u;
		p[1].to = c;
		for (int k = 0; k < 2; k++)
			if (pthread_create(&th, NULL, pump_main, &p[k]) == 0)
				pthread_detach(th);
	}
}

int
main(int argc, char **argv)
{
	if (argc == 8 && strcmp(argv[1], "stranger") == 0) {
		out_path = argv[2];
		return stranger(argv[3], (uint16_t)atoi(argv[4]), argv[5],
		    atoi(argv[6]), argv[7]);
	}
	if (argc == 5 && strcmp(argv[1], "gate") == 0) {
		out_path = argv[2];
		return gate((uint16_t)atoi(argv[3]), argv[4]);
	}
	fprintf(stderr, "usage: lc_slowpeer stranger OUT ADDR PORT FROM COUNT "
	    "KIND\n       lc_slowpeer gate OUT PORT FLAG\n");
	return 2;
}
