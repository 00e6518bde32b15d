/*
 * Source role: lists files for the controller, then has their blocks
 * streamed.  This file is the role itself: SRC_ADD (listing), resume
 * checks (FILE_PREFIX and its job), CONNECT (starting the senders),
 * FILE_READY (files to the dispenser), ACK (releasing confirmed blocks),
 * STREAM_LOST (breaking off a sender, which reconnects and resends), the
 * senders' events and the tick.
 *
 * Threads: one sender per data stream (sender.c: dial, send, reconnect,
 * resend), and one job thread that hashes partial files for resumes.
 * Senders and jobs report to the host's main thread through
 * lc_role_post(); they never touch the control channel.  Which thread
 * owns which field, and which lock guards it, is in source_int.h.
 *
 * Descriptors: a listed file's descriptor is its lc_listed's until
 * FILE_READY hands it to the dispenser; connections are the senders'.
 */
#include "source_int.h"

#include "lanecp/checksum.h"
#include "lanecp/log.h"
#include "lanecp/path.h"
#include "lanecp/program.h"
#include "lanecp/secmem.h"
#include "lanecp/testhook.h"
#include "lanecp/util.h"
#include "lanecp/walk.h"

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <pwd.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

struct lc_listed {
	struct lc_listed *next;
	uint32_t id;
	int fd;			/* -1 until it is needed (lc_source_open) */
	dev_t dev;		/* what was listed: opened later, it must be */
	ino_t ino;		/* the same file */
	int follow;		/* the path may end in a symlink (-L, root) */
	char *failed;		/* why it could not be opened, or NULL */
	uint64_t size;
	struct lc_csum *csum;	/* seeded by a resume check, else NULL */
	uint64_t csum_upto;	/* csum covers [0, csum_upto) */
	uint8_t *prefix;	/* resume check input: hashes, owned */
	uint64_t prefix_len;
	uint32_t chunk;
	uint32_t nchunks;
	struct lc_msg_prefix_match *verdict;	/* its result, owned */
	int checking;		/* a resume check job has it (main thread) */
	int stream;		/* stdin or a program: path is the command
				   ("-" for stdin) */
	struct lc_source *src;
	char path[];
};

static int
lc_source_new(const struct lc_role_port *port, void **out)
{
	pthread_condattr_t ca;
	struct lc_source *s;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -LC_ERR_NOMEM;
	s->port = *port;
	pthread_mutex_init(&s->mu, NULL);
	/* the senders' back-off waits on it: immune to clock steps */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	atomic_init(&s->bytes_sent, 0);
	atomic_init(&s->wire_sent, 0);
	s->next_id = 1;
	s->rd.fd = -1;
	s->rd.pid = -1;
	for (uint32_t i = 0; i < LC_MAX_STREAMS; i++) {
		s->senders[i].hs_fd = -1;
		atomic_init(&s->senders[i].stop, false);
	}
	if ((s->jobs = lc_jobq_new("lc-src-jobs")) == NULL) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
		free(s);
		return -LC_ERR_NOMEM;
	}
	*out = s;
	return 0;
}

/* ---- listing ---- */

static void lc_listed_free(struct lc_listed *);

/*
 * Listing is streamed: SRC_ADD only queues a request; the requests are
 * walked in order (walk.h) and each entry is announced as a FILE as far
 * as the controller's credit reaches (SRC_CREDIT: ids below it), so the
 * files in flight, each holding an open descriptor here until its
 * FILE_READY, stay few whatever the tree.  A request ends with
 * SRC_LISTED.  An entry that cannot be read is reported (FILE_FAIL) and
 * left out; special files are left out with a warning.
 */
/*
 * --owner: the name of a user or group id ("" when it has none), from the
 * last one looked up when it is the same (a tree's files mostly share
 * them; each lookup may read /etc/passwd).
 */
static const char *
lc_source_idname(struct lc_idname *c, uint32_t id, int group)
{
	char buf[4096];
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;
	const char *n = NULL;

	if (c->valid && c->id == id)
		return c->name;
	if (!group && getpwuid_r((uid_t)id, &pw, buf, sizeof(buf),
	    &pwp) == 0 && pwp != NULL)
		n = pwp->pw_name;
	else if (group && getgrgid_r((gid_t)id, &gr, buf, sizeof(buf),
	    &grp) == 0 && grp != NULL)
		n = grp->gr_name;
	snprintf(c->name, sizeof(c->name), "%s",
	    n != NULL && strlen(n) < sizeof(c->name) ? n : "");
	c->id = id;
	c->valid = 1;
	return c->name;
}

/* l joins the listed entries, which wait for their FILE_READY. */
static void
lc_source_listed_append(struct lc_source *s, struct lc_listed *l)
{
	if (s->listed_tail != NULL)
		s->listed_tail->next = l;
	else
		s->listed = l;
	s->listed_tail = l;
}

static int
lc_source_announce(struct lc_source *s, const struct lc_walk_entry *ent,
    struct lc_err *e)
{
	struct lc_msg_file f;
	struct lc_listed *l = NULL;
	size_t plen;
	int r;

	memset(&f, 0, offsetof(struct lc_msg_file, name));
	f.link[0] = f.user[0] = f.group[0] = '\0';
	f.id = s->next_id;
	f.kind = (uint8_t)ent->kind;
	f.mode = (uint32_t)ent->st.st_mode & 07777u;
	f.size = ent->kind == LC_KIND_REG ? (uint64_t)ent->st.st_size : 0;
	f.mtime_sec = (int64_t)ent->st.st_mtim.tv_sec;
	f.mtime_nsec = (uint32_t)ent->st.st_mtim.tv_nsec;
	snprintf(f.name, sizeof(f.name), "%s", ent->name);
	if (ent->link != NULL)
		snprintf(f.link, sizeof(f.link), "%s", ent->link);
	f.uid = (uint32_t)ent->st.st_uid;
	f.gid = (uint32_t)ent->st.st_gid;
	if (s->adds[s->add_next].flags & LC_ADD_NAMES) {
		snprintf(f.user, sizeof(f.user), "%s",
		    lc_source_idname(&s->last_user, f.uid, 0));
		snprintf(f.group, sizeof(f.group), "%s",
		    lc_source_idname(&s->last_group, f.gid, 1));
	}
	if (ent->kind == LC_KIND_REG) {
		/* its path as the user would write it: the request's, then
		 * the name below the root (or below "dir/") */
		const struct lc_add *a = &s->adds[s->add_next];
		const char *rest = ent->name;
		if (!(a->flags & LC_ADD_CONTENTS))
			rest = strchr(ent->name, '/') != NULL ?
			    strchr(ent->name, '/') : "";
		plen = strlen(a->path) + strlen(rest);
		if ((l = calloc(1, sizeof(*l) + plen + 1)) == NULL) {
			if (ent->fd >= 0)
				close(ent->fd);
			return -LC_ERR_NOMEM;
		}
		l->id = f.id;
		l->fd = ent->fd;
		l->dev = ent->st.st_dev;
		l->ino = ent->st.st_ino;
		l->follow = (a->flags & LC_ADD_FOLLOW) || rest[0] == '\0';
		l->size = f.size;
		l->src = s;
		snprintf(l->path, plen + 1, "%s%s", a->path, rest);
	}
	if ((r = lc_msg_put_file(s->port.out, &f)) != 0) {
		if (l != NULL)
			lc_listed_free(l);
		return lc_err_set(e, -r, "control output");
	}
	if (l != NULL)
		lc_source_listed_append(s, l);
	s->next_id++;
	s->add_files++;
	s->add_bytes += f.size;
	return 0;
}

/*
 * A stream request: one FILE of kind LC_KIND_STREAM named "-" (no size:
 * FILE_LEN gives it at the end), then SRC_LISTED.  Nothing is read or
 * started before FILE_READY.
 */
static int
lc_source_announce_stream(struct lc_source *s, const struct lc_add *a,
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
	f.id = s->next_id;
	f.kind = LC_KIND_STREAM;
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
	l->stream = 1;
	l->src = s;
	memcpy(l->path, a->path, plen + 1);
	if ((r = lc_msg_put_file(s->port.out, &f)) != 0) {
		lc_listed_free(l);
		return lc_err_set(e, -r, "control output");
	}
	lc_source_listed_append(s, l);
	s->next_id++;
	s->add_next++;
	memset(&done, 0, sizeof(done));
	done.files = 1;
	if ((r = lc_msg_put_src_listed(s->port.out, &done)) != 0)
		return lc_err_set(e, -r, "control output");
	return 0;
}

/*
 * List as far as the credit reaches.  The walk runs one entry ahead of
 * the credit, so that the end of a request is seen (and SRC_LISTED sent)
 * as soon as its last entry is announced.
 */
static int
lc_source_list(struct lc_source *s, struct lc_err *e)
{
	struct lc_msg_src_listed done;
	struct lc_msg_file_fail fail;
	struct lc_walk_entry ent;
	const struct lc_add *a;
	int r;

	for (;;) {
		if (s->pending) {
			if (s->next_id >= s->credit)
				return 0;
			memset(&ent, 0, sizeof(ent));
			ent.kind = s->pend.kind;
			ent.fd = s->pend.fd;
			ent.st = s->pend.st;
			ent.name = s->pend.name;
			ent.link = s->pend.link[0] != '\0' ? s->pend.link : NULL;
			s->pending = 0;
			if ((r = lc_source_announce(s, &ent, e)) != 0)
				return r;
		}
		if (s->walk == NULL) {
			if (s->add_next >= s->nadds)
				return 0;
			a = &s->adds[s->add_next];
			if (a->flags & (LC_ADD_STDIN | LC_ADD_PROGRAM)) {
				if (s->next_id >= s->credit)
					return 0;
				if ((r = lc_source_announce_stream(s, a,
				    e)) != 0)
					return r;
				continue;
			}
			if ((r = lc_walk_open(s->port.conf, a->path,
			    LC_WALK_NOOPEN |
			    ((a->flags & LC_ADD_RECURSIVE) ? LC_WALK_RECURSIVE :
			    0) | ((a->flags & LC_ADD_FOLLOW) ? LC_WALK_FOLLOW :
			    0) | ((a->flags & LC_ADD_CONTENTS) ?
			    LC_WALK_CONTENTS : 0), &s->walk, e)) != 0)
				return r;
			s->add_files = 0;
			s->add_bytes = 0;
		}
		r = lc_walk_next(s->walk, &ent, e);
		if (r < 0)
			return r;
		if (r == LC_WALK_ENTRY) {
			s->pend.kind = ent.kind;
			s->pend.fd = ent.fd;
			s->pend.st = ent.st;
			snprintf(s->pend.name, sizeof(s->pend.name), "%s",
			    ent.name);
			snprintf(s->pend.link, sizeof(s->pend.link), "%s",
			    ent.link != NULL ? ent.link : "");
			s->pending = 1;
		} else if (r == LC_WALK_SKIP) {
			lc_log_warn("skipping %s", e->msg);
			lc_err_clear(e);
		} else if (r == LC_WALK_FAIL) {
			memset(&fail, 0, sizeof(fail));
			snprintf(fail.name, sizeof(fail.name), "%s", ent.name);
			snprintf(fail.msg, sizeof(fail.msg), "%s", e->msg);
			lc_err_clear(e);
			if ((r = lc_msg_put_file_fail(s->port.out,
			    &fail)) != 0)
				return lc_err_set(e, -r, "control output");
		} else {	/* this request is listed */
			lc_walk_free(s->walk);
			s->walk = NULL;
			memset(&done, 0, sizeof(done));
			done.files = s->add_files;
			done.bytes = s->add_bytes;
			lc_log_verbose("source %s: %u entries, %llu bytes",
			    s->adds[s->add_next].path, done.files,
			    (unsigned long long)done.bytes);
			s->add_next++;
			if ((r = lc_msg_put_src_listed(s->port.out,
			    &done)) != 0)
				return lc_err_set(e, -r, "control output");
		}
	}
}

static int
lc_source_add(struct lc_source *s, const struct lc_msg_src_add *m,
    struct lc_err *e)
{
	char path[LC_PATH_MAX];
	struct lc_add *a;
	size_t n;
	int r;

	if (m->flags & (LC_ADD_STDIN | LC_ADD_PROGRAM)) {
		if ((m->flags & ~(LC_ADD_STDIN | LC_ADD_PROGRAM)) != 0 ||
		    (m->flags & LC_ADD_STDIN && m->flags & LC_ADD_PROGRAM) ||
		    s->nadds != 0 || (m->flags & LC_ADD_STDIN &&
		    strcmp(m->path, "-") != 0))
			return lc_err_set(e, LC_ERR_PROTO, "SRC_ADD: a stream "
			    "must be the only request, without other flags");
		if ((m->flags & LC_ADD_STDIN) && !s->port.set.local)
			return lc_err_set(e, LC_ERR_DENIED, "'-' (stdin) is a "
			    "local source only: a remote agent's stdin is its "
			    "control channel");
		if ((m->flags & LC_ADD_PROGRAM) && s->port.conf->root_fd >= 0)
			return lc_err_set(e, LC_ERR_DENIED, "this agent is "
			    "restricted (--restrict %s): it runs no -N "
			    "programs", s->port.conf->root);
	} else if (s->nadds != 0 && (s->adds[0].flags &
	    (LC_ADD_STDIN | LC_ADD_PROGRAM))) {
		return lc_err_set(e, LC_ERR_PROTO, "SRC_ADD: a stream must be "
		    "the only request");
	}
	if (s->nadds == s->adds_cap) {
		size_t ncap = s->adds_cap ? 2 * s->adds_cap : 8;
		if (ncap > 65536 || (a = realloc(s->adds,
		    ncap * sizeof(*a))) == NULL)
			return lc_err_set(e, LC_ERR_NOMEM, "too many sources");
		s->adds = a;
		s->adds_cap = ncap;
	}
	a = &s->adds[s->nadds];
	a->flags = m->flags;
	if ((r = lc_confine_user_path(s->port.conf, m->path,
	    s->port.set.tilde, path, sizeof(path), e)) != 0)
		return r;
	/* a directory's contents ("." or "~" as well as "dir/"): the names
	   below it are appended to "path/" */
	n = strlen(path);
	if ((m->flags & LC_ADD_CONTENTS) && n > 0 && path[n - 1] != '/') {
		if (n + 1 >= sizeof(path))
			return lc_err_set(e, LC_ERR_IO, "%.64s...: name too "
			    "long", path);
		path[n] = '/';
		path[n + 1] = '\0';
	}
	if ((a->path = strdup(path)) == NULL)
		return -LC_ERR_NOMEM;
	s->nadds++;
	return lc_source_list(s, e);
}

/* SRC_CREDIT: the controller lets us announce ids below upto. */
static int
lc_source_credit(struct lc_source *s, const struct lc_msg_src_credit *m,
    struct lc_err *e)
{
	if (m->upto < s->credit)
		return lc_err_set(e, LC_ERR_PROTO, "SRC_CREDIT went back "
		    "(%u after %u)", m->upto, s->credit);
	s->credit = m->upto;
	return lc_source_list(s, e);
}

static struct lc_listed *
lc_source_listed(struct lc_source *s, uint32_t id, struct lc_listed ***pp)
{
	struct lc_listed **p;

	for (p = &s->listed; *p != NULL && (*p)->id != id; p = &(*p)->next)
		;
	if (pp != NULL)
		*pp = p;
	return *p;
}

/*
 * Open a listed file when its data is wanted (the listing only stat'ed
 * it, so a tree costs no descriptor per file in flight and an up-to-date
 * file is never opened).  It must still be the file that was listed.
 */
static int
lc_source_open(struct lc_source *s, struct lc_listed *l, struct lc_err *e)
{
	struct stat st;
	int fd, r;

	if (l->fd >= 0)
		return 0;
	if (l->failed != NULL)
		return lc_err_set(e, LC_ERR_IO, "%s", l->failed);
	if ((r = lc_confine_open(s->port.conf, -1, l->path, O_RDONLY |
	    O_NOCTTY | O_NONBLOCK | (l->follow ? 0 : O_NOFOLLOW), 0, &fd,
	    e)) != 0)
		return r;
	if (fstat(fd, &st) != 0 || lc_set_nonblock(fd, 0) != 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "%s", l->path);
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode) || st.st_dev != l->dev ||
	    st.st_ino != l->ino) {
		close(fd);
		return lc_err_set(e, LC_ERR_IO, "%s: replaced during the "
		    "copy", l->path);
	}
	l->fd = fd;
	return 0;
}

/* Take l (at *pp) out of the listed queue. */
static void
lc_source_unlink(struct lc_source *s, struct lc_listed **pp,
    struct lc_listed *l)
{
	struct lc_listed *prev = NULL;

	*pp = l->next;
	if (s->listed_tail == l) {
		/* the new tail is the one before l, if any */
		for (prev = s->listed; prev != NULL && prev->next != NULL;
		    prev = prev->next)
			;
		s->listed_tail = prev;
	}
}

/* FILE_SKIP: the sink leaves this file as it is; nothing to send. */
static int
lc_source_skip(struct lc_source *s, const struct lc_msg_file_skip *m,
    struct lc_err *e)
{
	struct lc_listed **pp, *l;

	if ((l = lc_source_listed(s, m->id, &pp)) == NULL || l->checking)
		return lc_err_set(e, LC_ERR_PROTO, "FILE_SKIP for unknown "
		    "file %u", m->id);
	lc_source_unlink(s, pp, l);
	lc_listed_free(l);
	return 0;
}

static void
lc_listed_free(struct lc_listed *l)
{
	if (l->fd >= 0)
		close(l->fd);
	lc_csum_free(l->csum);
	free(l->prefix);
	free(l->verdict);
	free(l->failed);
	free(l);
}

/*
 * One chunk of a resume check: it differs (1) or not (0).  Its bytes go
 * to the file checksum, except a chunk that would start a run past the
 * bound (*cut set): the checksum must cover exactly [0, match).
 */
static int
lc_source_check_chunk(struct lc_listed *l, uint32_t i, int may_cut,
    int *cut, struct lc_err *e)
{
	uint64_t off = (uint64_t)i * l->chunk;
	uint64_t len = l->prefix_len - off < l->chunk ?
	    l->prefix_len - off : l->chunk;
	uint8_t h[LC_PREFIX_HASH_LEN];
	struct lc_csum *save = NULL;
	int differ, r;

	*cut = 0;
	if (may_cut && l->csum != NULL && (save = lc_csum_dup(l->csum)) ==
	    NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	if ((r = lc_prefix_hash(l->fd, off, len, h, l->csum, l->path,
	    e)) != 0) {
		lc_csum_free(save);
		return r;
	}
	differ = CRYPTO_memcmp(h, l->prefix + (size_t)i * LC_PREFIX_HASH_LEN,
	    sizeof(h)) != 0;
	if (differ && may_cut) {
		lc_csum_free(l->csum);
		l->csum = save;
		save = NULL;
		*cut = 1;
	}
	lc_csum_free(save);
	return differ;
}

/*
 * Resume check (job thread): compare the sink's chunk hashes of its
 * partial file with ours.  Runs of differing chunks are sent again; past
 * LC_PREFIX_MAX_RUNS of them the partial file is cut at the next one.
 * The file checksum (-e) is fed our bytes up to the cut.
 */
static void
lc_source_prefix_job(void *arg)
{
	struct lc_listed *l = arg;
	struct lc_source *s = l->src;
	struct lc_msg_prefix_match *v = l->verdict;
	uint32_t max = lc_testhook_max_runs(LC_PREFIX_MAX_RUNS);
	int differ, prev = 0, cut;
	struct lc_err e;

	lc_err_clear(&e);
	if (s->csum != LC_CSUM_NONE && (l->csum = lc_csum_new((int)s->csum)) ==
	    NULL) {
		lc_err_set(&e, LC_ERR_NOMEM, "out of memory");
		lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
		return;
	}
	v->match = l->prefix_len;
	for (uint32_t i = 0; i < l->nchunks; i++) {
		if (lc_role_canceled(&s->port))
			return;
		differ = lc_source_check_chunk(l, i, !prev && v->n == max,
		    &cut, &e);
		if (differ < 0) {
			lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
			return;
		}
		if (cut) {
			v->match = (uint64_t)i * l->chunk;
			break;
		}
		if (differ && prev)
			v->runs[v->n - 1].count++;
		else if (differ)
			v->runs[v->n++] = (struct lc_chunk_run){ i, 1 };
		prev = differ;
	}
	l->csum_upto = l->csum != NULL ? v->match : 0;
	lc_role_post(&s->port, LC_EV_PREFIX_DONE, l->id, 0, NULL);
}

static int
lc_source_prefix(struct lc_source *s, const struct lc_msg_file_prefix *m,
    struct lc_err *e)
{
	struct lc_listed *l = lc_source_listed(s, m->id, NULL);
	size_t n = (size_t)m->n * LC_PREFIX_HASH_LEN;
	int r;

	if (l == NULL || l->verdict != NULL || l->stream)
		return lc_err_set(e, LC_ERR_PROTO, "FILE_PREFIX for unknown "
		    "file %u", m->id);
	if (m->length > l->size)
		return lc_err_set(e, LC_ERR_PROTO, "FILE_PREFIX of %llu bytes "
		    "for %s of %llu", (unsigned long long)m->length, l->path,
		    (unsigned long long)l->size);
	if ((l->verdict = calloc(1, sizeof(*l->verdict))) == NULL)
		return -LC_ERR_NOMEM;
	l->verdict->id = m->id;
	if (lc_source_open(s, l, e) != 0) {
		/* nothing matches; FILE_READY will abort it */
		if (l->failed == NULL && (l->failed = strdup(e->msg)) == NULL)
			return -LC_ERR_NOMEM;
		lc_err_clear(e);
		return lc_msg_put_prefix_match(s->port.out, l->verdict);
	}
	if ((l->prefix = malloc(n > 0 ? n : 1)) == NULL)
		return -LC_ERR_NOMEM;
	memcpy(l->prefix, m->hashes, n);
	l->prefix_len = m->length;
	l->chunk = m->chunk;
	l->nchunks = m->n;
	if ((r = lc_jobq_push(s->jobs, lc_source_prefix_job, l)) != 0)
		return r;
	l->checking = 1;	/* until LC_EV_PREFIX_DONE: l is the job's */
	return 0;
}

/* ---- streams: stdin and -N i programs ---- */

/*
 * Fill b from the stream, up to a block; a slow producer's bytes go out
 * after LC_READER_FLUSH_MS rather than wait for a whole block.  1 at the
 * end of the stream, 0 when b is worth sending (or the transfer is being
 * torn down), or -LC_ERR_IO with e filled.
 */
#define LC_READER_FLUSH_MS 250
static int
lc_reader_fill(struct lc_source *s, struct lc_pbuf *b, struct lc_err *e)
{
	struct lc_reader *rd = &s->rd;
	struct pollfd pfd;
	ssize_t n;
	int pr;

	while (b->len < s->block && !lc_role_canceled(&s->port)) {
		pfd.fd = rd->fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		pr = poll(&pfd, 1, LC_READER_FLUSH_MS);
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
 * The reader thread: the stream into the dispenser's buffers, in order,
 * hashed on the way (-e); at the end the program's exit status, then the
 * length (LC_EV_STREAM_EOF; FILE_LEN) and the end of the stream in the
 * dispenser.  A failure ends the transfer (LC_EV_ERROR): FILE_LEN never
 * goes out, so the sink never completes the file.
 */
static void *
lc_source_reader(void *arg)
{
	struct lc_source *s = arg;
	struct lc_reader *rd = &s->rd;
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
		if ((b = lc_dispenser_stream_buf(s->disp, s->port.cancel,
		    &nomem)) == NULL) {
			if (nomem) {
				lc_err_set(&e, LC_ERR_NOMEM, "out of memory "
				    "(stream buffers)");
				lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
			}
			return NULL;
		}
		r = lc_reader_fill(s, b, &e);
		if (r < 0 || lc_role_canceled(&s->port)) {
			lc_dispenser_stream_unused(s->disp, b);
			if (r < 0)
				lc_role_post(&s->port, LC_EV_ERROR, 0, 0, &e);
			return NULL;
		}
		if (b->len == 0) {
			lc_dispenser_stream_unused(s->disp, b);
			continue;
		}
		if (rd->csum != NULL)
			lc_csum_update(rd->csum, b->data, b->len);
		total += b->len;
		lc_dispenser_stream_push(s->disp, rd->f, b);
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
	lc_role_post_text(&s->port, LC_EV_STREAM_EOF, rd->id, total, sum);
	lc_dispenser_stream_end(s->disp, rd->f);
	return NULL;
}

/* Start the reader once FILE_READY came and every stream is up. */
static int
lc_source_stream_start(struct lc_source *s, struct lc_err *e)
{
	struct lc_reader *rd = &s->rd;

	if (!rd->ready || rd->started || s->up < s->nstreams)
		return 0;
	if (lc_thread_start(&rd->thread, "lc-reader", lc_source_reader,
	    s) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "cannot start the "
		    "stream reader thread");
	rd->started = 1;
	return 0;
}

/*
 * FILE_READY for the stream: open it (stdin, or start the program), give
 * it to the dispenser, and start reading when the streams are up.
 */
static int
lc_source_stream_ready(struct lc_source *s, struct lc_listed *l,
    struct lc_err *e)
{
	struct lc_reader *rd = &s->rd;
	/*
	 * Memory: 64 MiB of blocks (at least 4, for -B 64m), freed as the
	 * sink's low-water mark passes them (every LC_STREAM_ACK_STEP, 8 MiB,
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
	if (strcmp(l->path, "-") == 0 && !(s->adds[0].flags &
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
	if ((r = lc_dispenser_add_stream(s->disp, l->id, count,
	    &rd->f)) != 0)
		return lc_err_set(e, -r, "dispenser");
	rd->ready = 1;
	s->files++;
	return lc_source_stream_start(s, e);
}

static int
lc_source_ready(struct lc_source *s, const struct lc_msg_file_ready *m,
    struct lc_err *e)
{
	struct lc_msg_file_sum fs;
	struct lc_listed **pp, *l;
	struct lc_span spans[LC_PREFIX_MAX_RUNS];
	struct lc_csum *csum = NULL;
	char sum[LC_CSUM_TEXT_MAX];
	uint32_t nspans;
	int r;

	if ((l = lc_source_listed(s, m->id, &pp)) == NULL)
		return lc_err_set(e, LC_ERR_PROTO,
		    "FILE_READY for unknown file %u", m->id);
	if (l->checking)	/* the job still reads l: freeing it here
				   was a use after free (found by fuzz_agent) */
		return lc_err_set(e, LC_ERR_PROTO, "FILE_READY for file %u "
		    "during its resume check", m->id);
	if (m->start > l->size)
		return lc_err_set(e, LC_ERR_PROTO,
		    "FILE_READY start %llu beyond size of %s",
		    (unsigned long long)m->start, l->path);
	if (s->disp == NULL)
		return lc_err_set(e, LC_ERR_PROTO, "FILE_READY before CONNECT");
	if (l->stream) {
		lc_source_unlink(s, pp, l);
		r = lc_source_stream_ready(s, l, e);
		lc_listed_free(l);
		return r;
	}
	if (lc_source_open(s, l, e) != 0) {
		/* this one is reported and left out; the rest goes on */
		struct lc_msg_file_abort ab;
		memset(&ab, 0, sizeof(ab));
		ab.id = m->id;
		snprintf(ab.msg, sizeof(ab.msg), "%s", e->msg);
		lc_err_clear(e);
		lc_source_unlink(s, pp, l);
		lc_listed_free(l);
		return lc_msg_put_file_abort(s->port.out, &ab);
	}
	/* the runs of the resume check come first (the sink asks for them
	   with a start at the cut) */
	if (l->verdict != NULL && l->verdict->n > 0 &&
	    m->start != l->verdict->match)
		return lc_err_set(e, LC_ERR_PROTO, "FILE_READY for file %u "
		    "from byte %llu, not %llu after its resume check", m->id,
		    (unsigned long long)m->start,
		    (unsigned long long)l->verdict->match);
	nspans = l->verdict != NULL ? l->verdict->n : 0;
	if (nspans > 0)
		(void)lc_prefix_match_spans(l->verdict, l->prefix_len,
		    l->chunk, spans);
	if (s->csum != LC_CSUM_NONE) {
		if (l->csum != NULL && l->csum_upto == m->start) {
			csum = l->csum;
			l->csum = NULL;
		} else if ((csum = lc_csum_new((int)s->csum)) == NULL) {
			return -LC_ERR_NOMEM;
		} else if (m->start > 0 && (r = lc_csum_fd(csum, l->fd,
		    m->start, l->path, e)) != 0) {
			lc_csum_free(csum);
			return r;
		}
	}
	lc_source_unlink(s, pp, l);
	r = lc_dispenser_add_spans(s->disp, l->id, l->fd, spans, nspans,
	    m->start, l->size, csum, sum);
	l->fd = -1;	/* the dispenser has it now */
	lc_listed_free(l);
	if (r != 0)
		return lc_err_set(e, -r, "dispenser");
	s->files++;
	if (sum[0] != '\0') {	/* nothing left to send: sum known now */
		memset(&fs, 0, sizeof(fs));
		fs.id = m->id;
		snprintf(fs.checksum, sizeof(fs.checksum), "%s", sum);
		return lc_msg_put_file_sum(s->port.out, &fs);
	}
	return 0;
}

/*
 * Reverse: a listening socket per stream for the sink (or the controller's
 * relay) to dial in, and CONNECTED with their ports at once (the streams
 * come up only after the controller has passed them on).
 */
static int
lc_source_listen(struct lc_source *s, struct lc_err *e)
{
	struct lc_msg_connected c;
	int r;

	memset(&c, 0, sizeof(c));
	for (uint32_t i = 0; i < s->nstreams; i++) {
		struct lc_sender *sn = &s->senders[i];
		if ((r = lc_sock_listen(s->window,
		    !!(s->flags & LC_XFER_LOOPBACK), &sn->listen_fd,
		    &s->ports[i], e)) != 0)
			return r;
		s->nlisten = i + 1;
		c.ports[i] = s->ports[i];
	}
	c.streams = s->nstreams;
	c.nports = s->nstreams;
	c.window = s->window != 0 ? lc_sock_sndbuf(s->senders[0].listen_fd) :
	    0;
	lc_log_debug("reverse: listening on %u ports", s->nstreams);
	return lc_msg_put_connected(s->port.out, &c);
}

static int
lc_source_connect(struct lc_source *s, const struct lc_msg_connect *m,
    struct lc_err *e)
{
	char name[32];
	int r;

	if (s->connect_seen)
		return lc_err_set(e, LC_ERR_PROTO, "second CONNECT");
	s->connect_seen = 1;
	memcpy(s->addr, m->addr, sizeof(s->addr));
	if (!(m->flags & LC_XFER_REVERSE) && (r = lc_role_dial_check(&s->port,
	    s->addr, sizeof(s->addr), e)) != 0)
		return r;
	s->nstreams = m->streams;
	s->window = m->window;
	s->block = m->block;
	s->flags = m->flags;
	s->csum = m->csum;
	s->zlevel = m->zlevel;
	memcpy(s->ports, m->ports, sizeof(s->ports));
	if (s->key == NULL && (s->key = lc_secmem_alloc(LC_KEY_LEN)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	memcpy(s->key, m->key, LC_KEY_LEN);
	lc_rate_init(&s->rate, m->rate);
	s->rate_init = 1;
	if ((s->flags & LC_XFER_ENCRYPT) &&
	    (r = lc_tls_new(0, s->key, &s->tls, e)) != 0)
		return r;
	if ((s->disp = lc_dispenser_new(s->block)) == NULL)
		return -LC_ERR_NOMEM;
	if ((s->flags & LC_XFER_REVERSE) && (r = lc_source_listen(s, e)) != 0)
		return r;
	for (uint32_t i = 0; i < s->nstreams; i++) {
		struct lc_sender *sn = &s->senders[i];
		sn->src = s;
		sn->idx = i;
		snprintf(name, sizeof(name), "lc-send-%u", i);
		if ((r = lc_thread_start(&sn->thread, name, lc_sender_main,
		    sn)) != 0)
			return lc_err_set(e, LC_ERR_INTERNAL,
			    "cannot start sender thread");
		sn->started = 1;
	}
	return 0;
}

/* Release every kept block before the sink's watermark. */
static void
lc_source_ack(struct lc_source *s, const struct lc_msg_ack *m)
{
	pthread_mutex_lock(&s->mu);
	for (uint32_t i = 0; i < s->nstreams; i++) {
		struct lc_sent *l = &s->senders[i].sent;
		size_t keep = 0;
		for (size_t j = 0; j < l->n; j++) {
			struct lc_block *b = &l->v[j];
			if (lc_block_cmp(b->file_id, b->offset + b->len,
			    m->file, m->written) <= 0)
				lc_dispenser_release(s->disp, b);
			else
				l->v[keep++] = *b;
		}
		l->n = keep;
	}
	pthread_mutex_unlock(&s->mu);
}

/*
 * SRC_DONE once the controller has listed everything (SRC_NOMORE) and
 * every sender has sent END.
 */
static int
lc_source_maybe_done(struct lc_source *s)
{
	struct lc_msg_xfer_done d;

	if (s->done_sent || !s->nomore || s->finished < s->nstreams)
		return 0;
	s->done_sent = 1;
	memset(&d, 0, sizeof(d));
	/* wire first: the senders add to bytes_sent first, so wire <= bytes */
	d.wire = atomic_load(&s->wire_sent);
	d.bytes = atomic_load(&s->bytes_sent);
	d.files = s->files;
	lc_log_debug("all streams done: %llu bytes",
	    (unsigned long long)d.bytes);
	return lc_msg_put_xfer_done(s->port.out, LC_MSG_SRC_DONE, &d);
}

/*
 * The sink gave up on a stream (it broke or stalled) and says what it got
 * last: break off the connection; the sender reconnects and resends.
 */
static int
lc_source_lost(struct lc_source *s, const struct lc_msg_stream_lost *m,
    struct lc_err *e)
{
	struct lc_sender *sn;

	if (m->stream >= s->nstreams)
		return lc_err_set(e, LC_ERR_PROTO, "STREAM_LOST for stream "
		    "%u of %u", m->stream, s->nstreams);
	sn = &s->senders[m->stream];
	lc_log_debug("data stream %u lost (%s)", m->stream, m->reason);
	pthread_mutex_lock(&s->mu);
	sn->lost = 1;
	sn->has_last = m->has_last;
	sn->last_file = m->last_file;
	sn->last_off = m->last_off;
	atomic_store(&sn->stop, true);
	lc_stream_shutdown(sn->st);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	lc_dispenser_kick(s->disp);
	return 0;
}

static int
lc_source_handle(void *role, uint8_t type, const uint8_t *p,
    size_t n, struct lc_err *e)
{
	struct lc_source *s = role;
	union {
		struct lc_msg_src_add add;
		struct lc_msg_file_ready ready;
		struct lc_msg_connect conn;
		struct lc_msg_file_prefix prefix;
		struct lc_msg_stream_lost lost;
		struct lc_msg_ack ack;
		struct lc_msg_src_credit credit;
		struct lc_msg_file_skip skip;
	} m;
	int r;

	switch (type) {
	case LC_MSG_SRC_ADD:
		if (lc_msg_get_src_add(p, n, &m.add) != 0)
			break;
		return lc_source_add(s, &m.add, e);
	case LC_MSG_FILE_READY:
		if (lc_msg_get_file_ready(p, n, &m.ready) != 0)
			break;
		return lc_source_ready(s, &m.ready, e);
	case LC_MSG_SRC_CREDIT:
		if (lc_msg_get_src_credit(p, n, &m.credit) != 0)
			break;
		return lc_source_credit(s, &m.credit, e);
	case LC_MSG_FILE_SKIP:
		if (lc_msg_get_file_skip(p, n, &m.skip) != 0)
			break;
		return lc_source_skip(s, &m.skip, e);
	case LC_MSG_CONNECT:
		if (lc_msg_get_connect(p, n, &m.conn) != 0)
			break;
		r = lc_source_connect(s, &m.conn, e);
		OPENSSL_cleanse(&m.conn, sizeof(m.conn));
		return r;
	case LC_MSG_SRC_NOMORE:
		if (lc_msg_get_empty(p, n) != 0 || s->disp == NULL)
			break;
		s->nomore = 1;
		lc_dispenser_finish(s->disp);
		return 0;
	case LC_MSG_FILE_PREFIX:
		if (lc_msg_get_file_prefix(p, n, &m.prefix) != 0)
			break;
		return lc_source_prefix(s, &m.prefix, e);
	case LC_MSG_STREAM_LOST:
		if (lc_msg_get_stream_lost(p, n, &m.lost) != 0 ||
		    s->disp == NULL)
			break;
		return lc_source_lost(s, &m.lost, e);
	case LC_MSG_ACK:
		if (lc_msg_get_ack(p, n, &m.ack) != 0 || s->disp == NULL)
			break;
		lc_source_ack(s, &m.ack);
		return 0;
	default:
		break;
	}
	return lc_err_set(e, LC_ERR_PROTO, "unexpected or malformed %s at the "
	    "source", lc_msg_name(type));
}

static int
lc_source_event(void *role, const struct lc_event *ev,
    struct lc_err *e)
{
	struct lc_source *s = role;
	struct lc_msg_connected c;
	struct lc_msg_file_sum fs;
	struct lc_msg_file_len fl;
	struct lc_listed *l;
	int r;

	switch (ev->type) {
	case LC_EV_STREAM_UP:
		/* reverse: CONNECTED went out with the ports already */
		if (++s->up == s->nstreams && !(s->flags & LC_XFER_REVERSE)) {
			memset(&c, 0, sizeof(c));
			c.streams = s->nstreams;
			c.window = s->window != 0 ? s->senders[0].sndbuf : 0;
			if ((r = lc_msg_put_connected(s->port.out, &c)) != 0)
				return r;
		}
		return lc_source_stream_start(s, e);
	case LC_EV_STREAM_EOF:
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
	case LC_EV_SENDER_DONE:
		if (ev->b == 0)
			return 0;	/* lost or failed: reported otherwise */
		s->finished++;
		return lc_source_maybe_done(s);
	case LC_EV_SENDER_FAILED:
		lc_log_verbose("%s; reconnecting", ev->err.msg);
		return 0;
	case LC_EV_SRC_SUM:
		memset(&fs, 0, sizeof(fs));
		fs.id = ev->a;
		snprintf(fs.checksum, sizeof(fs.checksum), "%s", ev->text);
		return lc_msg_put_file_sum(s->port.out, &fs);
	case LC_EV_PREFIX_DONE:
		if ((l = lc_source_listed(s, ev->a, NULL)) == NULL ||
		    l->verdict == NULL)
			return 0;
		l->checking = 0;
		return lc_msg_put_prefix_match(s->port.out, l->verdict);
	default:
		return lc_err_set(e, LC_ERR_INTERNAL, "source: event %d",
		    ev->type);
	}
}

static int
lc_source_tick(void *role, uint64_t now_ms)
{
	struct lc_source *s = role;
	struct lc_msg_progress p;

	(void)now_ms;
	if (!s->connect_seen || s->done_sent)
		return 0;
	memset(&p, 0, sizeof(p));
	p.wire = atomic_load(&s->wire_sent);	/* first: see maybe_done */
	p.bytes = atomic_load(&s->bytes_sent);
	return lc_msg_put_progress(s->port.out, &p);
}

static void
lc_source_abort(void *role)
{
	struct lc_source *s = role;

	if (s == NULL)
		return;
	if (s->disp != NULL)
		lc_dispenser_abort(s->disp);
	pthread_mutex_lock(&s->mu);
	for (uint32_t i = 0; i < s->nstreams; i++) {
		atomic_store(&s->senders[i].stop, true);	/* rate waits */
		lc_stream_shutdown(s->senders[i].st);
		if (s->senders[i].hs_fd >= 0)	/* in its handshake */
			(void)shutdown(s->senders[i].hs_fd, SHUT_RDWR);
	}
	pthread_cond_broadcast(&s->cv);	/* senders waiting to reconnect */
	if (s->rd.pid > 0)	/* a source program: the copy is over */
		(void)kill(s->rd.pid, SIGTERM);
	pthread_mutex_unlock(&s->mu);
}

static void
lc_source_free(void *role)
{
	struct lc_source *s = role;
	struct lc_listed *l, *n;

	if (s == NULL)
		return;
	lc_source_abort(s);
	lc_jobq_free(s->jobs, NULL);
	for (uint32_t i = 0; i < s->nstreams; i++) {
		struct lc_sent *kept = &s->senders[i].sent;
		if (s->senders[i].started)
			pthread_join(s->senders[i].thread, NULL);
		lc_stream_free(s->senders[i].st);
		s->senders[i].st = NULL;
		/* a stream's blocks hold the dispenser's buffers */
		for (size_t j = 0; j < kept->n; j++)
			lc_dispenser_release(s->disp, &kept->v[j]);
		free(kept->v);	/* the dispenser closes files */
	}
	/* a program that outlives SIGTERM must not hold up the join */
	pthread_mutex_lock(&s->mu);
	if (s->rd.pid > 0)
		(void)kill(s->rd.pid, SIGKILL);
	pthread_mutex_unlock(&s->mu);
	if (s->rd.started)
		pthread_join(s->rd.thread, NULL);
	if (s->rd.fd >= 0)
		close(s->rd.fd);
	if (s->rd.pid > 0) {	/* never read to its end: stopped */
		(void)kill(s->rd.pid, SIGKILL);
		while (waitpid(s->rd.pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	free(s->rd.cmd);
	lc_csum_free(s->rd.csum);
	for (uint32_t i = 0; i < s->nlisten; i++)
		close(s->senders[i].listen_fd);
	lc_dispenser_free(s->disp);
	lc_tls_free(s->tls);
	if (s->rate_init)
		lc_rate_destroy(&s->rate);
	for (l = s->listed; l != NULL; l = n) {
		n = l->next;
		lc_listed_free(l);
	}
	lc_walk_free(s->walk);
	if (s->pending && s->pend.fd >= 0)
		close(s->pend.fd);
	for (size_t i = 0; i < s->nadds; i++)
		free(s->adds[i].path);
	free(s->adds);
	lc_secmem_free(s->key, LC_KEY_LEN);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* The messages the table (wire_msgs.def) gives the source. */
static int
lc_source_owns(uint8_t type)
{
	return lc_msg_owner(type) == LC_OWNER_SOURCE;
}

const struct lc_role_ops lc_source_ops = {
	.name = "source",
	.owns = lc_source_owns,
	.create = lc_source_new,
	.handle = lc_source_handle,
	.event = lc_source_event,
	.tick = lc_source_tick,
	.abort = lc_source_abort,
	.free = lc_source_free,
};
