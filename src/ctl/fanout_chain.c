/*
 * --also's overlapped chain (fanout.c has the rest of --also): with one
 * source copied with -r every target's copy runs at once, each in a
 * thread of its own, target k+1's fed with what target k's copy makes,
 * entry by entry (feed.h, controller_fed.c).
 */
#include "fanout_int.h"
#include "location.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The overlapped chain: every target's copy at once, each in its own
 * thread, target k+1's fed by target k's as it makes each entry (feed.h,
 * controller_fed.c), so that the copies overlap as the hops of a pipeline
 * do, file by file.  Each copy has its own signal pipe, fed from the
 * caller's; the logins take turns when one may ask on the terminal
 * (o->login_mu, lc_fanout_may_ask), else run at once; only the first copy
 * draws the progress line.
 */
struct lc_chain_run {
	const struct lc_copy_opts *o; /* the user's */
	struct lc_copy_opts oo;	      /* this copy's */
	struct lc_fanout_hop h;
	struct lc_fanout_target *t0, *t;
	size_t n;
	int sig[2];	      /* this copy's signal pipe */
	int done_fd;	      /* a byte to it when this copy ends */
	struct lc_feed *out;  /* what the next target's copy is fed */
	struct lc_feed *made; /* names this copy's sink took or made
				 (made_log), for its copy from here */
	pthread_t th;
	int running;
};

/*
 * A hop that failed: this target from this host instead (its entries
 * still published for the next target's copy, which waits on), as the
 * chain hop after hop does.
 */
static void
lc_chain_from_here(const struct lc_copy_opts *o, struct lc_chain_run *h)
{
	size_t i = (size_t)(h->t - h->t0);
	int closed = 0, ok = 0;

	(void)lc_feed_next(h->oo.feed_in, NULL, &closed, &ok);
	if (closed && !ok) {
		lc__fanout_upstream_bad(h->t0, i);
		lc__fanout_say_from_here(h->t0, i, h->n);
	} else if (lc_feed_broken(h->oo.feed_in)) {
		/* it was reading a file target i could not finish */
		snprintf(h->t->from_why, sizeof(h->t->from_why),
		    "target %zu %.150s failed a file this one was reading", i,
		    h->t0[i - 1].dest);
		lc__fanout_say_from_here(h->t0, i, h->n);
	} else {
		lc__fanout_hop_failed(o, h->t0, i, h->n);
	}
	h->oo.made_log = NULL;
	/* a file the next copy reads as it was written here is not what a
	   copy from this host writes again: that copy stops (one it has not
	   taken yet it takes as the copy from here writes it) */
	if (h->out != NULL && lc_feed_unfinished(h->out, NULL) > 0)
		lc_log_verbose("--also: target %zu %s: files it was writing "
			       "were being copied on from it; target %zu is "
			       "copied from this host",
		    i + 1, h->t->dest, i + 2);
	lc__fanout_keep_made(&h->oo, h->made, i, h->n, h->t->dest);
	lc_copy_result_free(&h->t->res);
	memset(&h->t->res, 0, sizeof(h->t->res));
	h->oo.sources = o->sources;
	h->oo.nsources = o->nsources;
	h->oo.recursive = o->recursive;
	h->oo.hop = 0;
	h->oo.feed_in = NULL;
	lc__fanout_run_one(&h->oo, h->sig[0], h->t0, h->n, h->t);
}

static void *
lc_chain_main(void *arg)
{
	struct lc_chain_run *h = arg;
	size_t i = (size_t)(h->t - h->t0);
	char b = 1;

	lc__fanout_run_one(&h->oo, h->sig[0], h->t0, h->n, h->t);
	if (h->t->r != 0 && h->t->r != -LC_ERR_CANCELED && i > 0 &&
	    !lc__fanout_target_refused(h->t))
		lc_chain_from_here(h->o, h);
	else if (i > 0)
		h->t->from = h->t0[i - 1].dest;
	if (h->t->r != 0 && h->t->r != -LC_ERR_CANCELED && i + 1 < h->n)
		lc_log_warn("target %zu of %zu %s: %s; going on with the next",
		    i + 1, h->n, h->t->dest, h->t->e.msg);
	if (h->out != NULL)
		lc_feed_close(h->out, h->t->r == 0);
	if (write(h->done_fd, &b, 1) < 0)
		lc_log_debug("--also: wake: %s", strerror(errno));
	return NULL;
}

/* Wait for every copy; pass each signal on to all of them. */
static void
lc_chain_wait(struct lc_chain_run *h, size_t n, int signal_fd, int done_fd)
{
	size_t ended = 0;

	while (ended < n) {
		struct pollfd p[2] = { { .fd = done_fd, .events = POLLIN },
			{ .fd = signal_fd, .events = POLLIN } };
		unsigned char b;

		if (poll(p, signal_fd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if ((p[0].revents & POLLIN) && read(done_fd, &b, 1) == 1)
			ended++;
		if (signal_fd >= 0 && (p[1].revents & POLLIN) &&
		    read(signal_fd, &b, 1) == 1)
			for (size_t i = 0; i < n; i++)
				if (write(h[i].sig[1], &b, 1) < 0)
					lc_log_debug("--also: signal: %s",
					    strerror(errno));
	}
	for (size_t i = 0; i < n; i++)
		if (h[i].running)
			pthread_join(h[i].th, NULL);
}

/* Copy i of the chain: its target, its sources and its feeds. */
static int
lc_chain_prepare(const struct lc_copy_opts *o, struct lc_chain_run *h, size_t i,
    size_t n, struct lc_fanout_target *t, struct lc_feed *feeds,
    pthread_mutex_t *login, int done_fd)
{
	h->o = o;
	h->oo = *o;
	h->oo.also = NULL;
	h->oo.nalso = 0;
	h->oo.also_direct = 0;
	h->oo.dest = t[i].dest;
	h->oo.login_mu = login;
	h->t0 = t;
	h->t = &t[i];
	h->n = n;
	h->done_fd = done_fd;
	h->sig[0] = h->sig[1] = -1;
	if (i > 0) {
		if (lc_copy_fanout_hop_sources(o, t[i - 1].dest, &h->h,
			t[i].from_why, sizeof(t[i].from_why)) != 0)
			return -1;
		if (!o->recursive) { /* one file: see lc_chain_one_file */
			char *dir = strdup(t[i - 1].dest);

			if (dir == NULL)
				return -1;
			free(h->h.src[0]);
			h->h.src[0] = dir;
			h->oo.recursive = 1;
		}
		h->oo.sources = (const char *const *)h->h.src;
		h->oo.nsources = h->h.n;
		h->oo.hop = 1;
		h->oo.feed_in = &feeds[i - 1];
		/* one progress line: the first copy's */
		h->oo.progress_ms = 0;
		h->oo.live_progress = 0;
	}
	if (i + 1 < n) {
		h->out = &feeds[i];
		h->oo.feed_out = h->out;
	}
	if (i > 0) { /* the first target's copy is from this host already */
		h->made = &feeds[n + i];
		h->oo.made_log = h->made;
	}
	return pipe2(h->sig, O_CLOEXEC | O_NONBLOCK);
}

/*
 * Whether a login of this run may ask on a terminal: stdin is one, or the
 * process has a controlling terminal (a ProxyCommand's ssh may ask on
 * /dev/tty).  Only then do the chain's logins take turns; from cron they
 * run at once, so that the last hop does not start its copy the others'
 * logins later (on links of equal speed it never makes that time up).
 */
static int
lc_fanout_may_ask(const struct lc_copy_opts *o)
{
	int fd;

	if (!o->batch)
		return 1;
	if ((fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
		return 0;
	close(fd);
	return 1;
}

/*
 * Run the overlapped chain; 0 when it ran (t filled: a target whose
 * copy failed is copied from this host by the caller), -1 when it could
 * not start (nothing was tried; t[i].from_why may say why).
 */
int
lc__fanout_overlap(const struct lc_copy_opts *o, int signal_fd,
    struct lc_fanout_target *t, size_t n)
{
	struct lc_chain_run *h = calloc(n, sizeof(*h));
	/* feeds[i]: target i's to i+1's copy; feeds[n + i]: made_log i
	   (from 1) */
	struct lc_feed *feeds = calloc(2 * n, sizeof(*feeds));
	pthread_mutex_t login = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_t *turns = lc_fanout_may_ask(o) ? &login : NULL;
	int done[2] = { -1, -1 }, r = -1;
	size_t nfeeds = 0, i;

	if (h == NULL || feeds == NULL ||
	    pipe2(done, O_CLOEXEC | O_NONBLOCK) != 0)
		goto out;
	for (i = 0; i < n; i++)
		h[i].sig[0] = h[i].sig[1] = -1;
	for (; nfeeds < 2 * n; nfeeds++)
		if (lc_feed_init(&feeds[nfeeds]) != 0)
			goto out;
	for (i = 0; i < n; i++)
		if (lc_chain_prepare(o, &h[i], i, n, t, feeds, turns,
			done[1]) != 0)
			goto out;
	lc_log_verbose("--also: %zu targets, a chain whose hops run at once: "
		       "this host to the first, then each target from the one "
		       "before as that one makes each file (each hop its own "
		       "SSH connections, agents and stream keys; logins %s)",
	    n,
	    turns != NULL ? "in turn: one may ask on the terminal" : "at once");
	for (i = 0; i < n; i++) {
		if (pthread_create(&h[i].th, NULL, lc_chain_main, &h[i]) != 0)
			break;
		h[i].running = 1;
		if (i > 0)
			lc_log_info("target %zu of %zu: %s, from %s (chain)",
			    i + 1, n, t[i].dest, t[i - 1].dest);
		else
			lc_log_info("target 1 of %zu: %s", n, t[0].dest);
	}
	if (i < n) {
		/* no thread for copy i: it and those after it fail */
		for (size_t j = i; j < n; j++) {
			t[j].started = 1;
			t[j].r = -LC_ERR_NOMEM;
			lc_err_set(&t[j].e, LC_ERR_NOMEM,
			    "cannot start a "
			    "thread for it");
		}
		if (i > 0)
			lc_feed_close(&feeds[i - 1], 0);
	}
	lc_chain_wait(h, i, signal_fd, done[0]);
	r = 0;
out:
	for (i = 0; h != NULL && i < n; i++) {
		lc_copy_fanout_hop_free(&h[i].h);
		if (h[i].sig[0] >= 0) {
			close(h[i].sig[0]);
			close(h[i].sig[1]);
		}
	}
	for (i = 0; i < nfeeds; i++)
		lc_feed_free(&feeds[i]);
	if (done[0] >= 0) {
		close(done[0]);
		close(done[1]);
	}
	free(feeds);
	free(h);
	return r;
}

/*
 * The overlapped chain takes one source copied with -r (a tree, or one
 * file: a directory at each target holds its copy under the same name),
 * or one file to a directory at each target (lc_chain_one_file); several
 * sources, and -O, go hop after hop (their requests would each wait for
 * the one before).
 */
/*
 * One file without -r, to a directory named as such at every target
 * (T:DIR/): target k+1's copy is then of target k's DIR/, its contents,
 * with -r, fed only that file's name, so that it can read the file as
 * target k writes it (SRC_PART; a request's root could not be: it is
 * announced with the request).
 */
static int
lc_chain_one_file(const struct lc_copy_opts *o)
{
	struct lc_location l;
	struct lc_err e;
	size_t len = strlen(o->sources[0]);

	if (o->nsources != 1 || len == 0 || o->sources[0][len - 1] == '/')
		return 0;
	for (size_t i = 0; i <= o->nalso; i++) {
		if (lc_location_parse(i == 0 ? o->dest : o->also[i - 1], &l,
			&e) != 0 ||
		    (len = strlen(l.path)) == 0 || l.path[len - 1] != '/')
			return 0;
	}
	return 1;
}

int
lc__fanout_can_overlap(const struct lc_copy_opts *o)
{
	/* -O leaves a target's own file where the source's would go: the
	   next target's copy could not know its size from the feed */
	return o->nsources == 1 && (o->recursive || lc_chain_one_file(o)) &&
	    !o->skip_existing;
}

/* After the overlapped chain: the result as lc_copy_fanout's. */
int
lc__fanout_after_overlap(struct lc_fanout_target *t, size_t n, struct lc_err *e)
{
	/* every copy ran: each keeps its own result, a signal's too */
	for (size_t i = 0; i < n; i++)
		if (t[i].r == -LC_ERR_CANCELED) {
			*e = t[i].e;
			return -LC_ERR_CANCELED;
		}
	return lc__fanout_incomplete(t, n, e);
}
