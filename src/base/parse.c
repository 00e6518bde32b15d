#include "parse.h"
#include "err.h"

#include <stdio.h>
#include <string.h>

static int
lc_parse_digits(const char **sp, uint64_t *out)
{
	const char *s = *sp;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -LC_ERR_USAGE;
	for (; *s >= '0' && *s <= '9'; s++) {
		uint64_t d = (uint64_t)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -LC_ERR_TOOBIG;
		v = v * 10 + d;
	}
	*sp = s;
	*out = v;
	return 0;
}

int
lc_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;
	int r;

	*out = 0;
	if (s == NULL)
		return -LC_ERR_USAGE;
	if ((r = lc_parse_digits(&s, &v)) != 0)
		return r;
	if (*s != '\0')
		return -LC_ERR_USAGE;
	if (v < min || v > max)
		return -LC_ERR_TOOBIG;
	*out = v;
	return 0;
}

int
lc_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v, mult = 1;
	int r;

	*out = 0;
	if (s == NULL)
		return -LC_ERR_USAGE;
	if ((r = lc_parse_digits(&s, &v)) != 0)
		return r;
	switch (*s) {
	case 'k': case 'K': mult = 1ULL << 10; s++; break;
	case 'm': case 'M': mult = 1ULL << 20; s++; break;
	case 'g': case 'G': mult = 1ULL << 30; s++; break;
	case 't': case 'T': mult = 1ULL << 40; s++; break;
	default: break;
	}
	if (mult > 1 && (*s == 'b' || *s == 'B'))
		s++;
	if (*s != '\0')
		return -LC_ERR_USAGE;
	if (v > UINT64_MAX / mult)
		return -LC_ERR_TOOBIG;
	v *= mult;
	if (v < min || v > max)
		return -LC_ERR_TOOBIG;
	*out = v;
	return 0;
}

int
lc_parse_seconds(const char *s, uint64_t min_s, uint64_t max_s,
    uint64_t *out_ms)
{
	uint64_t whole, ms = 0;
	int r, digits = 0;

	*out_ms = 0;
	if (s == NULL)
		return -LC_ERR_USAGE;
	if ((r = lc_parse_digits(&s, &whole)) != 0)
		return r;
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -LC_ERR_USAGE;
		for (; *s >= '0' && *s <= '9'; s++, digits++) {
			if (digits < 3)
				ms = ms * 10 + (uint64_t)(*s - '0');
		}
		for (; digits < 3; digits++)
			ms *= 10;
	}
	if (*s != '\0')
		return -LC_ERR_USAGE;
	if (whole > max_s || (whole == max_s && ms > 0) ||
	    (whole < min_s))
		return -LC_ERR_TOOBIG;
	*out_ms = whole * 1000 + ms;
	return 0;
}

char *
lc_fmt_bytes(char *buf, unsigned long sz, uint64_t n)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	unsigned u = 0;

	while (v >= 1024.0 && u < 4) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, sz, "%llu B", (unsigned long long)n);
	else
		snprintf(buf, sz, "%.1f %s", v, unit[u]);
	return buf;
}

char *
lc_fmt_count(char *buf, unsigned long sz, uint64_t n)
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%llu",
	    (unsigned long long)n);
	unsigned long o = 0;

	if (sz == 0)
		return buf;
	for (int i = 0; i < len && o + 2 < sz; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}
