/*
 * Command line location parser, the remote agent's ~ expansion of its
 * path, and the size parser on arbitrary text.
 */
#include "location.h"
#include "parse.h"
#include "path.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[8192];
	struct lc_location l;
	struct lc_err e;
	uint64_t v;

	if (size >= sizeof(s))
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (lc_location_parse(s, &l, &e) == 0) {
		char x[64];

		if (strlen(l.path) == 0 || (l.host[0] == '\0' &&
		    l.user[0] != '\0'))
			abort();
		/* a small output: the cut must be an error, never a
		   short or unterminated path */
		if (lc_path_expand_tilde(l.path, x, sizeof(x), &e) == 0 &&
		    (strlen(x) >= sizeof(x) || (l.path[0] != '~' &&
		    strcmp(x, l.path) != 0) || (l.path[0] == '~' &&
		    strchr(l.path, '/') != NULL && strcmp(x + strlen(x) -
		    strlen(strchr(l.path, '/')), strchr(l.path, '/')) != 0)))
			abort();
	}
	if (lc_parse_size(s, 0, UINT64_MAX, &v) == 0 && s[0] == '\0')
		abort();
	return 0;
}
