/* Path strings: basename and dirname without touching the disk. */
#include "path.h"
#include "log.h"
#include "err.h"
#include "idname.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
lc_path_basename(const char *p, char *out, size_t outsz)
{
	size_t end = strlen(p), start;

	while (end > 1 && p[end - 1] == '/')
		end--;
	start = end;
	while (start > 0 && p[start - 1] != '/')
		start--;
	if (end == 1 && p[0] == '/')
		start = 0;
	snprintf(out, outsz, "%.*s", (int)(end - start), p + start);
}

void
lc_path_dirname(const char *p, char *out, size_t outsz)
{
	size_t end = strlen(p);

	while (end > 1 && p[end - 1] == '/')
		end--;
	while (end > 0 && p[end - 1] != '/')
		end--;
	if (end == 0) {
		snprintf(out, outsz, ".");
		return;
	}
	while (end > 1 && p[end - 1] == '/')
		end--;
	snprintf(out, outsz, "%.*s", (int)end, p);
}

void
lc_printable(const char *in, char *out, size_t outsz)
{
	(void)lc_log_escape(out, outsz, in);
}

/* The home directory of user ("": ours) into home. */
static int
lc_path_home(const char *user, char *home, size_t homesz, struct lc_err *e)
{
	struct lc_idpw pw;
	const char *h;
	int r;

	if (user[0] == '\0' && (h = getenv("HOME")) != NULL && h[0] == '/') {
		snprintf(home, homesz, "%s", h);
		return 0;
	}
	r = user[0] == '\0' ? lc_id_user_byuid((uint32_t)getuid(), &pw) :
	    lc_id_user_byname(user, &pw);
	if (r != 1 && user[0] != '\0')
		return lc_err_set(e, LC_ERR_IO, "~%.64s: no such user%s", user,
		    r < 0 ? " (the user database cannot be read)" : "");
	if (r != 1 || pw.home[0] != '/')
		return lc_err_set(e, LC_ERR_IO, "~%.64s: no home directory",
		    user);
	snprintf(home, homesz, "%s", pw.home);
	return 0;
}

int
lc_path_expand_tilde(const char *in, char *out, size_t outsz,
    struct lc_err *e)
{
	char user[256], home[4096];
	const char *rest;
	size_t ulen, hlen;
	int r;

	if (in[0] != '~') {
		if (strlen(in) >= outsz)
			return lc_err_set(e, LC_ERR_IO, "%.64s...: name too "
			    "long", in);
		snprintf(out, outsz, "%s", in);
		return 0;
	}
	rest = strchr(in, '/');
	if (rest == NULL)
		rest = in + strlen(in);
	ulen = (size_t)(rest - in - 1);
	if (ulen >= sizeof(user))
		return lc_err_set(e, LC_ERR_IO, "%.64s...: user name too long",
		    in);
	memcpy(user, in + 1, ulen);
	user[ulen] = '\0';
	if ((r = lc_path_home(user, home, sizeof(home), e)) != 0)
		return r;
	/* "/" as home and a rest of "/x": one slash, not two */
	hlen = strlen(home);
	while (hlen > 1 && home[hlen - 1] == '/')
		hlen--;
	if (hlen == 1 && rest[0] == '/')
		hlen = 0;
	if (hlen + strlen(rest) >= outsz)
		return lc_err_set(e, LC_ERR_IO, "%.64s: name too long", in);
	snprintf(out, outsz, "%.*s%s", (int)hlen, home, rest);
	return 0;
}
