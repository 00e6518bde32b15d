/*
 * -N programs (program.h).  fork(2) and execve(2) from a threaded
 * process: the child calls only async-signal-safe functions before the
 * exec.
 */
#include "program.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* In the child: fds 0 and 1 in place, nothing else open, then exec. */
static void
lc_prog_child(const char *cmd, int in_fd, int out_fd)
{
	char *const argv[] = { (char *)"sh", (char *)"-c", (char *)cmd, NULL };
	struct sigaction sa;
	sigset_t none;

	if ((in_fd != 0 && dup2(in_fd, 0) < 0) ||
	    (out_fd != 1 && dup2(out_fd, 1) < 0))
		_exit(127);
	/* fds 0 and 1 may have been close-on-exec copies: keep them */
	(void)fcntl(0, F_SETFD, 0);
	(void)fcntl(1, F_SETFD, 0);
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
#endif
		for (int fd = 3; fd < 1024; fd++)
			(void)close(fd);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	execve("/bin/sh", argv, environ);
	_exit(127);
}

int
lc_prog_start(const char *cmd, int out, int other_fd, pid_t *pid, int *fd,
    struct lc_err *e)
{
	int p[2], null_fd = -1, r;
	pid_t c;

	*pid = -1;
	*fd = -1;
	if (pipe2(p, O_CLOEXEC) != 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "pipe for program "
		    "'%.200s'", cmd);
	if (other_fd < 0 && (null_fd = open("/dev/null", O_RDWR |
	    O_CLOEXEC)) < 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "/dev/null");
		goto fail;
	}
	if ((c = fork()) < 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "start program '%.200s'",
		    cmd);
		goto fail;
	}
	if (c == 0) {
		int other = other_fd >= 0 ? other_fd : null_fd;
		if (out)
			lc_prog_child(cmd, other, p[1]);
		else
			lc_prog_child(cmd, p[0], other);
	}
	if (null_fd >= 0)
		close(null_fd);
	close(out ? p[1] : p[0]);
	*fd = out ? p[0] : p[1];
	*pid = c;
	return 0;
 fail:
	if (null_fd >= 0)
		close(null_fd);
	close(p[0]);
	close(p[1]);
	return r;
}

int
lc_prog_wait(pid_t pid, const char *what, const char *cmd, struct lc_err *e)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return lc_err_sys(e, LC_ERR_PROGRAM, errno, "wait for "
			    "%s '%.200s'", what, cmd);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st))
		return lc_err_set(e, LC_ERR_PROGRAM, "%s '%.200s' failed: "
		    "exit status %d", what, cmd, WEXITSTATUS(st));
	return lc_err_set(e, LC_ERR_PROGRAM, "%s '%.200s' failed: killed by "
	    "signal %d", what, cmd, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int
lc_prog_on_path(const char *name)
{
	const char *path = getenv("PATH");
	char dir[4096], file[4096 + 256];

	if (name == NULL || name[0] == '\0' || strchr(name, '/') != NULL ||
	    strlen(name) > 255)
		return 0;
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path != '\0') {
		size_t n = strcspn(path, ":");

		if (n < sizeof(dir)) {
			memcpy(dir, path, n);
			dir[n] = '\0';
			snprintf(file, sizeof(file), "%s/%s", n > 0 ? dir : ".",
			    name);
			if (access(file, X_OK) == 0)
				return 1;
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return 0;
}
