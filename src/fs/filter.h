/*
 * --exclude / --include: rsync's pattern rules over the names of a tree,
 * relative to the copied root (the names FILE carries: "dir/sub/f" for a
 * source "dir", "sub/f" for "dir/").
 *
 * A pattern with a '/' anywhere but at its end, or with "**", is matched
 * against the whole name (a leading '/' anchors it at the root; without
 * it, against the name or any tail of it that starts a component); any
 * other pattern against the last component only.  '*' and '?' do not
 * match '/', "**" does, [classes] and '\' escapes are fnmatch(3)'s.  As
 * in rsync (3.5, checked name by name against it), an unanchored pattern
 * that starts with "**" is matched against "/NAME" (so "**" then "/f"
 * finds a top-level "f"); "DIR/" then "***" matches the directory DIR and
 * all below it; and "a/" "**" "/b" needs a directory between a and b
 * (rsync(1): "/foo/bar is not excluded").  A trailing '/' matches
 * directories only.  The first rule that matches decides; a name no rule
 * matches is included.  "- PAT" and "+ PAT" set the kind whatever the
 * option said (rsync's prefixes).
 *
 * A rule set is immutable once built and may be shared by threads.
 */
#ifndef LANECP_FILTER_H
#define LANECP_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "wire.h" /* LC_FILTER_MAX, LC_FILTER_PAT_MAX, the kinds */

struct lc_filter_rule;

struct lc_filters {
	struct lc_filter_rule *r;
	size_t n;
};

/*
 * Append a rule (kind LC_FILTER_*), pattern as the user wrote it ("- "
 * and "+ " prefixes honoured).  -LC_ERR_USAGE with e naming it for an
 * empty pattern, one of LC_FILTER_PAT_MAX bytes or more, more than
 * LC_FILTER_MAX rules; -LC_ERR_NOMEM.
 */
int lc_filters_add(struct lc_filters *f, int kind, const char *pattern,
    struct lc_err *e);

/* The same for a rule from SRC_FILTER: no prefixes. */
int lc_filters_add_wire(struct lc_filters *f, int kind, const char *pattern,
    struct lc_err *e);

/*
 * Rule i as it goes on the wire: its kind and its pattern without the
 * prefix (adding them back in order rebuilds the same set).
 */
int lc_filters_rule(const struct lc_filters *f, size_t i, const char **pat);

/* 1 if the first rule matching name (is_dir: a directory) excludes it. */
int
lc_filters_excluded(const struct lc_filters *f, const char *name, int is_dir);

/*
 * 1 if name or one of its parent directories is excluded (what a walk
 * that does not descend excluded directories leaves out).
 */
int lc_filters_excluded_path(const struct lc_filters *f, const char *name,
    int is_dir);

void lc_filters_free(struct lc_filters *f);

/*
 * Read --exclude-from / --include-from FILE ("-": stdin): one pattern a
 * line; blank lines and lines starting with ';' or '#' are skipped.
 * -LC_ERR_USAGE naming the file and line.
 */
int lc_filters_read(struct lc_filters *f, int kind, const char *path,
    struct lc_err *e);

#endif
