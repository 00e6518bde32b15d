/*
 * lc_sshexec: run a command on a remote host through lanecp's ssh module,
 * like "ssh host command", for the integration tests.  Only the public
 * lanecp/ssh.h API is used.
 *
 *   lc_sshexec [-AvP] [-F config] [-i identity] [-S sndbuf] [-w wait_s]
 *       [user@]host command...
 *
 * stdin goes to the command, its stdout to stdout; its stderr comes out as
 * log lines ("lanecp: [host] ...").  -A prints "peer ADDR local ADDR" on
 * stderr after connecting; -P allows passphrase prompts (default: batch
 * mode); -S sets the SSH socket's send buffer (small values make libssh2
 * send packets in parts); -v raises the log level (twice: debug); -w
 * bounds the wait for the exit status after EOF (default 30 s).
 *
 * Exit status: the remote command's; 255 when it is unknown (connection
 * lost, killed by a signal).  Local errors: 2 config or usage, 3 connect or
 * authentication, 4 host key, 1 anything else.
 */
#include "err.h"
#include "log.h"
#include "parse.h"
#include "ssh.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LC_SSHEXEC_BUF 65536

struct lc_sshexec_dir {
	char buf[LC_SSHEXEC_BUF];
	size_t off;
	size_t len;
	int eof;
};

static void
lc_sshexec_usage(void)
{
	fprintf(stderr, "usage: lc_sshexec [-AvP] [-F config] [-i identity] "
	    "[-S sndbuf] [-w wait_s] [user@]host command...\n");
	exit(2);
}

static int
lc_sshexec_errcode(int code)
{
	switch (code < 0 ? -code : code) {
	case LC_ERR_CONFIG:
	case LC_ERR_USAGE:
		return 2;
	case LC_ERR_CONNECT:
	case LC_ERR_AUTH:
		return 3;
	case LC_ERR_HOSTKEY:
		return 4;
	default:
		return 1;
	}
}

/* Read into d (empty) from fd; EOF or an error ends the direction. */
static void
lc_sshexec_fill(struct lc_sshexec_dir *d, int fd)
{
	ssize_t n = read(fd, d->buf, sizeof(d->buf));

	if (n > 0) {
		d->off = 0;
		d->len = (size_t)n;
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		d->eof = 1;
	}
}

/* Write out of d to fd; 0, or -1 when fd refuses data. */
static int
lc_sshexec_drain(struct lc_sshexec_dir *d, int fd, int sock)
{
	ssize_t n;

	if (sock)
		n = send(fd, d->buf + d->off, d->len, MSG_NOSIGNAL);
	else
		n = write(fd, d->buf + d->off, d->len);
	if (n > 0) {
		d->off += (size_t)n;
		d->len -= (size_t)n;
		return 0;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	return -1;
}

/*
 * stdin -> fd and fd -> stdout until fd reaches EOF.  stdin's EOF becomes
 * a half close of fd.  Returns 0, or -1 when stdout failed.
 */
static int
lc_sshexec_copy(int fd)
{
	static struct lc_sshexec_dir in, out;
	struct pollfd p[3];
	int shut = 0;

	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
		return -1;
	while (!(out.eof && out.len == 0)) {
		if (in.eof && in.len == 0 && !shut) {
			shutdown(fd, SHUT_WR);
			shut = 1;
		}
		p[0].fd = !in.eof && in.len == 0 ? 0 : -1;
		p[0].events = POLLIN;
		p[1].fd = fd;
		p[1].events = (short)((!out.eof && out.len == 0 ? POLLIN : 0) |
		    (in.len > 0 ? POLLOUT : 0));
		p[2].fd = out.len > 0 ? 1 : -1;
		p[2].events = POLLOUT;
		p[0].revents = p[1].revents = p[2].revents = 0;
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))
			lc_sshexec_fill(&in, 0);
		if ((p[1].revents & POLLOUT) && in.len > 0 &&
		    lc_sshexec_drain(&in, fd, 1) != 0) {
			/* the remote side is gone: drop our input */
			in.len = 0;
			in.eof = 1;
		}
		if ((p[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    out.len == 0 && !out.eof)
			lc_sshexec_fill(&out, fd);
		if ((p[2].revents & (POLLOUT | POLLERR | POLLHUP)) &&
		    out.len > 0 && lc_sshexec_drain(&out, 1, 0) != 0)
			return -1;
	}
	return 0;
}

static char *
lc_sshexec_join(int argc, char **argv)
{
	size_t n = 1;
	char *cmd;
	int i;

	for (i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	if ((cmd = calloc(1, n)) == NULL)
		return NULL;
	for (i = 0; i < argc; i++) {
		if (i > 0)
			strcat(cmd, " ");
		strcat(cmd, argv[i]);
	}
	return cmd;
}

int
main(int argc, char **argv)
{
	struct lc_ssh_opts o;
	struct lc_ssh *s = NULL;
	struct lc_err e;
	uint64_t v;
	char *host, *at, *cmd = NULL, sig[32];
	int c, fd = -1, level = LC_LOG_INFO, show_addr = 0, wait_s = 30;
	int r, status, rc = 1;

	memset(&o, 0, sizeof(o));
	o.batch = 1;
	while ((c = getopt(argc, argv, "+AF:i:PS:vw:")) != -1) {
		switch (c) {
		case 'A':
			show_addr = 1;
			break;
		case 'F':
			o.config_file = optarg;
			break;
		case 'i':
			o.identity_file = optarg;
			break;
		case 'P':
			o.batch = 0;
			break;
		case 'S':
			if (lc_parse_size(optarg, 1, 1 << 30, &v) != 0)
				lc_sshexec_usage();
			o.sndbuf = (int)v;
			break;
		case 'v':
			level++;
			break;
		case 'w':
			if (lc_parse_uint(optarg, 0, 3600, &v) != 0)
				lc_sshexec_usage();
			wait_s = (int)v;
			break;
		default:
			lc_sshexec_usage();
		}
	}
	if (argc - optind < 2)
		lc_sshexec_usage();
	signal(SIGPIPE, SIG_IGN);
	lc_log_init("lanecp", level, 2);
	host = argv[optind];
	if ((at = strrchr(host, '@')) != NULL) {
		*at = '\0';
		o.user = host;
		host = at + 1;
	}
	o.host = host;
	if ((cmd = lc_sshexec_join(argc - optind - 1, argv + optind + 1)) ==
	    NULL)
		return 1;
	lc_err_clear(&e);
	if ((r = lc_ssh_connect(&o, &s, &e)) != 0 ||
	    (show_addr && fprintf(stderr, "peer %s local %s\n",
	    lc_ssh_peer_addr(s), lc_ssh_local_addr(s)) < 0) ||
	    (r = lc_ssh_exec(s, cmd, &fd, &e)) != 0) {
		lc_err_ensure(&e, r, "ssh");
		fprintf(stderr, "lc_sshexec: %s\n", e.msg);
		rc = lc_sshexec_errcode(r);
		goto out;
	}
	if (lc_sshexec_copy(fd) != 0)
		fprintf(stderr, "lc_sshexec: writing stdout: %s\n",
		    strerror(errno));
	close(fd);
	fd = -1;
	if (lc_ssh_wait(s, wait_s * 1000, &status, sig, sizeof(sig)) != 0) {
		fprintf(stderr, "lc_sshexec: no exit status from %s after "
		    "%d s\n", lc_ssh_name(s), wait_s);
		rc = 1;
	} else if (status >= 0) {
		rc = status;
	} else {
		if (sig[0] != '\0')
			fprintf(stderr, "lc_sshexec: remote command killed by "
			    "signal %s\n", sig);
		else
			fprintf(stderr, "lc_sshexec: connection to %s lost\n",
			    lc_ssh_name(s));
		rc = 255;
	}
 out:
	if (fd >= 0)
		close(fd);
	lc_ssh_free(s);
	free(cmd);
	return rc;
}
