/* Value hooks for test builds only (testhook.h); not built otherwise. */
#include "testhook.h"
#include "parse.h"

#include <stdlib.h>

uint64_t
lc_testhook_uint(const char *name, uint64_t lo, uint64_t hi, uint64_t dflt)
{
	const char *s = getenv(name);
	uint64_t v;

	if (s == NULL || lc_parse_uint(s, lo, hi, &v) != 0)
		return dflt;
	return v;
}

const char *
lc_testhook_str(const char *name, const char *dflt)
{
	const char *s = getenv(name);

	return s != NULL && *s != '\0' ? s : dflt;
}
