/*
 * /etc/passwd and /etc/group as the pushed agent reads them (idfile.h):
 * the input is a whole file, looked up both ways in both kinds.  What a
 * lookup finds must be an entry as idfile.h promises one.
 */
#include "idfile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
lc_fuzz_idfile_check(const struct lc_idfile_ent *ent)
{
	size_t n = strlen(ent->name);

	if (n == 0 || n >= sizeof(ent->name) || ent->id == UINT32_MAX ||
	    ent->gid == UINT32_MAX || strlen(ent->home) >= sizeof(ent->home))
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)ent->name[i] <= ' ' || ent->name[i] == ':')
			abort();
}

static void
lc_fuzz_idfile_one(const uint8_t *data, size_t size, enum lc_idfile_kind k)
{
	struct lc_idfile_ent ent, again;
	FILE *f = fmemopen((void *)(uintptr_t)data, size, "r");

	if (f == NULL)
		return;
	if (lc_idfile_find(f, k, NULL, 0, &ent) == 1) {
		lc_fuzz_idfile_check(&ent);
		/* by its name: this entry or an earlier one of that name */
		rewind(f);
		if (lc_idfile_find(f, k, ent.name, 0, &again) != 1 ||
		    strcmp(again.name, ent.name) != 0)
			abort();
		lc_fuzz_idfile_check(&again);
	}
	rewind(f);
	if (lc_idfile_find(f, k, "root", 0, &ent) == 1 &&
	    strcmp(ent.name, "root") != 0)
		abort();
	fclose(f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0 || size > 1u << 20)
		return 0;
	lc_fuzz_idfile_one(data, size, LC_IDFILE_PASSWD);
	lc_fuzz_idfile_one(data, size, LC_IDFILE_GROUP);
	return 0;
}
