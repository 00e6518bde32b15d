/*
 * known_hosts internals shared by knownhosts.c (types, loading, lookup),
 * knownhosts_line.c (one line) and knownhosts_add.c (adding a key).  Not
 * part of the interface: see knownhosts.h for that.
 */
#ifndef LANECP_KNOWNHOSTS_INT_H
#define LANECP_KNOWNHOSTS_INT_H

#include <stddef.h>

#include <libssh2.h>

#include "err.h"
#include "knownhosts.h"

#define LC_KH_LINE_MAX (16 * 1024)	/* longer lines are skipped */
#define LC_KH_SALT_LEN 20		/* as ssh: SHA-1 size */

struct lc_kh_origin {
	const void *node;	/* libssh2's entry */
	size_t file;		/* index into files */
	unsigned long line;
};

/* A key a @revoked line names: its SHA-256 and where the line is. */
struct lc_kh_revoked {
	unsigned char sha256[32];
	size_t file;
	unsigned long line;
};

struct lc_knownhosts {
	LIBSSH2_KNOWNHOSTS *h;
	char **files;
	size_t nfiles;
	struct lc_kh_origin *orig;
	size_t norig;
	size_t aorig;
	struct libssh2_knownhost *last;	/* last entry given an origin */
	struct lc_kh_revoked *rev;	/* @revoked lines, any host */
	size_t nrev;
	size_t arev;
	/* the first @cert-authority line covering one of the names */
	size_t ca_file;
	unsigned long ca_line;	/* 0: none */
	size_t ca_name;		/* index of the name it covers */
};

/* knownhosts_line.c */

/*
 * Add one line (NUL terminated, no newline; changed in place) of
 * kh->files[file] for the lookup names.  A line that cannot be used is
 * skipped (logged).  Returns 0 or -LC_ERR_NOMEM.
 */
int lc__knownhosts_add_line(struct lc_knownhosts *kh, char *line,
    size_t file, unsigned long lineno, const char *const *names,
    size_t nnames);

/*
 * Internal, for tests and fuzz_knownhosts: as lc_knownhosts_load() for
 * one file whose text (len bytes, need not be NUL terminated) is given;
 * name stands for the file in messages and results.
 */
int lc__knownhosts_load_mem(LIBSSH2_SESSION *sess, const char *text,
    size_t len, const char *name, const char *const *names, size_t nnames,
    struct lc_knownhosts **out, struct lc_err *e);

#endif
