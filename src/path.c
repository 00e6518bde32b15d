/* Path strings: basename and dirname without touching the disk. */
#include "lanecp/path.h"

#include <stdio.h>
#include <string.h>

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
	size_t i = 0;

	if (outsz == 0)
		return;
	for (; *in != '\0' && i + 1 < outsz; in++, i++) {
		unsigned char ch = (unsigned char)*in;
		out[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	out[i] = '\0';
}
