/*
 * RevokedHostKeys files (ssh_config(5)): host keys that must be refused.
 *
 * A file is either an OpenSSH key revocation list (KRL: it starts with
 * "SSHKRL\n\0", format in OpenSSH's PROTOCOL.krl) or text with one public
 * key per line ("keytype base64 [comment]"; leading blanks, blank lines
 * and '#' comments skipped), as ssh reads it.  Its contents are untrusted
 * input: the file is read whole, at most LC_REVOKED_FILE_MAX bytes, and
 * decoded on a bounded view that checks every length before using it.
 *
 * As ssh does, a file that is missing, unreadable or malformed is an error
 * (the caller refuses the host: ssh refuses every host key then).  From a
 * KRL the explicit key, SHA-1 and SHA-256 sections are used (they revoke
 * plain keys); certificate sections are only checked for form, since
 * lanecp never accepts host certificates; a signature section, an unknown
 * section type or a critical extension makes the KRL unusable (OpenSSH
 * 9.4 and later refuse signed KRLs too).  A certificate in a key list is
 * refused as unusable as well (ssh would revoke the key it certifies).
 */
#ifndef LANECP_REVOKEDKEYS_H
#define LANECP_REVOKEDKEYS_H

#include <stddef.h>

#include "err.h"

#define LC_REVOKED_FILE_MAX (8u << 20)	/* larger files are refused */

struct lc_revoked_result {
	int revoked;		/* 1: the file revokes the key */
	int krl;		/* 1: the file is a KRL */
	unsigned long line;	/* key list: the line that names the key */
};

/*
 * Does the RevokedHostKeys file path revoke the host key blob (SSH wire
 * encoding, len bytes)?  Returns 0 with *res filled in, or
 * -LC_ERR_HOSTKEY with e saying "RevokedHostKeys PATH[ line N]: why"
 * (missing, unreadable, a directory or other non-file, too large, a line
 * that is not a public key, a malformed or unusable KRL), or
 * -LC_ERR_NOMEM.  A key list is read up to the first line that names the
 * key, as ssh does; a KRL is checked whole before it is used.
 */
int lc_revokedkeys_check(const char *path, const unsigned char *blob,
    size_t len, struct lc_revoked_result *res, struct lc_err *e);

#endif
