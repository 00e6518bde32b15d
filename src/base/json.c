/*
 * JSON string escaping for --json (see json.h).
 */
#include "json.h"
#include "err.h"

#include <string.h>

size_t
lc_utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (n == 0)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;	/* continuation byte, overlong lead, > U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0;	/* overlong 3-byte form */
	else if (c == 0xed)
		hi = 0x9f;	/* UTF-16 surrogates */
	else if (c == 0xf0)
		lo = 0x90;	/* overlong 4-byte form */
	else if (c == 0xf4)
		hi = 0x8f;	/* above U+10FFFF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* Escape for one byte below 0x80, NULL if it stands for itself. */
static const char *
lc_json_esc(unsigned char c, char tmp[8])
{
	static const char hex[] = "0123456789abcdef";

	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	case '\b':
		return "\\b";
	case '\f':
		return "\\f";
	default:
		break;
	}
	if (c >= 0x20)
		return NULL;
	memcpy(tmp, "\\u00", 4);
	tmp[4] = hex[c >> 4];
	tmp[5] = hex[c & 15];
	tmp[6] = '\0';
	return tmp;
}

int
lc_json_put_str(struct lc_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), start = lc_buf_len(b), i = 0, len;
	char tmp[8];
	const char *esc;
	int r;

	if ((r = lc_buf_put_u8(b, '"')) != 0)
		return r;
	while (r == 0 && i < n) {
		len = lc_utf8_seq_len(p + i, n - i);
		if (len == 0) {
			r = lc_buf_put(b, "\\ufffd", 6);
			i++;
		} else if (len == 1 && (esc = lc_json_esc(p[i], tmp)) != NULL) {
			r = lc_buf_put(b, esc, strlen(esc));
			i++;
		} else {
			r = lc_buf_put(b, p + i, len);
			i += len;
		}
	}
	if (r == 0)
		r = lc_buf_put_u8(b, '"');
	if (r != 0)
		lc_buf_unappend(b, lc_buf_len(b) - start);
	return r;
}
