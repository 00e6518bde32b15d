/*
 * Names and ids through the C library's name service switch (idname.h):
 * lanecp's implementation.  Not in lc_base: the program that links it
 * chooses it (src/CMakeLists.txt).
 */
#include "idname.h"
#include "err.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>

/* large enough for most group entries; ERANGE is then "failed" */
#define LC_ID_NSS_BUF 16384

static int
lc_id_nss_pw(int r, const struct passwd *res, struct lc_idpw *out)
{
	if (r != 0 && r != ENOENT && r != ESRCH)
		return -LC_ERR_IO;
	if (res == NULL || strlen(res->pw_name) >= sizeof(out->name) ||
	    (res->pw_dir != NULL && strlen(res->pw_dir) >= sizeof(out->home)))
		return 0;
	out->uid = (uint32_t)res->pw_uid;
	out->gid = (uint32_t)res->pw_gid;
	snprintf(out->name, sizeof(out->name), "%s", res->pw_name);
	snprintf(out->home, sizeof(out->home), "%s",
	    res->pw_dir != NULL ? res->pw_dir : "");
	return 1;
}

int
lc_id_user_byname(const char *name, struct lc_idpw *pw)
{
	char buf[LC_ID_NSS_BUF];
	struct passwd p, *res = NULL;
	int r = getpwnam_r(name, &p, buf, sizeof(buf), &res);

	return lc_id_nss_pw(r, res, pw);
}

int
lc_id_user_byuid(uint32_t uid, struct lc_idpw *pw)
{
	char buf[LC_ID_NSS_BUF];
	struct passwd p, *res = NULL;
	int r = getpwuid_r((uid_t)uid, &p, buf, sizeof(buf), &res);

	return lc_id_nss_pw(r, res, pw);
}

int
lc_id_group_byname(const char *name, uint32_t *gid)
{
	char buf[LC_ID_NSS_BUF];
	struct group g, *res = NULL;
	int r = getgrnam_r(name, &g, buf, sizeof(buf), &res);

	if (r != 0 && r != ENOENT && r != ESRCH)
		return -LC_ERR_IO;
	if (res == NULL)
		return 0;
	*gid = (uint32_t)res->gr_gid;
	return 1;
}

int
lc_id_group_bygid(uint32_t gid, char *name, size_t namesz)
{
	char buf[LC_ID_NSS_BUF];
	struct group g, *res = NULL;
	int r = getgrgid_r((gid_t)gid, &g, buf, sizeof(buf), &res);

	if (r != 0 && r != ENOENT && r != ESRCH)
		return -LC_ERR_IO;
	if (res == NULL || strlen(res->gr_name) >= namesz)
		return 0;
	snprintf(name, namesz, "%s", res->gr_name);
	return 1;
}

const char *
lc_id_source(void)
{
	return "nss";
}
