/*
 * Names and ids from /etc/passwd and /etc/group, no NSS (idname.h): the
 * static lanecp-agent's implementation.  Not in lc_base: the program that
 * links it chooses it (src/CMakeLists.txt).  Every lookup reads the file
 * again (the callers keep the last answer), so an edit is seen at once.
 */
#include "idname.h"
#include "idfile.h"
#include "err.h"

#include <stdio.h>
#include <string.h>

#define LC_ID_PASSWD "/etc/passwd"
#define LC_ID_GROUP "/etc/group"

/* 1, 0 or -LC_ERR_IO (see idname.h); *ent as lc_idfile_find's */
static int
lc_id_files_find(enum lc_idfile_kind k, const char *name, uint32_t id,
    struct lc_idfile_ent *ent)
{
	FILE *f = fopen(k == LC_IDFILE_PASSWD ? LC_ID_PASSWD : LC_ID_GROUP,
	    "re");
	int r;

	if (f == NULL)
		return -LC_ERR_IO;
	r = lc_idfile_find(f, k, name, id, ent);
	fclose(f);
	return r < 0 ? -LC_ERR_IO : r;
}

static int
lc_id_files_pw(const char *name, uint32_t uid, struct lc_idpw *pw)
{
	struct lc_idfile_ent ent;
	int r = lc_id_files_find(LC_IDFILE_PASSWD, name, uid, &ent);

	if (r != 1)
		return r;
	if (strlen(ent.name) >= sizeof(pw->name) ||
	    strlen(ent.home) >= sizeof(pw->home))
		return 0;
	pw->uid = ent.id;
	pw->gid = ent.gid;
	snprintf(pw->name, sizeof(pw->name), "%s", ent.name);
	snprintf(pw->home, sizeof(pw->home), "%s", ent.home);
	return 1;
}

int
lc_id_user_byname(const char *name, struct lc_idpw *pw)
{
	return lc_id_files_pw(name, 0, pw);
}

int
lc_id_user_byuid(uint32_t uid, struct lc_idpw *pw)
{
	return lc_id_files_pw(NULL, uid, pw);
}

int
lc_id_group_byname(const char *name, uint32_t *gid)
{
	struct lc_idfile_ent ent;
	int r = lc_id_files_find(LC_IDFILE_GROUP, name, 0, &ent);

	if (r == 1)
		*gid = ent.id;
	return r;
}

int
lc_id_group_bygid(uint32_t gid, char *name, size_t namesz)
{
	struct lc_idfile_ent ent;
	int r = lc_id_files_find(LC_IDFILE_GROUP, NULL, gid, &ent);

	if (r != 1)
		return r;
	if (strlen(ent.name) >= namesz)
		return 0;
	snprintf(name, namesz, "%s", ent.name);
	return 1;
}

const char *
lc_id_source(void)
{
	return "files";
}
