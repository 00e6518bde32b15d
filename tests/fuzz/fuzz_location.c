/* Command line location parser and the size parser on arbitrary text. */
#include "lanecp/location.h"
#include "lanecp/parse.h"

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
		if (strlen(l.path) == 0 || (l.host[0] == '\0' &&
		    l.user[0] != '\0'))
			abort();
	}
	if (lc_parse_size(s, 0, UINT64_MAX, &v) == 0 && s[0] == '\0')
		abort();
	return 0;
}
