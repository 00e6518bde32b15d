/* /etc/passwd and /etc/group taken apart without NSS (see idfile.h). */
#include "idfile.h"

#include <errno.h>
#include <string.h>

#define LC_IDFILE_FIELDS_MAX 7

/* A decimal id below 4294967295 from s[0..n): 0, or -1. */
static int
lc_idfile_id(const char *s, size_t n, uint32_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 10)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v >= UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int
lc_idfile_name(const char *s, size_t n, char *out)
{
	if (n == 0 || n >= LC_IDFILE_NAME_MAX || s[0] == '+' || s[0] == '-' ||
	    s[0] == '#')
		return -1;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f)
			return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

int
lc_idfile_parse(enum lc_idfile_kind k, const char *line, size_t len,
    struct lc_idfile_ent *ent)
{
	const char *f[LC_IDFILE_FIELDS_MAX];
	size_t flen[LC_IDFILE_FIELDS_MAX], nf = 0, start = 0;
	/* a passwd entry: name:pw:uid:gid:gecos:home:shell; a group's:
	 * name:pw:gid:members (no ':' in the last field of either) */
	size_t want = k == LC_IDFILE_PASSWD ? 7 : 4;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && line[i] != ':')
			continue;
		if (nf == want)
			return 0; /* a field too many */
		f[nf] = line + start;
		flen[nf++] = i - start;
		start = i + 1;
	}
	if (nf != want || lc_idfile_name(f[0], flen[0], ent->name) != 0 ||
	    lc_idfile_id(f[2], flen[2], &ent->id) != 0)
		return 0;
	ent->gid = ent->id;
	ent->home[0] = '\0';
	if (k == LC_IDFILE_GROUP)
		return 1;
	if (lc_idfile_id(f[3], flen[3], &ent->gid) != 0 ||
	    flen[5] >= sizeof(ent->home) || memchr(f[5], '\0', flen[5]))
		return 0;
	memcpy(ent->home, f[5], flen[5]);
	ent->home[flen[5]] = '\0';
	return 1;
}

/*
 * The next line of f into buf: its first LC_IDFILE_LINE_MAX bytes (the
 * rest is read and dropped).  Its length, or -1 at the end of f or on an
 * error (then ferror(f) is true).
 */
static long
lc_idfile_line(FILE *f, char *buf)
{
	size_t n = 0;
	int c, any = 0;

	while ((c = getc_unlocked(f)) != EOF && c != '\n') {
		any = 1;
		if (n < LC_IDFILE_LINE_MAX)
			buf[n++] = (char)c;
	}
	if (c == EOF && !any)
		return -1;
	return (long)n;
}

int
lc_idfile_find(FILE *f, enum lc_idfile_kind k, const char *name, uint32_t id,
    struct lc_idfile_ent *ent)
{
	char buf[LC_IDFILE_LINE_MAX];
	long n;

	/* a cut line still holds every field used when it has all its
	 * separators: only its last field (shell, members) is cut, and
	 * nothing uses it; else it is skipped */
	while ((n = lc_idfile_line(f, buf)) >= 0) {
		if (lc_idfile_parse(k, buf, (size_t)n, ent) != 1)
			continue;
		if (name != NULL ? strcmp(ent->name, name) == 0 : ent->id == id)
			return 1;
	}
	if (ferror(f)) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	return 0;
}
