/*
 * The sink's pipe targets and pipes: a target that is our stdout or a
 * -N o program's stdin (one file, written in order, no part file), and a
 * pipe input of the source (LC_KIND_PIPE: - or -N i), whose length
 * FILE_LEN gives once it has ended.  Main thread, except
 * lc__sink_pipe_wait (the finish job).  State: struct lc_sink_pipe
 * (sink_int.h); the program's pid is under lc_sink.mu.
 */
#include "sink_int.h"

#include "log.h"
#include "program.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * A pipe target: our stdout (a local agent only: a remote agent's stdout
 * is its control channel) or a -N o program's stdin (never for a
 * restricted agent: --restrict confines paths, and a program can do
 * anything).  No file system, no part file: one file, written in order.
 */
int
lc__sink_pipe_target(struct lc_sink *s, const struct lc_msg_sink_target *m,
    struct lc_err *e)
{
	int prog = (m->flags & LC_TGT_PROGRAM) != 0;
	int r;

	if ((m->flags & (LC_TGT_STDOUT | LC_TGT_PROGRAM)) ==
	    (LC_TGT_STDOUT | LC_TGT_PROGRAM) || (m->flags & (LC_TGT_RESUME |
	    LC_TGT_TREE | LC_TGT_WANT_DIR)) != 0)
		return lc_err_set(e, LC_ERR_PROTO, "SINK_TARGET: a pipe target "
		    "takes one file, no resume");
	s->tgt.conf = s->port.conf;
	s->tgt.flags = m->flags;
	s->tgt.umask = s->port.set.umask;
	if (!prog) {
		if (!s->port.set.local || strcmp(m->target, "-") != 0)
			return lc_err_set(e, LC_ERR_DENIED, "'-' (stdout) is a "
			    "local target only: a remote agent's stdout is its "
			    "control channel");
		if ((s->pipe.fd = fcntl(1, F_DUPFD_CLOEXEC, 3)) < 0)
			return lc_err_sys(e, LC_ERR_IO, errno, "stdout");
		snprintf(s->tgt.path, sizeof(s->tgt.path), "stdout");
		return 0;
	}
	if (s->port.conf->root_fd >= 0)
		return lc_err_set(e, LC_ERR_DENIED, "this agent is restricted "
		    "(--restrict %s): it runs no -N programs",
		    s->port.conf->root);
	snprintf(s->pipe.prog_cmd, sizeof(s->pipe.prog_cmd), "%s", m->target);
	/* a remote agent's stdout is the control channel: stderr instead */
	if ((r = lc_prog_start(s->pipe.prog_cmd, 0, s->port.set.local ? 1 : 2,
	    &s->pipe.prog_pid, &s->pipe.fd, e)) != 0)
		return r;
	lc_log_verbose("target program '%s' started (pid %ld)",
	    s->pipe.prog_cmd, (long)s->pipe.prog_pid);
	snprintf(s->tgt.path, sizeof(s->tgt.path), "target program '%.200s'",
	    s->pipe.prog_cmd);
	return 0;
}

/* The one file of a pipe target: straight into the pipe, in order. */
int
lc__sink_pipe_file(struct lc_sink *s, const struct lc_msg_file *m,
    struct lc_err *e)
{
	struct lc_sfile *f;
	int r;

	if (m->id != 1 || s->pipe.fd < 0)
		return lc_err_set(e, LC_ERR_PROTO, "FILE: a pipe target takes "
		    "one file");
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -LC_ERR_NOMEM;
	f->id = m->id;
	f->kind = m->kind;
	f->sink = s;
	f->p.fd = s->pipe.fd;
	f->seed_fd = -1;
	s->pipe.fd = -1;	/* the part's now */
	f->p.dfd = -1;
	f->p.direct = 1;
	f->p.size = m->size;
	if (lc_part_set_final(&f->p, s->tgt.path, NULL) != 0 ||
	    (s->csum != LC_CSUM_NONE &&
	    (f->csum = lc_csum_new((int)s->csum)) == NULL)) {
		lc__sink_sfile_free(f);
		return -LC_ERR_NOMEM;
	}
	if ((r = lc__sink_table_put(s, f)) != 0) {
		lc__sink_sfile_free(f);
		return lc_err_set(e, -r, "FILE: id %u is a duplicate or out of "
		    "order", m->id);
	}
	return lc__sink_start_file(s, f, e);
}

/*
 * FILE_LEN: the stream ended.  Bounded by LC_PIPE_MAX (the decoder)
 * and by what was received: nothing written or waiting beyond it.
 */
int
lc__sink_file_len(struct lc_sink *s, const struct lc_msg_file_len *m,
    struct lc_err *e)
{
	struct lc_sfile *f = lc__sink_table_get(s, m->id);
	int complete;

	if (f == NULL || f->kind != LC_KIND_PIPE || f->state != LC_SF_RECV ||
	    f->wf == NULL || lc_wfile_set_end(f->wf, m->length,
	    &complete) != 0)
		return lc_err_set(e, LC_ERR_PROTO, "unexpected FILE_LEN for "
		    "file %u (%llu bytes)", m->id,
		    (unsigned long long)m->length);
	f->p.size = m->length;
	if (!complete)
		return 0;
	f->written = 1;
	return lc__sink_maybe_finish(s, f);
}

/* See sink_int.h. */
int
lc__sink_pipe_wait(struct lc_sink *s, struct lc_err *e)
{
	pid_t pid;
	siginfo_t si;

	/* exited, not reaped: abort must not signal a reused pid */
	while (waitid(P_PID, (id_t)s->pipe.prog_pid, &si, WEXITED |
	    WNOWAIT) != 0 && errno == EINTR)
		;
	pthread_mutex_lock(&s->mu);
	pid = s->pipe.prog_pid;
	s->pipe.prog_pid = -1;
	pthread_mutex_unlock(&s->mu);
	if (pid <= 0)
		return 0;
	return lc_prog_wait(pid, "target program", s->pipe.prog_cmd, e);
}

/*
 * See sink_int.h.  A program that stops reading has usually exited: its
 * status says why ("exit 3") where the broken pipe does not.  It is
 * looked at, not reaped (lc__sink_pipe_wait or free does that), under mu
 * so that the pid cannot be reaped and reused meanwhile; a program that
 * still runs is given LC_PIPE_EXIT_MS to end.
 */
#define LC_PIPE_EXIT_MS 2000
#define LC_PIPE_EXIT_STEP_MS 50

void
lc__sink_pipe_why(struct lc_sink *s, struct lc_err *e)
{
	char was[LC_ERR_MSG_MAX];
	siginfo_t si;
	int r = -1;

	if (e->code != LC_ERR_PIPE)
		return;
	for (int ms = 0; ms <= LC_PIPE_EXIT_MS; ms += LC_PIPE_EXIT_STEP_MS) {
		pthread_mutex_lock(&s->mu);
		memset(&si, 0, sizeof(si));
		if (s->pipe.prog_pid > 0)
			r = waitid(P_PID, (id_t)s->pipe.prog_pid, &si,
			    WEXITED | WNOWAIT | WNOHANG);
		pthread_mutex_unlock(&s->mu);
		if (r != 0 || si.si_pid != 0)
			break;
		(void)poll(NULL, 0, LC_PIPE_EXIT_STEP_MS);
	}
	if (r != 0 || si.si_pid == 0 ||
	    (si.si_code == CLD_EXITED && si.si_status == 0))
		return;
	snprintf(was, sizeof(was), "%s", e->msg);
	if (si.si_code == CLD_EXITED)
		lc_err_set(e, LC_ERR_PROGRAM, "%.200s: target program '%.200s' "
		    "failed: exit status %d", was, s->pipe.prog_cmd,
		    si.si_status);
	else
		lc_err_set(e, LC_ERR_PROGRAM, "%.200s: target program '%.200s' "
		    "failed: killed by signal %d", was, s->pipe.prog_cmd,
		    si.si_status);
}

/* See sink_int.h. */
void
lc__sink_pipe_kill_locked(struct lc_sink *s, int sig)
{
	if (s->pipe.prog_pid > 0)
		(void)kill(s->pipe.prog_pid, sig);
}

/* See sink_int.h. */
void
lc__sink_pipe_free(struct lc_sink *s)
{
	if (s->pipe.fd >= 0)
		close(s->pipe.fd);
	if (s->pipe.prog_pid > 0) {	/* did not finish: killed above */
		while (waitpid(s->pipe.prog_pid, NULL, 0) < 0 &&
		    errno == EINTR)
			;
	}
}
