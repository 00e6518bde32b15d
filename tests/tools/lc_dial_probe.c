/*
 * lc_dial_probe: a hostile controller that asks an agent to dial an
 * address of its choosing, as the client of a restricted key could
 * (issue 20: a restricted agent must not become a port scanner).
 *
 *   lc_dial_probe source|sink ADDR open|closed -- COMMAND...
 *
 * It listens on ADDR (a numeric address of this host) on an ephemeral
 * port, or with "closed" takes such a port and closes it again, then runs
 * COMMAND (e.g. "lc_sshexec -F cfg host lanecp --agent") with its stdin
 * and stdout on pipes and speaks the control protocol to it: HELLO, then
 * as source CONNECT (one stream to ADDR:port), as sink LISTEN (reverse)
 * and, once LISTENING comes, DIAL (ADDR:port).  It waits until the agent
 * answers with an ERROR or a connection arrives on the listener (or 120 s
 * pass), and prints on stdout one line per event:
 *   accepted FROM       a connection came in (the agent dialled)
 *   error CODE MESSAGE  the agent's ERROR
 *   eof                 the agent closed the control channel
 * Exit status 0 when something was printed, 1 on a local failure.
 */
#include "buf.h"
#include "err.h"
#include "clock.h"
#include "fdio.h"
#include "wire.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROBE_WAIT_MS 120000

static void
usage(void)
{
	fprintf(stderr, "usage: lc_dial_probe source|sink ADDR open|closed "
	    "-- COMMAND...\n");
	exit(1);
}

/* A listener on addr:0 (IPv4 or IPv6); its port in *port. */
static int
probe_listen(const char *addr, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, addr,
	    &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
		len = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, addr,
	    &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		len = sizeof(struct sockaddr_in6);
	} else {
		fprintf(stderr, "lc_dial_probe: bad address %s\n", addr);
		return -1;
	}
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 8) != 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
		perror("lc_dial_probe: listen");
		close(fd);
		return -1;
	}
	*port = ntohs(ss.ss_family == AF_INET ?
	    ((struct sockaddr_in *)&ss)->sin_port :
	    ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

static pid_t
spawn(char **argv, int *to, int *from)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe(in) != 0 || pipe(out) != 0)
		return -1;
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*to = in[1];
	*from = out[0];
	return pid;
}

static int
send_buf(int fd, struct lc_buf *b)
{
	int r = lc_write_all(fd, lc_buf_ptr(b), lc_buf_len(b));

	lc_buf_reset(b);
	return r;
}

int
main(int argc, char **argv)
{
	struct lc_buf in, out;
	struct lc_msg_hello h;
	struct lc_msg_connect c;
	struct lc_msg_listen l;
	struct lc_msg_dial dl;
	struct lc_msg_error er;
	struct pollfd pfd[2];
	const char *role, *addr;
	uint16_t port = 0;
	int lfd, to, from, sink, events = 0, nfd;
	pid_t pid;

	if (argc < 6 || strcmp(argv[4], "--") != 0)
		usage();
	role = argv[1];
	addr = argv[2];
	sink = strcmp(role, "sink") == 0;
	if (!sink && strcmp(role, "source") != 0)
		usage();
	signal(SIGPIPE, SIG_IGN);
	if ((lfd = probe_listen(addr, &port)) < 0)
		return 1;
	if (strcmp(argv[3], "closed") == 0) {
		close(lfd);	/* nobody listens there now */
		lfd = -1;
	} else if (strcmp(argv[3], "open") != 0)
		usage();
	if ((pid = spawn(argv + 5, &to, &from)) < 0)
		return 1;
	lc_buf_init(&in, LC_CTL_MAX + 65536);
	lc_buf_init(&out, LC_CTL_MAX + 65536);
	memset(&h, 0, sizeof(h));
	h.magic = LC_PROTO_MAGIC;
	h.proto = LC_PROTO_VERSION;
	snprintf(h.software, sizeof(h.software), "lc_dial_probe");
	lc_msg_put_hello(&out, &h);
	if (sink) {
		memset(&l, 0, sizeof(l));
		l.streams = 1;
		l.block = 1u << 20;
		l.flags = LC_XFER_ENCRYPT | LC_XFER_REVERSE;
		memset(l.key, 0x5a, sizeof(l.key));
		lc_msg_put_listen(&out, &l);
	} else {
		memset(&c, 0, sizeof(c));
		snprintf(c.addr, sizeof(c.addr), "%s", addr);
		c.streams = 1;
		c.block = 1u << 20;
		c.flags = LC_XFER_ENCRYPT;
		memset(c.key, 0x5a, sizeof(c.key));
		c.ports[0] = port;
		lc_msg_put_connect(&out, &c);
	}
	if (send_buf(to, &out) != 0)
		return 1;
	for (uint64_t t0 = lc_now_ms(); events == 0 &&
	    lc_now_ms() - t0 < PROBE_WAIT_MS;) {
		uint8_t type, *p;
		const uint8_t *payload;
		size_t plen, flen;
		ssize_t n;
		int r;

		pfd[0].fd = from;
		pfd[0].events = POLLIN;
		pfd[1].fd = lfd;
		pfd[1].events = POLLIN;
		nfd = lfd >= 0 ? 2 : 1;
		if (poll(pfd, (nfds_t)nfd, 1000) <= 0)
			continue;
		if (nfd == 2 && pfd[1].revents != 0) {
			struct sockaddr_storage ss;
			socklen_t sl = sizeof(ss);
			char name[128];
			int fd = accept(lfd, (struct sockaddr *)&ss, &sl);

			if (fd >= 0) {
				if (getnameinfo((struct sockaddr *)&ss, sl,
				    name, sizeof(name), NULL, 0,
				    NI_NUMERICHOST) != 0)
					snprintf(name, sizeof(name), "?");
				printf("accepted %s\n", name);
				close(fd);
				events++;
			}
		}
		if (pfd[0].revents == 0)
			continue;
		if (lc_buf_reserve(&in, 65536, &p) != 0)
			return 1;
		n = read(from, p, 65536);
		lc_buf_unappend(&in, n > 0 ? 65536 - (size_t)n : 65536);
		if (n <= 0) {
			printf("eof\n");
			events++;
			break;
		}
		while ((r = lc_msg_peek(lc_buf_ptr(&in), lc_buf_len(&in),
		    &type, &payload, &plen, &flen)) == 1) {
			if (type == LC_MSG_ERROR &&
			    lc_msg_get_error(payload, plen, &er) == 0) {
				printf("error %u %s\n", er.code, er.msg);
				events++;
			} else if (type == LC_MSG_LISTENING && sink) {
				memset(&dl, 0, sizeof(dl));
				snprintf(dl.addr, sizeof(dl.addr), "%s", addr);
				dl.streams = 1;
				dl.ports[0] = port;
				lc_msg_put_dial(&out, &dl);
				if (send_buf(to, &out) != 0)
					return 1;
			}
			lc_buf_consume(&in, flen);
		}
		if (r < 0)
			return 1;
	}
	fflush(stdout);
	close(to);
	close(from);
	kill(pid, SIGTERM);
	(void)waitpid(pid, NULL, 0);
	lc_buf_free(&in);
	lc_buf_free(&out);
	return events > 0 ? 0 : 1;
}
