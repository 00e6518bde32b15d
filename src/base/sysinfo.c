/* Small values read from /proc and /sys. */
#include "sysinfo.h"

#include <inttypes.h>
#include <stdio.h>

uint64_t
lc_proc_u64(const char *path)
{
	return lc_proc_u64_field(path, 0);
}

uint64_t
lc_proc_u64_field(const char *path, unsigned idx)
{
	char buf[128];
	uint64_t v = 0;
	FILE *f = fopen(path, "re");
	const char *p = buf;
	int used = 0;

	if (f == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) != NULL) {
		for (unsigned i = 0; i <= idx; i++, p += used) {
			if (sscanf(p, "%" SCNu64 "%n", &v, &used) != 1) {
				v = 0;
				break;
			}
		}
	}
	fclose(f);
	return v;
}
