/*
 * Error codes and error context.
 *
 * Library functions return 0 on success or a negative -LC_ERR_* code.  Where
 * the caller needs the full story (which file, which host, which flag) the
 * function also takes a struct lc_err and fills it with one human-readable
 * line; lc_err_set() returns the negative code so that
 *
 *     return lc_err_set(e, LC_ERR_IO, "open %s: %s", path, strerror(errno));
 *
 * reads naturally.  There is no global error state: threads each carry their
 * own struct lc_err.
 *
 * The one convention: a function that can fail returns 0 (or a documented
 * positive value, e.g. 1 for "got one") or -LC_ERR_*, never -1 or -errno.
 * The errno behind a failure goes into e->sys_errno through lc_err_sys();
 * where a helper has no struct lc_err (fdio.h), it says that errno is left
 * as the failing call set it.  Predicates (returning 0/1, documented as
 * such) and counts are not errors and keep their plain values.
 */
#ifndef LANECP_ERR_H
#define LANECP_ERR_H

#include <stddef.h>

enum lc_err_code {
	LC_OK = 0,
	LC_ERR_INTERNAL,	/* broken invariant, bug */
	LC_ERR_NOMEM,		/* allocation failed */
	LC_ERR_USAGE,		/* bad command line argument or value */
	LC_ERR_CONFIG,		/* bad ssh_config */
	LC_ERR_CONNECT,		/* host unreachable, TCP or SSH handshake failed */
	LC_ERR_AUTH,		/* SSH authentication refused */
	LC_ERR_HOSTKEY,		/* host key unknown, changed or revoked */
	LC_ERR_IO,		/* file I/O error on an endpoint */
	LC_ERR_EXISTS,		/* target exists and -f was not given */
	LC_ERR_DENIED,		/* path refused (restricted agent, unsafe name) */
	LC_ERR_AGENT,		/* remote agent could not start or died */
	LC_ERR_PROTO,		/* malformed or unexpected control/data message */
	LC_ERR_VERSION,		/* protocol version mismatch */
	LC_ERR_STREAM,		/* a data stream failed (connect, reset, auth) */
	LC_ERR_INTEGRITY,	/* a data stream failed its integrity check */
	LC_ERR_NOSPACE,		/* no space left on the target filesystem */
	LC_ERR_TIMEOUT,		/* no progress within the time limit */
	LC_ERR_CHECKSUM,	/* end-to-end checksum mismatch */
	LC_ERR_CANCELED,	/* interrupted by a signal or the controller */
	LC_ERR_EOF,		/* peer closed the connection */
	LC_ERR_TOOBIG,		/* a length or count is over its limit */
	LC_ERR_PARTIAL,		/* some files failed, the rest was copied */
	LC_ERR_LOCKED,		/* a part file is locked by another lanecp */
	LC_ERR_NOPATH,		/* the data streams could not connect */
	LC_ERR_NOAGENT,		/* the remote lanecp program cannot be run */
	LC_ERR_PROGRAM,		/* a -N program failed (its exit status) */
	LC_ERR_PIPE,		/* the reader of a pipe target went away */
	LC_ERR_MAX
};

#define LC_ERR_MSG_MAX 512

struct lc_err {
	int code;		/* LC_ERR_* (positive), 0 when clear */
	int remote;		/* 1 when the error happened on a remote host */
	int sys_errno;		/* errno behind the error, 0 if none */
	int signo;		/* for LC_ERR_CANCELED: the signal */
	char msg[LC_ERR_MSG_MAX];
};

/* Static text for a code (positive or negative). Never NULL. */
const char *lc_strerror(int code);

/* Clear an error context. */
void lc_err_clear(struct lc_err *e);

/*
 * Record an error (overwriting any earlier one) and return -code.  With
 * e == NULL only the return value matters.
 */
int lc_err_set(struct lc_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* As lc_err_set() but keeps an error that is already recorded. */
int lc_err_set_first(struct lc_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Record code with errno text: "<formatted>: <strerror(err)>". */
int lc_err_sys(struct lc_err *e, int code, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * Make sure e holds an error for r (< 0): if e is clear, fill it with the
 * generic text of r prefixed by what.  Returns r.
 */
int lc_err_ensure(struct lc_err *e, int r, const char *what);

#endif
