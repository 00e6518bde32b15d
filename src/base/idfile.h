/*
 * The files /etc/passwd and /etc/group read without the C library's name
 * service switch: the static lanecp-agent's user and group names
 * (idname_files.c), so that it never loads the NSS modules of a host's
 * glibc.  Only the fields lanecp uses are taken: a user's name, uid, gid
 * and home directory, a group's name and gid.
 *
 * The files are trusted less than they usually are: a line that is not a
 * plain entry is skipped, never half taken.  Skipped: empty lines,
 * comments ('#'), NIS compat entries ('+' or '-' first), a name that is
 * empty, LC_IDFILE_NAME_MAX bytes or longer or holds a control character
 * or a space, an id that is not decimal digits, more than 10 of them or
 * 4294967295 or above ((uid_t)-1 means "unchanged" to chown), a line
 * without all of its fields or with one too many.  Of a line longer than
 * LC_IDFILE_LINE_MAX only its start is read (the used fields come first:
 * a long group member list is cut, nothing used).  The first entry for
 * a name or an id wins, as in glibc.
 */
#ifndef LANECP_IDFILE_H
#define LANECP_IDFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LC_IDFILE_NAME_MAX 256	/* a name, with its NUL */
#define LC_IDFILE_HOME_MAX 4096 /* a home directory, with its NUL */
#define LC_IDFILE_LINE_MAX 8192 /* the part of a line read */

enum lc_idfile_kind { LC_IDFILE_PASSWD, LC_IDFILE_GROUP };

/* One entry; home is "" for a group. */
struct lc_idfile_ent {
	uint32_t id;
	uint32_t gid; /* a user's primary group */
	char name[LC_IDFILE_NAME_MAX];
	char home[LC_IDFILE_HOME_MAX];
};

/*
 * Take apart one line (line[0..len), no newline, not terminated) of a
 * file of kind k into *ent.  1 when it is an entry, 0 when it is skipped
 * (see above; *ent is then undefined).
 */
int lc_idfile_parse(enum lc_idfile_kind k, const char *line, size_t len,
    struct lc_idfile_ent *ent);

/*
 * Find in f (read from where it is, to its end) the first entry of kind k
 * whose name is name (name != NULL) or whose id is id (name == NULL), into
 * *ent.  1 when found, 0 when not, -1 when reading f failed (errno).
 */
int lc_idfile_find(FILE *f, enum lc_idfile_kind k, const char *name,
    uint32_t id, struct lc_idfile_ent *ent);

#endif
