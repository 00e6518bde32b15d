/*
 * known_hosts files (OpenSSH format) on top of libssh2's knownhost API.
 *
 * The files are read here line by line and each line is handed to
 * libssh2_knownhost_readline(), rather than with
 * libssh2_knownhost_readfile(), which gives up at the first line it cannot
 * parse.  Every entry remembers its file and line, so that a changed key
 * can name the line to remove.  Lookups take the names ssh would use:
 * "host" for port 22 and "[host]:port" otherwise (lc_knownhosts_name), and
 * match plain and hashed ("|1|salt|hash") entries alike.  Plain entries
 * with wildcards ("*", "?", "!negation") are matched with
 * lc_sshconf_match_list() against the names given at load time.
 * Unparsable lines are skipped (with a debug log line); a hashed name
 * whose salt or hash is not base64 of 20 bytes is skipped with a warning
 * naming file and line (libssh2 1.10 leaks memory on every lookup when
 * such a line is loaded).
 *
 * Marker lines never reach libssh2.  A "@revoked" line's key is refused
 * whatever the line's host patterns say (a stolen key is stolen for every
 * name; ssh only applies the lines whose patterns match the host) and
 * wins over any plain line in any file; a @revoked line whose key cannot
 * be read is skipped with a warning naming file and line.  A
 * "@cert-authority" line whose patterns (plain, wildcard or hashed) cover
 * one of the names is remembered (the first such line): lanecp cannot
 * check host certificates, but it can say that a CA vouches for the host
 * instead of calling its key unknown.
 *
 * An lc_knownhosts belongs to one libssh2 session and, like the session,
 * to one thread at a time.
 */
#ifndef LANECP_KNOWNHOSTS_H
#define LANECP_KNOWNHOSTS_H

#include <stddef.h>

#include <libssh2.h>

#include "err.h"

#define LC_KH_NAME_MAX 300	/* "[" host(255) "]:" port */

struct lc_knownhosts;

/*
 * The known_hosts name for host and port as ssh writes it: "host" for
 * port 22, "[host]:port" otherwise; lowercased.  Returns 0, or
 * -LC_ERR_TOOBIG when it does not fit in outsz.
 */
int lc_knownhosts_name(const char *host, unsigned port, char *out,
    size_t outsz);

/*
 * Read the files in order.  Missing or unreadable files are skipped (a
 * verbose log line for the unreadable ones), as ssh does.  names are the
 * lookup names (for the wildcard lines).  On success the caller owns *out
 * (lc_knownhosts_free()); it must be freed before sess.  Errors:
 * -LC_ERR_NOMEM, -LC_ERR_INTERNAL.
 */
int lc_knownhosts_load(LIBSSH2_SESSION *sess, const char *const *files,
    size_t nfiles, const char *const *names, size_t nnames,
    struct lc_knownhosts **out, struct lc_err *e);

/* Free kh (before the session it was loaded for).  NULL is fine. */
void lc_knownhosts_free(struct lc_knownhosts *kh);

/*
 * The libssh2 host key algorithms of algs (kept in their order) whose key
 * type is recorded for any of names come first, then the others: the
 * server is then asked for a key we can verify, as ssh does.  Writes a
 * comma-separated list into out.  Returns how many algorithms have a
 * recorded key type, or -LC_ERR_TOOBIG when out is too small.
 */
int lc_knownhosts_order_algs(struct lc_knownhosts *kh,
    const char *const *names, size_t nnames, const char *const *algs,
    size_t nalgs, char *out, size_t outsz);

enum lc_kh_status {
	LC_KH_UNKNOWN = 0,	/* no entry for this name and key type */
	LC_KH_MATCH,		/* an entry has this very key */
	LC_KH_CHANGED,		/* entries exist, all with other keys */
	LC_KH_REVOKED,		/* a @revoked line has this key */
	LC_KH_CA,		/* no entry, but a @cert-authority line
				 * covers the host */
};

struct lc_kh_result {
	enum lc_kh_status status;
	const char *name;	/* the name that was found (REVOKED: the
				 * first name), NULL for UNKNOWN */
	const char *file;	/* CHANGED: file of the first other key;
				 * REVOKED, CA: file of the marker line
				 * (owned by the lc_knownhosts), or NULL */
	unsigned long line;	/* and its line, 0 if unknown */
};

/*
 * Look the server's key up (blob: the SSH wire encoding, type: a
 * LIBSSH2_HOSTKEY_TYPE_*).  A @revoked line with this key decides first,
 * whatever the names.  Then the names are tried in order; the first one
 * with any entry of this key type decides (a match, or a changed key).
 * With none, a @cert-authority line covering a name gives LC_KH_CA.
 * Returns 0 with *res filled, or -LC_ERR_INTERNAL.
 */
int lc_knownhosts_check(struct lc_knownhosts *kh, const char *const *names,
    size_t nnames, const unsigned char *blob, size_t len, int type,
    struct lc_kh_result *res, struct lc_err *e);

/*
 * Append "name keytype base64key" to file, with the name hashed
 * (|1|salt|HMAC-SHA1) when hash is set.  A missing parent directory is
 * created (0700) only when it is home/.ssh; a new file is created 0600.
 * Returns 0, -LC_ERR_IO (-LC_ERR_NOSPACE for ENOSPC/EDQUOT),
 * -LC_ERR_PROTO (malformed blob), -LC_ERR_TOOBIG (name too long),
 * -LC_ERR_NOMEM or -LC_ERR_INTERNAL.
 */
int lc_knownhosts_add(const char *file, const char *home, const char *name,
    const unsigned char *blob, size_t len, int hash, struct lc_err *e);

/* "SHA256:<base64 without padding>" of a key blob, as ssh prints it. */
void lc_knownhosts_fingerprint(const unsigned char *blob, size_t len,
    char *out, size_t outsz);

/* ssh's name for a LIBSSH2_HOSTKEY_TYPE_*: "ED25519", "ECDSA", "RSA". */
const char *lc_knownhosts_type_label(int type);

/*
 * Key type name at the start of an SSH key blob ("ssh-ed25519") into out.
 * Returns 0 or -LC_ERR_PROTO.
 */
int lc_knownhosts_blob_type(const unsigned char *blob, size_t len,
    char *out, size_t outsz);

#endif
