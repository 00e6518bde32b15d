/*
 * The passphrase prompt for encrypted identity files (see ssh_int.h), on
 * /dev/tty as ssh does.
 */
#include "ssh_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <openssl/crypto.h>

static volatile sig_atomic_t lc_ssh_pp_signo;
/* one prompt at a time: both ends of a copy may connect at once */
static pthread_mutex_t lc_ssh_pp_lock = PTHREAD_MUTEX_INITIALIZER;

static void
lc_ssh_pp_handler(int sig)
{
	lc_ssh_pp_signo = sig;
}

static int lc_ssh_askpass_locked(const char *, char *, size_t);

/* See ssh_int.h. */
int
lc__ssh_askpass(const char *prompt, char *buf, size_t bufsz)
{
	int r;

	pthread_mutex_lock(&lc_ssh_pp_lock);
	r = lc_ssh_askpass_locked(prompt, buf, bufsz);
	pthread_mutex_unlock(&lc_ssh_pp_lock);
	return r;
}

static int
lc_ssh_askpass_locked(const char *prompt, char *buf, size_t bufsz)
{
	static const int sigs[] = {
		SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU,
	};
	struct sigaction sa, old[sizeof(sigs) / sizeof(sigs[0])];
	struct termios saved, t;
	size_t i, n = 0;
	ssize_t k;
	int fd, r = -LC_ERR_IO, echo_off = 0, sig;
	char c;

	buf[0] = '\0';
	if ((fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)) < 0)
		return -LC_ERR_IO;
	lc_ssh_pp_signo = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = lc_ssh_pp_handler;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, &old[i]);
	if (tcgetattr(fd, &saved) == 0) {
		t = saved;
		t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
		echo_off = tcsetattr(fd, TCSAFLUSH, &t) == 0;
	}
	if (write(fd, prompt, strlen(prompt)) < 0)
		goto restore;
	for (;;) {
		if (lc_ssh_pp_signo != 0)
			break;
		k = read(fd, &c, 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			break;
		if (k == 0 || c == '\n' || c == '\r') {
			r = 0;
			break;
		}
		if (n + 1 < bufsz)
			buf[n++] = c;
	}
	buf[n] = '\0';
 restore:
	if (echo_off)
		tcsetattr(fd, TCSAFLUSH, &saved);
	if (write(fd, "\n", 1) < 0) {
		/* nothing to do */
	}
	close(fd);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &old[i], NULL);
	if ((sig = lc_ssh_pp_signo) != 0) {
		OPENSSL_cleanse(buf, bufsz);
		raise(sig);
		return -LC_ERR_CANCELED;
	}
	return r;
}
