/*
 * Control messages from one table.  wire_msgs.def lists every message
 * (type, name, owner, body) and every body's fields in wire order; this
 * file turns the table into field descriptors and runs one encoder and one
 * decoder over them.  What no field kind says is in wire_checks.c, per
 * body and only that: lc__msg_check_<body> (a decoded body's values, after
 * its last byte), lc__msg_precheck_<body> (what an encoder refuses) and
 * the hooks (parts of a body laid out in a way of their own).  The bytes
 * are those docs/PROTOCOL.md describes; test_wire_golden pins them.
 */
#include "wire_int.h"
#include "err.h"

#include <stddef.h>
#include <string.h>

/* ---- frames ---- */

/*
 * Frame construction: lc_msg_begin() appends the length placeholder and the
 * type, lc_msg_finish() fills in the length.  On any failure the partial
 * frame is removed again so that out only ever holds whole frames.
 */
static size_t
lc_msg_begin(struct lc_buf *out, uint8_t type, int *r)
{
	size_t start = lc_buf_len(out);

	*r = lc_buf_put_u32(out, 0);
	if (*r == 0)
		*r = lc_buf_put_u8(out, type);
	return start;
}

static int
lc_msg_finish(struct lc_buf *out, size_t start, int r)
{
	size_t flen = lc_buf_len(out) - start;

	if (r == 0 && flen - 4 > LC_CTL_MAX)
		r = -LC_ERR_TOOBIG;
	if (r != 0) {
		lc_buf_unappend(out, flen);
		return r;
	}
	lc_buf_poke_u32(out, start, (uint32_t)(flen - 4));
	return 0;
}

int
lc_msg_peek(const uint8_t *buf, size_t len, uint8_t *type,
    const uint8_t **payload, size_t *plen, size_t *framelen)
{
	uint32_t flen;

	if (len < 4)
		return 0;
	flen = lc_peek_u32(buf);
	if (flen == 0 || flen > LC_CTL_MAX)
		return -LC_ERR_PROTO;
	if (len - 4 < flen)
		return 0;
	*type = buf[4];
	*payload = buf + 5;
	*plen = flen - 1;
	*framelen = 4 + (size_t)flen;
	return 1;
}
/* ---- the field kinds and the bodies ---- */

enum lc_field_kind {
	LC_F_END = 0,
	LC_F_U8,
	LC_F_U16,
	LC_F_U32,
	LC_F_U64,
	LC_F_I64,
	LC_F_STR,
	LC_F_BYTES,
	LC_F_PORTS_N,
	LC_F_PORTS_BY,
	LC_F_HOOK,
};

struct lc_field {
	enum lc_field_kind kind;
	size_t off;		/* of the member in the body */
	size_t size;		/* of the member */
	size_t count;		/* PORTS_*: offset of the u32 count member */
	const struct lc_msg_hook *hook;
};

struct lc_body {
	const struct lc_field *(*fields)(void);	/* ends with LC_F_END */
	size_t size;			/* of the struct */
	int (*check)(const void *m);	/* decoded: 0 or -LC_ERR_PROTO */
	int (*precheck)(const void *m);	/* to encode: 0 or -LC_ERR_TOOBIG */
};

/* ---- the table, expanded ---- */

#define LC_FD_U8(mb) LC_FD_PLAIN(LC_F_U8, mb)
#define LC_FD_U16(mb) LC_FD_PLAIN(LC_F_U16, mb)
#define LC_FD_U32(mb) LC_FD_PLAIN(LC_F_U32, mb)
#define LC_FD_U64(mb) LC_FD_PLAIN(LC_F_U64, mb)
#define LC_FD_I64(mb) LC_FD_PLAIN(LC_F_I64, mb)
#define LC_FD_STR(mb) LC_FD_PLAIN(LC_F_STR, mb)
#define LC_FD_BYTES(mb) LC_FD_PLAIN(LC_F_BYTES, mb)
#define LC_FD_PLAIN(k, mb) \
	{ k, offsetof(lc__t, mb), sizeof(((lc__t *)0)->mb), 0, NULL },
#define LC_FD_HOOK(name) { LC_F_HOOK, 0, 0, 0, &lc__msg_hook_##name },
#define LC_FDN_PORTS_N(mb, cnt) LC_FD_COUNTED(LC_F_PORTS_N, mb, cnt)
#define LC_FDN_PORTS_BY(mb, cnt) LC_FD_COUNTED(LC_F_PORTS_BY, mb, cnt)
#define LC_FD_COUNTED(k, mb, cnt) \
	{ k, offsetof(lc__t, mb), sizeof(((lc__t *)0)->mb), \
	  offsetof(lc__t, cnt), NULL },

/*
 * Each body's fields, as a function so that its struct has a short name
 * (lc__t) in the initializers.  The integer kinds are as wide as their
 * members, or the build fails.
 */
#define LC_WIDTH_U8 1
#define LC_WIDTH_U16 2
#define LC_WIDTH_U32 4
#define LC_WIDTH_U64 8
#define LC_WIDTH_I64 8
#define LC_WIDTH_STR 0
#define LC_WIDTH_BYTES 0
#define LC_WIDTH_HOOK 0
#define F(kind, mb) LC_FD_##kind(mb)
#define FN(kind, mb, cnt) LC_FDN_##kind(mb, cnt)
#define LC_BODY(body, type, checks, fields)				\
	static const struct lc_field *					\
	lc_msg_fields_##body(void)					\
	{								\
		typedef struct lc_msg_##body lc__t;			\
		static const struct lc_field f[] = {			\
			fields						\
			{ LC_F_END, 0, 0, 0, NULL }			\
		};							\
		return f;						\
	}
#include "wire_msgs.def"
#undef LC_BODY
#undef F
#undef FN

#define LC_WIDTH_OK(kind, mb) \
	_Static_assert(LC_WIDTH_##kind == 0 || \
	    sizeof(((lc__t *)0)->mb) == LC_WIDTH_##kind, "width of " #mb);
#define F(kind, mb) LC_WIDTH_OK_##kind(mb)
#define LC_WIDTH_OK_U8(mb) LC_WIDTH_OK(U8, mb)
#define LC_WIDTH_OK_U16(mb) LC_WIDTH_OK(U16, mb)
#define LC_WIDTH_OK_U32(mb) LC_WIDTH_OK(U32, mb)
#define LC_WIDTH_OK_U64(mb) LC_WIDTH_OK(U64, mb)
#define LC_WIDTH_OK_I64(mb) LC_WIDTH_OK(I64, mb)
#define LC_WIDTH_OK_STR(mb)
#define LC_WIDTH_OK_BYTES(mb)
#define LC_WIDTH_OK_HOOK(mb)
#define FN(kind, mb, cnt) \
	_Static_assert(sizeof(((lc__t *)0)->cnt) == 4, "count " #cnt); \
	_Static_assert(sizeof(((lc__t *)0)->mb[0]) == 2, "port " #mb);
#define LC_BODY(body, type, checks, fields)				\
	static inline void						\
	lc_msg_widths_##body(void)					\
	{								\
		typedef struct lc_msg_##body lc__t;			\
		fields							\
		(void)sizeof(lc__t);					\
	}
#include "wire_msgs.def"
#undef LC_BODY
#undef F
#undef FN

#define LC_CHECK_NONE(body) NULL
#define LC_CHECK_CHECK(body) lc__msg_check_##body
#define LC_CHECK_PRE(body) NULL
#define LC_CHECK_BOTH(body) lc__msg_check_##body
#define LC_PRE_NONE(body) NULL
#define LC_PRE_CHECK(body) NULL
#define LC_PRE_PRE(body) lc__msg_precheck_##body
#define LC_PRE_BOTH(body) lc__msg_precheck_##body
#define LC_BODY(body, type, checks, fields)				\
	static const struct lc_body lc_body_##body = {			\
		lc_msg_fields_##body, sizeof(struct lc_msg_##body),	\
		LC_CHECK_##checks(body), LC_PRE_##checks(body),		\
	};
#include "wire_msgs.def"
#undef LC_BODY

/* no payload: BYE, SRC_NOMORE, STOP */
static const struct lc_field *
lc_msg_fields_empty(void)
{
	static const struct lc_field f[] = { { LC_F_END, 0, 0, 0, NULL } };

	return f;
}

static const struct lc_body lc_body_empty = {
	lc_msg_fields_empty, 0, NULL, NULL,
};

struct lc_msg_info {
	const char *name;
	int owner;
	const struct lc_body *body;
};

static const struct lc_msg_info lc_msgs[256] = {
#define LC_MSG(name, code, owner, body) \
	[code] = { #name, owner, &lc_body_##body },
#include "wire_msgs.def"
#undef LC_MSG
};

const char *
lc_msg_name(uint8_t type)
{
	return lc_msgs[type].name != NULL ? lc_msgs[type].name : "?";
}

int
lc_msg_owner(uint8_t type)
{
	return lc_msgs[type].owner;
}
/* ---- one encoder and one decoder for every body ---- */

static int
lc_msg_put_field(struct lc_buf *out, const struct lc_field *f,
    const void *m)
{
	const uint8_t *at = (const uint8_t *)m + f->off;
	uint64_t v64;
	uint32_t v32, n;
	uint16_t v16;

	switch (f->kind) {
	case LC_F_U8:
		return lc_buf_put_u8(out, *at);
	case LC_F_U16:
		memcpy(&v16, at, sizeof(v16));
		return lc_buf_put_u16(out, v16);
	case LC_F_U32:
		memcpy(&v32, at, sizeof(v32));
		return lc_buf_put_u32(out, v32);
	case LC_F_U64:
	case LC_F_I64:	/* the same bytes: two's complement */
		memcpy(&v64, at, sizeof(v64));
		return lc_buf_put_u64(out, v64);
	case LC_F_STR:
		return lc_buf_put_cstring(out, (const char *)at);
	case LC_F_BYTES:
		return lc_buf_put(out, at, f->size);
	case LC_F_PORTS_N:
	case LC_F_PORTS_BY:
		memcpy(&n, (const uint8_t *)m + f->count, sizeof(n));
		if (n > f->size / sizeof(uint16_t))
			return -LC_ERR_TOOBIG;
		if (f->kind == LC_F_PORTS_N) {
			int r = lc_buf_put_u32(out, n);
			if (r != 0)
				return r;
		}
		return lc__msg_put_ports(out, (const uint16_t *)(const void *)at,
		    n);
	case LC_F_HOOK:
		return f->hook->put(out, m);
	default:
		return -LC_ERR_INTERNAL;
	}
}

static int
lc_msg_get_field(struct lc_rd *rd, const struct lc_field *f, void *m)
{
	uint8_t *at = (uint8_t *)m + f->off;
	uint64_t v64;
	uint32_t v32, n;
	uint16_t v16;

	switch (f->kind) {
	case LC_F_U8:
		return lc_rd_get_u8(rd, at);
	case LC_F_U16:
		if (lc_rd_get_u16(rd, &v16) != 0)
			return -LC_ERR_PROTO;
		memcpy(at, &v16, sizeof(v16));
		return 0;
	case LC_F_U32:
		if (lc_rd_get_u32(rd, &v32) != 0)
			return -LC_ERR_PROTO;
		memcpy(at, &v32, sizeof(v32));
		return 0;
	case LC_F_U64:
	case LC_F_I64:
		if (lc_rd_get_u64(rd, &v64) != 0)
			return -LC_ERR_PROTO;
		memcpy(at, &v64, sizeof(v64));
		return 0;
	case LC_F_STR:
		return lc_rd_get_cstring(rd, (char *)at, f->size);
	case LC_F_BYTES:
		return lc_rd_get_bytes(rd, at, f->size);
	case LC_F_PORTS_N:
	case LC_F_PORTS_BY:
		if (f->kind == LC_F_PORTS_N) {
			if (lc_rd_get_u32(rd, &n) != 0)
				return -LC_ERR_PROTO;
			memcpy((uint8_t *)m + f->count, &n, sizeof(n));
		} else {
			memcpy(&n, (uint8_t *)m + f->count, sizeof(n));
		}
		return lc__msg_get_ports(rd, (uint16_t *)(void *)at, n,
		    f->size / sizeof(uint16_t));
	case LC_F_HOOK:
		return f->hook->get(rd, m);
	default:
		return -LC_ERR_INTERNAL;
	}
}

static int
lc_msg_put_body(struct lc_buf *out, uint8_t type, const struct lc_body *b,
    const void *m)
{
	int r;
	size_t s = lc_msg_begin(out, type, &r);

	if (r == 0 && b->precheck != NULL && b->precheck(m) != 0)
		r = -LC_ERR_TOOBIG;
	for (const struct lc_field *f = b->fields(); r == 0 &&
	    f->kind != LC_F_END; f++)
		r = lc_msg_put_field(out, f, m);
	return lc_msg_finish(out, s, r);
}

/*
 * A FILE comes once a file, and its strings are 8 KiB: clear the fixed
 * fields and empty the strings, not the whole struct.
 */
static void
lc_msg_clear_file(struct lc_msg_file *m)
{
	memset(m, 0, offsetof(struct lc_msg_file, name));
	m->name[0] = m->link[0] = m->user[0] = m->group[0] = '\0';
	m->uid = m->gid = 0;
}

static int
lc_msg_get_body(const struct lc_body *b, const uint8_t *p, size_t n,
    void *m)
{
	struct lc_rd rd;
	int r;

	if (b == &lc_body_file)
		lc_msg_clear_file(m);
	else
		memset(m, 0, b->size);
	lc_rd_init(&rd, p, n);
	for (const struct lc_field *f = b->fields(); f->kind != LC_F_END;
	    f++) {
		if ((r = lc_msg_get_field(&rd, f, m)) != 0)
			return r == -LC_ERR_VERSION ? r : -LC_ERR_PROTO;
	}
	if (lc_rd_end(&rd) != 0 || (b->check != NULL && b->check(m) != 0))
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_msg_put(struct lc_buf *out, uint8_t type, const void *m)
{
	const struct lc_body *b = lc_msgs[type].body;
	int r;

	if (b == NULL) {	/* not in the table */
		size_t s = lc_msg_begin(out, type, &r);
		return lc_msg_finish(out, s, r != 0 ? r : -LC_ERR_INTERNAL);
	}
	return lc_msg_put_body(out, type, b, m);
}

int
lc_msg_get(uint8_t type, const uint8_t *p, size_t n, union lc_msg_any *m)
{
	const struct lc_body *b = lc_msgs[type].body;

	return b != NULL ? lc_msg_get_body(b, p, n, m) : -LC_ERR_PROTO;
}

/*
 * lc_msg_put_<body> and lc_msg_get_<body>.  The type column is TYPE(X)
 * or NONE: LC_PUT_##type pastes into LC_PUT_TYPE(X), which opens
 * LC_PUT_TYPED(X, body), or LC_PUT_NONE, which opens LC_PUT_DROP(body):
 * a body with type NONE has its encoder written out below (it takes the
 * type, or more).
 */
#define LC_PUT_TYPE(code) LC_PUT_TYPED(code,
#define LC_PUT_NONE LC_PUT_DROP(
#define LC_PUT_DROP(body)
#define LC_PUT_TYPED(code, body)					\
	int								\
	lc_msg_put_##body(struct lc_buf *out,				\
	    const struct lc_msg_##body *m)				\
	{								\
		return lc_msg_put_body(out, LC_MSG_##code,		\
		    &lc_body_##body, m);				\
	}
#define LC_BODY(body, type, checks, fields)				\
	LC_PUT_##type body)						\
	int								\
	lc_msg_get_##body(const uint8_t *p, size_t n,			\
	    struct lc_msg_##body *m)					\
	{								\
		return lc_msg_get_body(&lc_body_##body, p, n, m);	\
	}
#include "wire_msgs.def"
#undef LC_BODY

int
lc_msg_put_error(struct lc_buf *out, uint32_t code, const char *msg)
{
	struct lc_msg_error m;
	size_t len = strlen(msg);

	/* a longer message is cut to what a decoder takes */
	if (len >= sizeof(m.msg))
		len = sizeof(m.msg) - 1;
	m.code = code;
	memcpy(m.msg, msg, len);
	m.msg[len] = '\0';
	return lc_msg_put_body(out, LC_MSG_ERROR, &lc_body_error, &m);
}

int
lc_msg_put_xfer_done(struct lc_buf *out, uint8_t type,
    const struct lc_msg_xfer_done *m)
{
	return lc_msg_put_body(out, type, &lc_body_xfer_done, m);
}

int
lc_msg_put_empty(struct lc_buf *out, uint8_t type)
{
	return lc_msg_put_body(out, type, &lc_body_empty, NULL);
}

int
lc_msg_get_empty(const uint8_t *p, size_t n)
{
	(void)p;
	return n == 0 ? 0 : -LC_ERR_PROTO;
}
