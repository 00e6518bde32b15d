/* Small values read from /proc and /sys. */
#include "sysinfo.h"

#include <inttypes.h>
#include <stdio.h>

uint64_t
lc_proc_u64(const char *path)
{
	char buf[64];
	uint64_t v = 0;
	FILE *f = fopen(path, "re");

	if (f == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) != NULL) {
		if (sscanf(buf, "%" SCNu64, &v) != 1)
			v = 0;
	}
	fclose(f);
	return v;
}
