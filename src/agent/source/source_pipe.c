/*
 * Source: pipes, stdin or a -N i program's stdout as one file of kind
 * LC_KIND_PIPE.  Announced with no size; at FILE_READY the program is
 * started (or stdin duplicated) and, once every stream is up, a reader
 * thread reads it in order into the dispenser's buffers.  Its length
 * (FILE_LEN) and checksum go out at its end.
 *
 * Threads: main sets up, starts and joins the reader; the reader owns the
 * descriptor; the program's pid is under lc_source.mu so that abort can
 * signal it while it runs (and never after it is reaped).
 */
#include "source_int.h"

#include "checksum.h"
#include "log.h"
#include "program.h"
#include "thread.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * A pipe request: one FILE of kind LC_KIND_PIPE named "-" (no size:
 * FILE_LEN gives it at the end), then SRC_LISTED.  Nothing is read or
 * started before FILE_READY.
 */
int
lc__source_pipe_announce(struct lc_source *s, const struct lc_add *a,
    struct lc_err *e)
{
	struct lc_msg_src_listed done;
	struct lc_msg_file f;
	struct lc_listed *l;
	struct timespec now;
	size_t plen = strlen(a->path);
	int r;

	memset(&f, 0, offsetof(struct lc_msg_file, name));
	f.link[0] = f.user[0] = f.group[0] = '\0';
	f.id = s->list.next_id;
	f.kind = LC_KIND_PIPE;
	f.mode = 0666u & ~(uint32_t)s->port.set.umask;
	clock_gettime(CLOCK_REALTIME, &now);
	f.mtime_sec = (int64_t)now.tv_sec;
	f.mtime_nsec = (uint32_t)now.tv_nsec;
	f.uid = (uint32_t)getuid();
	f.gid = (uint32_t)getgid();
	snprintf(f.name, sizeof(f.name), "-");
	if ((l = calloc(1, sizeof(*l) + plen + 1)) == NULL)
		return -LC_ERR_NOMEM;
	l->id = f.id;
	l->fd = -1;
	l->pipe = 1;
	l->src = s;
	memcpy(l->path, a->path, plen + 1);
	if ((r = lc_msg_put_file(s->port.out, &f)) != 0) {
		lc__listed_free(l);
		return lc_err_set(e, -r, "control output");
	}
	lc__source_listed_append(s, l);
	s->list.next_id++;
	s->list.add_next++;
	memset(&done, 0, sizeof(done));
	done.files = 1;
	if ((r = lc_msg_put_src_listed(s->port.out, &done)) != 0)
		return lc_err_set(e, -r, "control output");
	return 0;
}

/*
 * Fill b from the pipe, up to a block; a slow producer's bytes go out
 * after LC_PIPE_FLUSH_MS rather than wait for a whole block.  1 at the
 * end of the pipe, 0 when b is worth sending (or the transfer is being
 * torn down), or -LC_ERR_IO with e filled.
 */
#define LC_PIPE_FLUSH_MS 250
static int
lc_pipe_fill(struct lc_source *s, struct lc_pbuf *b, struct lc_err *e)
{
	struct lc_source_pipe *rd = &s->pipe;
	struct pollfd pfd;
	ssize_t n;
	int pr;

	while (b->len < s->block && !lc_role_canceled(&s->port)) {
		pfd.fd = rd->fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		pr = poll(&pfd, 1, LC_PIPE_FLUSH_MS);
		if (pr < 0 && errno != EINTR)
			return lc_err_sys(e, LC_ERR_IO, errno, "poll %s",
			    rd->cmd != NULL ? rd->cmd : "stdin");
		if (pr == 0 && b->len > 0)
			return 0;
		if (pr <= 0)
			continue;
		n = read(rd->fd, b->data + b->len, s->block - b->len);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return rd->cmd != NULL ? lc_err_sys(e, LC_ERR_IO,
			    errno, "read the output of source program "
			    "'%.200s'", rd->cmd) : lc_err_sys(e, LC_ERR_IO,
			    errno, "read stdin");
		}
		if (n == 0)
			return 1;
		b->len += (uint32_t)n;
	}
	return 0;
}

/*
 * The reader thread: the pipe into the dispenser's buffers, in order,
 * hashed on the way (-e); at the end the program's exit status, then the
 * length (LC_EV_PIPE_EOF; FILE_LEN) and the end of the pipe in the
 * dispenser.  A failure ends the transfer (LC_EV_ERROR): FILE_LEN never
 * goes out, so the sink never completes the file.
 */
static void *
lc_pipe_reader(void *arg)
{
	struct lc_source *s = arg;
	struct lc_source_pipe *rd = &s->pipe;
	char sum[LC_CSUM_TEXT_MAX];
	struct lc_pbuf *b;
	struct lc_err e;
	uint64_t total = 0;
	siginfo_t si;
	pid_t pid;
	int r = 0, nomem;

	lc_log_set_tag("reader");
	lc_err_clear(&e);
	while (r == 0) {
		if ((b = lc_dispenser_pipe_buf(s->disp, s->port.cancel,
		    &nomem)) == NULL) {
			if (nomem) {
				lc_err_set(&e, LC_ERR_NOMEM, "out of memory "
				    "(stream buffers)");
				lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
			}
			return NULL;
		}
		r = lc_pipe_fill(s, b, &e);
		if (r < 0 || lc_role_canceled(&s->port)) {
			lc_dispenser_pipe_unused(s->disp, b);
			if (r < 0)
				lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
			return NULL;
		}
		if (b->len == 0) {
			lc_dispenser_pipe_unused(s->disp, b);
			continue;
		}
		if (rd->csum != NULL)
			lc_csum_update(rd->csum, b->data, b->len);
		total += b->len;
		lc_dispenser_pipe_push(s->disp, rd->f, b);
	}
	close(rd->fd);
	rd->fd = -1;
	if (rd->pid > 0) {
		/* exited (not reaped yet: abort must not signal a pid that
		 * could be someone else's by then) */
		while (waitid(P_PID, (id_t)rd->pid, &si, WEXITED |
		    WNOWAIT) != 0 && errno == EINTR)
			;
		pthread_mutex_lock(&s->mu);
		pid = rd->pid;
		rd->pid = -1;
		pthread_mutex_unlock(&s->mu);
		if (lc_prog_wait(pid, "source program", rd->cmd, &e) != 0) {
			lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
			return NULL;
		}
	}
	sum[0] = '\0';
	if (rd->csum != NULL)
		lc_csum_text(rd->csum, sum);
	lc_log_verbose("%s: %llu bytes", rd->cmd != NULL ? rd->cmd : "stdin",
	    (unsigned long long)total);
	lc_role_post_text(&s->port, LC_EV_PIPE_EOF, rd->id, total, sum);
	lc_dispenser_pipe_end(s->disp, rd->f);
	return NULL;
}

/* Start the reader once FILE_READY came and every stream is up. */
int
lc__source_pipe_start(struct lc_source *s, struct lc_err *e)
{
	struct lc_source_pipe *rd = &s->pipe;

	if (!rd->ready || rd->started || s->send.up < s->nstreams)
		return 0;
	if (lc_thread_start(&rd->thread, "lc-reader", lc_pipe_reader,
	    s) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "cannot start the "
		    "stream reader thread");
	rd->started = 1;
	return 0;
}

/*
 * FILE_READY for the pipe: open it (stdin, or start the program), give
 * it to the dispenser, and start reading when the streams are up.
 */
int
lc__source_pipe_ready(struct lc_source *s, struct lc_listed *l,
    struct lc_err *e)
{
	struct lc_source_pipe *rd = &s->pipe;
	/*
	 * Memory: 64 MiB of blocks (at least 4, for -B 64m), freed as the
	 * sink's low-water mark passes them (every LC_MARK_STEP, 2 MiB,
	 * of a stream it writes).  Any count >= 1 is deadlock free: the
	 * blocks out are sent, and the sink always takes the lowest one.
	 */
	uint32_t count = (uint32_t)((64u << 20) / s->block);
	int r;

	if (rd->ready)
		return lc_err_set(e, LC_ERR_PROTO, "FILE_READY: a second "
		    "stream");
	if (count < 4)
		count = 4;
	if (s->csum != LC_CSUM_NONE &&
	    (rd->csum = lc_csum_new((int)s->csum)) == NULL)
		return -LC_ERR_NOMEM;
	if (strcmp(l->path, "-") == 0 && !(s->list.adds[0].flags &
	    LC_ADD_PROGRAM)) {
		if ((rd->fd = fcntl(0, F_DUPFD_CLOEXEC, 3)) < 0)
			return lc_err_sys(e, LC_ERR_IO, errno, "stdin");
	} else {
		if ((rd->cmd = strdup(l->path)) == NULL)
			return -LC_ERR_NOMEM;
		/* a remote agent's stdin and stdout are its control
		 * channel: the program gets /dev/null */
		if ((r = lc_prog_start(rd->cmd, 1, s->port.set.local ? 0 : -1,
		    &rd->pid, &rd->fd, e)) != 0)
			return r;
		lc_log_verbose("source program '%s' started (pid %ld)",
		    rd->cmd, (long)rd->pid);
	}
	rd->id = l->id;
	if ((r = lc_dispenser_add_pipe(s->disp, l->id, count,
	    &rd->f)) != 0)
		return lc_err_set(e, -r, "dispenser");
	rd->ready = 1;
	s->files++;
	return lc__source_pipe_start(s, e);
}

int
lc__source_pipe_eof(struct lc_source *s, const struct lc_event *ev)
{
	struct lc_msg_file_sum fs;
	struct lc_msg_file_len fl;
	int r;

	memset(&fl, 0, sizeof(fl));
	fl.id = ev->a;
	fl.length = ev->b;
	if ((r = lc_msg_put_file_len(s->port.out, &fl)) != 0 ||
	    ev->text[0] == '\0')
		return r;
	memset(&fs, 0, sizeof(fs));
	fs.id = ev->a;
	snprintf(fs.checksum, sizeof(fs.checksum), "%s", ev->text);
	return lc_msg_put_file_sum(s->port.out, &fs);
}

void
lc__source_pipe_free(struct lc_source *s)
{
	struct lc_source_pipe *rd = &s->pipe;

	/* a program that outlives SIGTERM must not hold up the join */
	pthread_mutex_lock(&s->mu);
	if (rd->pid > 0)
		(void)kill(rd->pid, SIGKILL);
	pthread_mutex_unlock(&s->mu);
	if (rd->started)
		pthread_join(rd->thread, NULL);
	if (rd->fd >= 0)
		close(rd->fd);
	if (rd->pid > 0) {	/* never read to its end: stopped */
		(void)kill(rd->pid, SIGKILL);
		while (waitpid(rd->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	free(rd->cmd);
	lc_csum_free(rd->csum);
}
