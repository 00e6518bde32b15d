/*
 * --json output: lc_json_put_str over hostile strings, and the whole
 * lc_copy_json object, checked by a strict JSON validator written here
 * (independent of src/base/json.c: it decodes UTF-8 to code points and
 * rejects overlongs, surrogates, raw controls and bad escapes).
 */
#include "harness.h"

#include "buf.h"
#include "copy.h"
#include "err.h"
#include "json.h"
#include "lc_limits.h"

#include <stdint.h>

struct jv {
	const unsigned char *p, *end;
};

static int jv_value(struct jv *v, int depth);

static void
jv_ws(struct jv *v)
{
	while (v->p < v->end && (*v->p == ' ' || *v->p == '\n' ||
	    *v->p == '\r' || *v->p == '\t'))
		v->p++;
}

/* One UTF-8 character, strictly (RFC 3629). */
static int
jv_utf8(struct jv *v)
{
	unsigned c = *v->p, n, cp, min;

	if (c < 0x80)
		n = 0, cp = c, min = 0;
	else if ((c & 0xe0) == 0xc0)
		n = 1, cp = c & 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		n = 2, cp = c & 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		n = 3, cp = c & 0x07, min = 0x10000;
	else
		return -1;
	if ((size_t)(v->end - v->p) < n + 1)
		return -1;
	for (unsigned i = 1; i <= n; i++) {
		if ((v->p[i] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (v->p[i] & 0x3fu);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	v->p += n + 1;
	return 0;
}

static int
jv_string(struct jv *v)
{
	if (v->p >= v->end || *v->p != '"')
		return -1;
	v->p++;
	while (v->p < v->end && *v->p != '"') {
		if (*v->p < 0x20)
			return -1;
		if (*v->p == '\\') {
			v->p++;
			if (v->p >= v->end)
				return -1;
			if (*v->p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (v->p + i >= v->end ||
					    strchr("0123456789abcdefABCDEF",
					    v->p[i]) == NULL || v->p[i] == 0)
						return -1;
				v->p += 5;
			} else if (strchr("\"\\/bfnrt", *v->p) != NULL &&
			    *v->p != 0) {
				v->p++;
			} else {
				return -1;
			}
			continue;
		}
		if (jv_utf8(v) != 0)
			return -1;
	}
	if (v->p >= v->end)
		return -1;
	v->p++;
	return 0;
}

static int
jv_number(struct jv *v)
{
	const unsigned char *s = v->p;

	if (v->p < v->end && *v->p == '-')
		v->p++;
	if (v->p < v->end && *v->p == '0')
		v->p++;
	else if (v->p < v->end && *v->p >= '1' && *v->p <= '9')
		while (v->p < v->end && *v->p >= '0' && *v->p <= '9')
			v->p++;
	else
		return -1;
	if (v->p < v->end && *v->p == '.') {
		v->p++;
		if (v->p >= v->end || *v->p < '0' || *v->p > '9')
			return -1;
		while (v->p < v->end && *v->p >= '0' && *v->p <= '9')
			v->p++;
	}
	return v->p > s ? 0 : -1;
}

static int
jv_lit(struct jv *v, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(v->end - v->p) < n || memcmp(v->p, w, n) != 0)
		return -1;
	v->p += n;
	return 0;
}

static int
jv_seq(struct jv *v, int depth, char close, int members)
{
	v->p++;
	jv_ws(v);
	if (v->p < v->end && *v->p == close) {
		v->p++;
		return 0;
	}
	for (;;) {
		jv_ws(v);
		if (members) {
			if (jv_string(v) != 0)
				return -1;
			jv_ws(v);
			if (v->p >= v->end || *v->p != ':')
				return -1;
			v->p++;
		}
		if (jv_value(v, depth + 1) != 0)
			return -1;
		jv_ws(v);
		if (v->p < v->end && *v->p == ',') {
			v->p++;
			continue;
		}
		if (v->p < v->end && *v->p == close) {
			v->p++;
			return 0;
		}
		return -1;
	}
}

static int
jv_value(struct jv *v, int depth)
{
	jv_ws(v);
	if (depth > 16 || v->p >= v->end)
		return -1;
	switch (*v->p) {
	case '{':
		return jv_seq(v, depth, '}', 1);
	case '[':
		return jv_seq(v, depth, ']', 0);
	case '"':
		return jv_string(v);
	case 't':
		return jv_lit(v, "true");
	case 'f':
		return jv_lit(v, "false");
	case 'n':
		return jv_lit(v, "null");
	default:
		return jv_number(v);
	}
}

/* 1 if [p, p+n) is exactly one valid JSON text (trailing whitespace ok). */
static int
json_valid(const void *p, size_t n)
{
	struct jv v = { p, (const unsigned char *)p + n };

	if (jv_value(&v, 0) != 0)
		return 0;
	jv_ws(&v);
	return v.p == v.end;
}

/* s escaped, as a NUL-terminated string (static buffer). */
static const char *
esc(const char *s)
{
	static char out[8192];
	struct lc_buf b;

	lc_buf_init(&b, sizeof(out) - 1);
	LC_CHECK(lc_json_put_str(&b, s) == 0);
	LC_CHECK(json_valid(lc_buf_ptr(&b), lc_buf_len(&b)));
	memcpy(out, lc_buf_ptr(&b), lc_buf_len(&b));
	out[lc_buf_len(&b)] = '\0';
	lc_buf_free(&b);
	return out;
}

#define JV(s) json_valid(s, strlen(s))

LC_TEST(validator_self_check)
{
	LC_CHECK(JV("\"a\""));
	LC_CHECK(JV("{\"a\":[1,2.5,true,null,\"\\u00ff\"]}"));
	LC_CHECK(!JV("\"\xff\""));
	LC_CHECK(!JV("\"\xc0\x80\""));		/* overlong */
	LC_CHECK(!JV("\"\xed\xa0\x80\""));	/* surrogate */
	LC_CHECK(!JV("\"\x01\""));
	LC_CHECK(!JV("\"\\x\""));
	LC_CHECK(!JV("{\"a\":1"));
	LC_CHECK(!JV("\"abc"));
}

LC_TEST(plain_and_specials)
{
	LC_CHECK_STR(esc(""), "\"\"");
	LC_CHECK_STR(esc("db.xb"), "\"db.xb\"");
	LC_CHECK_STR(esc("a\"b\\c/"), "\"a\\\"b\\\\c/\"");
	LC_CHECK_STR(esc("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
	LC_CHECK_STR(esc("\x01\x1f\x1b[2J"), "\"\\u0001\\u001f\\u001b[2J\"");
	LC_CHECK_STR(esc("del\x7f"), "\"del\x7f\"");
}

LC_TEST(valid_utf8_passes)
{
	LC_CHECK_STR(esc("caf\xc3\xa9"), "\"caf\xc3\xa9\"");		/* é */
	LC_CHECK_STR(esc("\xe2\x82\xac"), "\"\xe2\x82\xac\"");		/* € */
	LC_CHECK_STR(esc("\xef\xbf\xbd"), "\"\xef\xbf\xbd\"");		/* U+FFFD */
	LC_CHECK_STR(esc("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");	/* 😀 */
	LC_CHECK_STR(esc("\xf4\x8f\xbf\xbf"), "\"\xf4\x8f\xbf\xbf\"");	/* max */
	LC_CHECK_STR(esc("\xed\x9f\xbf"), "\"\xed\x9f\xbf\"");		/* U+D7FF */
}

LC_TEST(invalid_utf8_replaced)
{
	/* stray bytes, as in a hostile name "\xff\x01" */
	LC_CHECK_STR(esc("\xff\x01"), "\"\\ufffd\\u0001\"");
	LC_CHECK_STR(esc("\x80"), "\"\\ufffd\"");
	LC_CHECK_STR(esc("\xfe\xff"), "\"\\ufffd\\ufffd\"");
	/* overlongs: '/', NUL, U+07FF in 3 bytes, U+FFFF in 4 bytes */
	LC_CHECK_STR(esc("\xc0\xaf"), "\"\\ufffd\\ufffd\"");
	LC_CHECK_STR(esc("\xc1\xbf"), "\"\\ufffd\\ufffd\"");
	LC_CHECK_STR(esc("\xe0\x9f\xbf"), "\"\\ufffd\\ufffd\\ufffd\"");
	LC_CHECK_STR(esc("\xf0\x8f\xbf\xbf"),
	    "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* surrogates U+D800, U+DFFF */
	LC_CHECK_STR(esc("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
	LC_CHECK_STR(esc("\xed\xbf\xbf"), "\"\\ufffd\\ufffd\\ufffd\"");
	/* above U+10FFFF */
	LC_CHECK_STR(esc("\xf4\x90\x80\x80"),
	    "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	LC_CHECK_STR(esc("\xf5\x80\x80\x80"),
	    "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* truncated sequences, at the end and before ASCII or a quote */
	LC_CHECK_STR(esc("a\xc3"), "\"a\\ufffd\"");
	LC_CHECK_STR(esc("\xe2\x82"), "\"\\ufffd\\ufffd\"");
	LC_CHECK_STR(esc("\xe2\x82\""), "\"\\ufffd\\ufffd\\\"\"");
	LC_CHECK_STR(esc("\xf0\x9f\x98"), "\"\\ufffd\\ufffd\\ufffd\"");
	LC_CHECK_STR(esc("\xc3\xc3\xa9"), "\"\\ufffd\xc3\xa9\"");
}

LC_TEST(every_byte_pair_is_valid_json)
{
	char s[4];

	for (unsigned a = 1; a < 256; a++)
		for (unsigned b = 0; b < 256; b++) {
			s[0] = (char)a;
			s[1] = (char)b;
			s[2] = (char)0xe2;	/* a truncated tail */
			s[3] = '\0';
			(void)esc(s);
		}
}

LC_TEST(random_bytes_are_valid_json)
{
	char s[64];
	uint32_t x = 12345;

	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)(x % (sizeof(s) - 1));
		for (size_t j = 0; j < n; j++) {
			x = x * 1103515245u + 12345u;
			s[j] = (char)((x >> 16) % 255 + 1);
		}
		s[n] = '\0';
		(void)esc(s);
	}
}

LC_TEST(too_big_leaves_buffer_unchanged)
{
	struct lc_buf b;

	lc_buf_init(&b, 10);
	LC_CHECK(lc_buf_put(&b, "ab", 2) == 0);
	LC_CHECK(lc_json_put_str(&b, "\x01\x02\x03") == -LC_ERR_TOOBIG);
	LC_CHECK_EQ_U(lc_buf_len(&b), 2);
	lc_buf_free(&b);
}

/* The whole --json object with hostile text in every string field. */
LC_TEST(copy_json_object_is_valid)
{
	struct lc_copy_opts o;
	struct lc_copy_result res;
	struct lc_err e;
	char out[1 << 16];
	int fds[2];
	ssize_t n;
	size_t got = 0;

	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	res.files = 1;
	res.nsums = LC_RESULT_SUMS;
	for (int i = 0; i < LC_RESULT_SUMS; i++) {
		memset(res.sums[i].path, '\x01', sizeof(res.sums[i].path) - 1);
		res.sums[i].path[0] = (char)0xff;
		res.sums[i].path[sizeof(res.sums[i].path) - 2] = (char)0xe2;
		snprintf(res.sums[i].sum, sizeof(res.sums[i].sum),
		    "sha256:\"\\\xc0\xaf");
	}
	lc_err_clear(&e);
	e.code = LC_ERR_PROTO;
	memset(e.msg, '"', sizeof(e.msg) - 1);
	memcpy(e.msg, "evil: \xff\x01\xed\xa0\x80\x1b[1m", 14);
	LC_CHECK(pipe(fds) == 0);
	if (fork() == 0) {
		close(fds[0]);
		lc_copy_json(fds[1], &o, &res, &e, 7);
		exit(0);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + got, sizeof(out) - got)) > 0)
		got += (size_t)n;
	close(fds[0]);
	LC_CHECK(got > 0 && got < sizeof(out));
	LC_CHECK(out[got - 1] == '\n');
	LC_CHECK(json_valid(out, got));
	LC_CHECK(memmem(out, got, "\"exit_status\":7,\"error\":\"evil: "
	    "\\ufffd\\u0001\\ufffd\\ufffd\\ufffd\\u001b[1m\\\"", 59) != NULL);
}

/* lc_copy_json of res written to a temporary file and read back whole */
static char *
json_of(const struct lc_copy_result *res, size_t *len)
{
	struct lc_copy_opts o;
	struct lc_err e;
	FILE *f = tmpfile();
	char *out;
	long n;

	LC_CHECK(f != NULL);
	memset(&o, 0, sizeof(o));
	lc_err_clear(&e);
	lc_copy_json(fileno(f), &o, res, &e, 23);
	LC_CHECK((n = lseek(fileno(f), 0, SEEK_END)) > 0);
	LC_CHECK((out = malloc((size_t)n)) != NULL);
	LC_CHECK(pread(fileno(f), out, (size_t)n, 0) == n);
	fclose(f);
	*len = (size_t)n;
	return out;
}

static size_t
count_of(const char *hay, size_t n, const char *needle)
{
	size_t k = 0, l = strlen(needle);
	const char *p = hay, *q;

	while ((q = memmem(p, n - (size_t)(p - hay), needle, l)) != NULL) {
		k++;
		p = q + l;
	}
	return k;
}

/*
 * --json names every failure (issue 24), not the first 64: each with its
 * error, in order, until a bound (LC_RESULT_FAILED_BYTES; 1 MiB here, so
 * that the case stays cheap under the sanitizers), past which it says
 * so; the object stays valid JSON however many it names (it is written in
 * pieces of 512 KiB).
 */
LC_TEST(copy_json_names_every_failure)
{
	struct lc_copy_result res;
	char where[LC_PATH_MAX + 600], err[1024];
	size_t n;
	char *out;

	memset(&res, 0, sizeof(res));
	for (uint32_t i = 0; i < 70; i++) {
		snprintf(where, sizeof(where), "host:/t/f%02u\xff", i);
		lc_copy_result_failed(&res, where, "file exists");
		res.nfailed++;
	}
	LC_CHECK_EQ_U(res.failed_named, 70);
	out = json_of(&res, &n);
	LC_CHECK(json_valid(out, n));
	LC_CHECK_EQ_U(count_of(out, n, "{\"path\":"), 70);
	LC_CHECK_EQ_U(count_of(out, n, "{\"path\":\"host:/t/f69\\ufffd\","
	    "\"error\":\"file exists\"}],\"failed_names_truncated\":false,"),
	    1);
	free(out);

	/* long names until the bound: the rest counted, not named */
	memset(where, 'a', sizeof(where) - 1);
	where[sizeof(where) - 1] = '\0';
	memset(err, 'e', sizeof(err) - 1);
	err[sizeof(err) - 1] = '\0';
	while (!res.failed_truncated && res.nfailed < 100000) {
		lc_copy_result_failed_max(&res, where, err, 1u << 20);
		res.nfailed++;
	}
	LC_CHECK(res.failed_truncated);
	LC_CHECK(res.failed_len <= 1u << 20);
	LC_CHECK(res.failed_named > 150 && res.failed_named < res.nfailed);
	out = json_of(&res, &n);
	/* more than one piece: two writes at least */
	LC_CHECK(n > (1u << 20) - 8192 && out[n - 1] == '\n');
	LC_CHECK(json_valid(out, n));
	LC_CHECK_EQ_U(count_of(out, n, "{\"path\":"), res.failed_named);
	LC_CHECK_EQ_U(count_of(out, n, "\"failed_names_truncated\":true,"),
	    1);
	free(out);
	lc_copy_result_free(&res);
	LC_CHECK(res.failed_text == NULL && res.failed_named == 0);
}

LC_TEST_MAIN()
