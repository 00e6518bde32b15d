/*
 * --exclude / --include rules (filter.h).  Globbing is fnmatch(3) with
 * FNM_PATHNAME; the one thing it lacks, "**" (any run of characters,
 * '/' included), splits a pattern into pieces that fnmatch matches in
 * order with anything between them.
 */
#include "filter.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lc_limits.h"

/* A pattern cut at each "**" into pieces that fnmatch(3) matches in order. */
struct lc_glob {
	char *pieces; /* NUL-separated */
	size_t npieces;
};

struct lc_filter_rule {
	int kind;
	int dir_only;	   /* trailing '/' */
	int anchored;	   /* leading '/' */
	int whole;	   /* matched against the whole name, not the leaf */
	int star2;	   /* unanchored, starts with "**": rsync matches it
			 against "/NAME", so that "**" + "/x" finds a top "x" */
	int star3;	   /* "DIR/" "***": DIR (a directory) or below it */
	char *pat;	   /* the pattern, neither leading nor trailing '/' */
	char *wire;	   /* as sent: with its '/'s, without "- " / "+ " */
	struct lc_glob g;  /* pat (for star3: DIR, '/', "**") */
	struct lc_glob g3; /* star3: DIR */
};

/* Cut pat at each "**" into g.  0 or -LC_ERR_NOMEM. */
static int
lc_glob_compile(const char *pat, struct lc_glob *g)
{
	size_t n = strlen(pat);
	char *q;

	if ((g->pieces = malloc(n + 1)) == NULL)
		return -LC_ERR_NOMEM;
	q = g->pieces;
	g->npieces = 1;
	for (size_t i = 0; i < n; i++) {
		if (pat[i] == '*' && pat[i + 1] == '*') {
			*q++ = '\0';
			g->npieces++;
			i++;
			continue;
		}
		*q++ = pat[i];
	}
	*q = '\0';
	return 0;
}

static void
lc_rule_free(struct lc_filter_rule *r)
{
	free(r->wire);
	free(r->pat);
	free(r->g.pieces);
	free(r->g3.pieces);
}

static int
lc_filters_add1(struct lc_filters *f, int kind, const char *pattern,
    int prefixes, struct lc_err *e)
{
	struct lc_filter_rule *r, *nr;
	const char *p = pattern;
	size_t n;

	if (prefixes && (p[0] == '-' || p[0] == '+') && p[1] == ' ') {
		kind = p[0] == '-' ? LC_FILTER_EXCLUDE : LC_FILTER_INCLUDE;
		p += 2;
	}
	n = strlen(p);
	if (n == 0 || strcmp(p, "/") == 0)
		return lc_err_set(e, LC_ERR_USAGE, "--%s: empty pattern",
		    kind == LC_FILTER_EXCLUDE ? "exclude" : "include");
	if (n >= LC_FILTER_PAT_MAX)
		return lc_err_set(e, LC_ERR_USAGE,
		    "--%s %.32s...: a pattern "
		    "is shorter than %u bytes",
		    kind == LC_FILTER_EXCLUDE ? "exclude" : "include", p,
		    LC_FILTER_PAT_MAX);
	if (f->n >= LC_FILTER_MAX)
		return lc_err_set(e, LC_ERR_USAGE,
		    "more than %u --exclude "
		    "and --include patterns",
		    LC_FILTER_MAX);
	if ((nr = realloc(f->r, (f->n + 1) * sizeof(*nr))) == NULL)
		return -LC_ERR_NOMEM;
	f->r = nr;
	r = &f->r[f->n];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->wire = strdup(p);
	r->pat = strdup(p[0] == '/' ? p + 1 : p);
	if (r->wire == NULL || r->pat == NULL)
		goto nomem;
	r->anchored = p[0] == '/';
	n = strlen(r->pat);
	if (n > 0 && r->pat[n - 1] == '/') {
		r->dir_only = 1;
		r->pat[--n] = '\0';
	}
	r->whole = r->anchored || strchr(r->pat, '/') != NULL ||
	    strstr(r->pat, "**") != NULL;
	r->star2 = !r->anchored && strncmp(r->pat, "**", 2) == 0;
	/* rsync's DIR, '/', "***": "DIR/" and DIR '/' "**" in one rule
	   (the '/' stays in g's pattern: DIR "***" would be another) */
	r->star3 = n >= 4 && strcmp(r->pat + n - 4, "/***") == 0;
	if (r->star3) {
		r->pat[n - 1] = '\0'; /* DIR '/' "**" */
		r->pat[n - 4] = '\0';
		if (lc_glob_compile(r->pat, &r->g3) != 0)
			goto nomem;
		r->pat[n - 4] = '/';
	}
	if (lc_glob_compile(r->pat, &r->g) != 0)
		goto nomem;
	f->n++;
	return 0;
nomem:
	lc_rule_free(r);
	return -LC_ERR_NOMEM;
}

int
lc_filters_add(struct lc_filters *f, int kind, const char *pattern,
    struct lc_err *e)
{
	return lc_filters_add1(f, kind, pattern, 1, e);
}

int
lc_filters_add_wire(struct lc_filters *f, int kind, const char *pattern,
    struct lc_err *e)
{
	return lc_filters_add1(f, kind, pattern, 0, e);
}

int
lc_filters_rule(const struct lc_filters *f, size_t i, const char **pat)
{
	*pat = f->r[i].wire;
	return f->r[i].kind;
}

/* fnmatch of piece against s[a, b). */
static int
lc_piece(const char *piece, const char *s, size_t a, size_t b)
{
	char buf[LC_PATH_MAX];

	if (b - a >= sizeof(buf))
		return 0;
	memcpy(buf, s + a, b - a);
	buf[b - a] = '\0';
	return fnmatch(piece, buf, FNM_PATHNAME) == 0;
}

/*
 * The pieces in order over s, the first at its start, the last at its
 * end, anything between (the "**"s).  Each middle piece takes the
 * earliest end it can: a later one never leaves more for the rest.
 */
static int
lc_glob(const struct lc_glob *r, const char *s)
{
	const char *piece = r->pieces;
	size_t n = strlen(s), pos = 0, a, b, k;
	int found;

	if (r->npieces == 1)
		return fnmatch(r->pieces, s, FNM_PATHNAME) == 0;
	for (b = 0; b <= n && !lc_piece(piece, s, 0, b); b++)
		;
	if (b > n)
		return 0;
	pos = b;
	for (k = 1; k + 1 < r->npieces; k++) {
		piece += strlen(piece) + 1;
		found = 0;
		for (b = pos; b <= n && !found; b++)
			for (a = pos; a <= b && !found; a++)
				if (lc_piece(piece, s, a, b)) {
					found = 1;
					pos = b;
				}
		if (!found)
			return 0;
	}
	piece += strlen(piece) + 1;
	for (a = pos; a <= n; a++)
		if (lc_piece(piece, s, a, n))
			return 1;
	return 0;
}

/* name against the rule's pattern(s) as a whole, where it is matched. */
static int
lc_rule_glob(const struct lc_filter_rule *r, const struct lc_glob *g,
    const char *name)
{
	char buf[LC_PATH_MAX + 1];
	const char *s;
	size_t n;

	if (!r->whole) {
		s = strrchr(name, '/');
		return lc_glob(g, s != NULL ? s + 1 : name);
	}
	if (r->anchored)
		return lc_glob(g, name);
	if (r->star2) {
		/* the leading "**" takes any tail, and "/" for a top name */
		if ((n = strlen(name)) + 1 >= sizeof(buf))
			return 0;
		buf[0] = '/';
		memcpy(buf + 1, name, n + 1);
		return lc_glob(g, buf);
	}
	/* unanchored: the name or any tail of it that starts a component */
	for (s = name; s != NULL; s = strchr(s, '/'), s = s ? s + 1 : NULL)
		if (lc_glob(g, s))
			return 1;
	return 0;
}

static int
lc_rule_matches(const struct lc_filter_rule *r, const char *name, int is_dir)
{
	if (r->dir_only && !is_dir)
		return 0;
	if (r->star3 && is_dir && lc_rule_glob(r, &r->g3, name))
		return 1;
	return lc_rule_glob(r, &r->g, name);
}

int
lc_filters_excluded(const struct lc_filters *f, const char *name, int is_dir)
{
	for (size_t i = 0; i < f->n; i++)
		if (lc_rule_matches(&f->r[i], name, is_dir))
			return f->r[i].kind == LC_FILTER_EXCLUDE;
	return 0;
}

int
lc_filters_excluded_path(const struct lc_filters *f, const char *name,
    int is_dir)
{
	char buf[LC_PATH_MAX];
	size_t n = strlen(name);
	char *s;

	if (f->n == 0)
		return 0;
	if (n >= sizeof(buf))
		return 0;
	memcpy(buf, name, n + 1);
	for (s = strchr(buf, '/'); s != NULL; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (lc_filters_excluded(f, buf, 1))
			return 1;
		*s = '/';
	}
	return lc_filters_excluded(f, name, is_dir);
}

void
lc_filters_free(struct lc_filters *f)
{
	for (size_t i = 0; i < f->n; i++)
		lc_rule_free(&f->r[i]);
	free(f->r);
	f->r = NULL;
	f->n = 0;
}

int
lc_filters_read(struct lc_filters *f, int kind, const char *path,
    struct lc_err *e)
{
	FILE *fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	char line[LC_FILTER_PAT_MAX + 2];
	unsigned lineno = 0;
	size_t n;
	int r = 0;

	if (fp == NULL)
		return lc_err_sys(e, LC_ERR_USAGE, errno, "%s", path);
	while (r == 0 && fgets(line, sizeof(line), fp) != NULL) {
		lineno++;
		n = strlen(line);
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		else if (!feof(fp)) {
			r = lc_err_set(e, LC_ERR_USAGE,
			    "%s:%u: a pattern is "
			    "shorter than %u bytes",
			    path, lineno, LC_FILTER_PAT_MAX);
			break;
		}
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		if (n == 0 || line[0] == '#' || line[0] == ';')
			continue;
		if ((r = lc_filters_add(f, kind, line, e)) == -LC_ERR_USAGE) {
			char why[sizeof(e->msg)];
			snprintf(why, sizeof(why), "%s", e->msg);
			lc_err_set(e, LC_ERR_USAGE, "%s:%u: %s", path, lineno,
			    why);
		}
	}
	if (r == 0 && ferror(fp))
		r = lc_err_sys(e, LC_ERR_USAGE, errno, "%s", path);
	if (fp != stdin)
		fclose(fp);
	return r;
}
