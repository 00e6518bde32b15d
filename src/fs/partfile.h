/*
 * Target and part files: where the sink's files go and how they get there.
 *
 * Pure file system, no threads and no sockets: every operation is relative
 * to one directory descriptor (struct lc_target.dir_fd), the target
 * directory or the directory holding the target file.  Peer names are
 * opened beneath it (confine.h), the part file is created in it with
 * O_EXCL | O_NOFOLLOW, and renameat(2) moves it into place within it.
 * Callers serialise the calls for one struct lc_part.
 */
#ifndef LANECP_PARTFILE_H
#define LANECP_PARTFILE_H

#include "lockholder.h"
#include <stdint.h>
#include <sys/types.h>

#include "confine.h"
#include "err.h"
#include "wire.h"

/* The resolved target of a transfer. */
struct lc_target {
	const struct lc_confine *conf;	/* borrowed; must outlive this */
	int dir_fd;		/* where files are created (owned), or -1 */
	int is_dir;		/* the target is a directory */
	uint32_t flags;		/* LC_TGT_* */
	mode_t umask;		/* applied to modes the peer sends */
	char path[LC_PATH_MAX];	/* as the controller named it */
	char name[256];		/* file target: its last component */
	/* this transfer's id ("" if none): a part file locked by a stale
	   agent of the same transfer is taken over (lockholder.h) */
	char transfer[LC_TRANSFER_HEX + 1];
	/* and the run's takeover key (SINK_TARGET; all zero: none), without
	   which no holder of ours says yes (takeover.h) */
	uint8_t takeover[LC_KEY_LEN];
};

/* What a tree entry keeps from its source (-p, -u, --owner). */
struct lc_attrs {
	int set_mode;		/* a directory: set mode (made here, or -p) */
	uint32_t mode;		/* permission bits */
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	int chown;		/* set owner and group (--owner as root) */
	uint32_t uid;		/* resolved for this host */
	uint32_t gid;
};

/* One file being written: the target itself or a part file. */
struct lc_part {
	int fd;			/* owned; -1 when closed */
	int dfd;		/* the directory it is in: t->dir_fd, or a
				   tree's subdirectory (borrowed) */
	int direct;		/* writing the target itself, in order */
	int beneath;		/* name resolved beneath dir_fd */
	int replaces;		/* lc_part_open found a file or link under
				   the name: the rename replaces it (an
				   update, not a new file) */
	uint64_t size;		/* what the source announced */
	uint32_t mode;		/* the source's mode bits */
	int64_t mtime_sec;	/* the source's mtime (-p) */
	uint32_t mtime_nsec;
	int chown;		/* --owner as root: set uid and gid */
	uint32_t uid;
	uint32_t gid;
	dev_t dev;		/* the part file (lc_part_prepare) */
	ino_t ino;
	char name[256];		/* final component in dir_fd */
	/*
	 * The target's path, for messages: on the heap, sized to fit (a
	 * sink holds up to 4096 files in flight, and LC_PATH_MAX bytes
	 * each came to 16 MiB), at most LC_PATH_MAX - 1 bytes; NULL until
	 * lc_part_init, freed by lc_part_release.
	 */
	char *final;
	char tmp[256];		/* part file name in dir_fd (one component,
				   lc_part_name), "" after the rename */
};

/* 1 if name is a single path component (no '/', not "." or ".."), else 0. */
int lc_target_name_ok(const char *name);

/*
 * Resolve path (flags: LC_TGT_*) as the transfer's target under conf: an
 * existing directory, or a file (existing or not) in an existing
 * directory.  t is set up first (t->dir_fd = -1), so lc_target_close() is
 * always safe.  0, or -LC_ERR_DENIED / -LC_ERR_IO with e filled.
 */
int lc_target_resolve(struct lc_target *t, const struct lc_confine *conf,
    const char *path, uint32_t flags, mode_t umask, struct lc_err *e);

/* Close t->dir_fd (if open). */
void lc_target_close(struct lc_target *t);

/*
 * The part file name for name: ".NAME.lanecp-part", or a hashed name when
 * that would be too long for one component.  0, -LC_ERR_TOOBIG (outsz) or
 * -LC_ERR_INTERNAL.
 */
int lc_part_name(const char *name, char *out, size_t outsz);

/*
 * Set up p (fd -1, nothing opened) for the file the peer calls peer_name
 * (used only when the target is a directory).  0, or -LC_ERR_DENIED (an
 * unsafe peer name) / -LC_ERR_IO (a name too long) with e filled.
 */
int lc_part_init(const struct lc_target *t, const char *peer_name,
    uint64_t size, uint32_t mode, struct lc_part *p, struct lc_err *e);

/*
 * Open p->fd for writing.  A missing or regular target (the latter only
 * with LC_TGT_FORCE) is written through a part file: with LC_TGT_RESUME
 * one of ours is kept and *kept set to its length; otherwise a fresh one
 * is created (O_EXCL, 0600) in place of one of ours.  A part file that is
 * not ours (not regular, not our uid, hard-linked, writable by others) is
 * refused, a symlink is never followed, and the part file is flock(2)ed.
 * A device or FIFO target is written directly (p->direct) and needs
 * LC_TGT_FORCE, but for /dev/null.  0, or -LC_ERR_* with e filled; on
 * error p->fd may be open (lc_part_close() it).
 */
int lc_part_open(const struct lc_target *t, struct lc_part *p,
    uint64_t *kept, struct lc_err *e);

/*
 * 0 if the target's file system has need bytes free (or the check is off
 * or impossible), else -LC_ERR_NOSPACE with e filled.
 */
int lc_part_space(const struct lc_target *t, const struct lc_part *p,
    uint64_t need, struct lc_err *e);

/*
 * The whole file is written: check its size, set its mode (permission bits
 * of p->mode less t->umask), fsync it, rename it into place only if the
 * part file name still names the file we wrote, fsync the directory
 * (LC_TGT_NO_FSYNC skips both fsyncs).  A direct file is just closed.
 * p->fd is closed either way; p->tmp is "" once renamed.  0, or -LC_ERR_*
 * (-LC_ERR_DENIED: the part file was replaced) with e filled.
 */
int lc_part_finalize(const struct lc_target *t, struct lc_part *p,
    struct lc_err *e);

/*
 * lc_part_finalize in two steps, for finishing many files at once.
 * prepare: the size check (a short file, ending in a hole, is extended),
 * mode (and with LC_TGT_PRESERVE the mtime), and an fsync if do_fsync
 * (and not LC_TGT_NO_FSYNC).  commit: the rename into place (if the part
 * file is still the one we wrote) and close; the caller fsyncs p->dfd.
 * On error prepare leaves p->fd open, commit closes it.
 */
int lc_part_prepare(const struct lc_target *t, struct lc_part *p,
    int do_fsync, struct lc_err *e);
int lc_part_commit(const struct lc_target *t, struct lc_part *p,
    struct lc_err *e);

/* Close p->fd (if open); the part file stays for a later -a. */
void lc_part_close(struct lc_part *p);

/* lc_part_close, and free p->final: p is done with. */
void lc_part_release(struct lc_part *p);

/*
 * p->final = dir "/" rel (no second '/' if dir ends in one), or dir when
 * rel is NULL, on the heap (any earlier one freed).  0, -LC_ERR_TOOBIG
 * (LC_PATH_MAX bytes or more) or -LC_ERR_NOMEM.
 */
int lc_part_set_final(struct lc_part *p, const char *dir, const char *rel);

/*
 * Trees (LC_TGT_TREE).  Each entry lives in a directory of the target
 * tree, opened beneath t->dir_fd without following any symlink
 * (lc_tree_open_dir), and is made there under its last component, leaf.
 */

/* Open directory rel ("" = the target directory itself) into *fd. */
int lc_tree_open_dir(const struct lc_target *t, const char *rel, int *fd,
    struct lc_err *e);

/*
 * Make directory leaf in dfd (rel names it in messages), mode 0700 so
 * that its contents can be written; its own mode and times come last
 * (lc_tree_dir_attrs).  *made = 1 if it was made, 0 if a directory was
 * there (not a symlink to one).  -LC_ERR_EXISTS if something else is.
 */
int lc_tree_mkdir(const struct lc_target *t, int dfd, const char *leaf,
    const char *rel, int *made, struct lc_err *e);

/*
 * Make symlink leaf -> link in dfd: made under a temporary name and
 * renamed over leaf, which may be a file or a link (with LC_TGT_FORCE or
 * LC_TGT_UPDATE), never a directory.  A link with the same target is left
 * alone.  With LC_TGT_PRESERVE or LC_TGT_UPDATE its mtime is set, with
 * a->chown its owner.  0, or -LC_ERR_EXISTS /
 * -LC_ERR_IO.
 */
int lc_tree_symlink(const struct lc_target *t, int dfd, const char *leaf,
    const char *rel, const char *link, const struct lc_attrs *a,
    struct lc_err *e);

/*
 * -u / -O: does leaf in dfd let the copy skip a file of size and mtime?
 * LC_SKIP_UPTODATE (a regular file, same size, same mtime in seconds, -u),
 * LC_SKIP_EXISTS (anything there, -O) or 0.
 */
int lc_tree_skip(const struct lc_target *t, int dfd, const char *leaf,
    uint64_t size, int64_t mtime_sec);

/*
 * A regular file leaf in dfd that -u skips (LC_SKIP_UPTODATE) still gets
 * its source's attributes, as rsync -a gives them: with LC_TGT_PRESERVE
 * its mode (no umask; set-id bits as lc__part_modes says) and mtime to
 * the nanosecond, with a->chown its owner and group; only what differs
 * is changed, through a descriptor opened without following a symlink.
 * *set says what was changed (LC_SKIP_SET_*, wire.h).  0, or -LC_ERR_IO
 * (nothing said changed).  With LC_TGT_DRYRUN nothing is changed and *set
 * says what would be (-n lists it, and the real run then does that).
 */
int lc_tree_skip_attrs(const struct lc_target *t, int dfd, const char *leaf,
    const char *rel, const struct lc_attrs *a, unsigned *set,
    struct lc_err *e);

/*
 * After its contents: directory rel gets its owner (a->chown), its mode
 * (less the umask unless LC_TGT_PRESERVE) and with LC_TGT_PRESERVE its
 * mtime; then, if do_fsync,
 * an fsync (its entries are durable).
 */
int lc_tree_dir_attrs(const struct lc_target *t, const char *rel,
    const struct lc_attrs *a, int do_fsync, struct lc_err *e);

/* Set up p for entry leaf in dfd, rel being its name in the tree. */
int lc_part_init_at(const struct lc_target *t, int dfd, const char *rel,
    const char *leaf, uint64_t size, uint32_t mode, struct lc_part *p,
    struct lc_err *e);

#endif
