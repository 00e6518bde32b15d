#include "wire.h"
#include "err.h"

#include <stddef.h>
#include <string.h>

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

const char *
lc_msg_name(uint8_t type)
{
	switch (type) {
	case LC_MSG_HELLO: return "HELLO";
	case LC_MSG_ERROR: return "ERROR";
	case LC_MSG_BYE: return "BYE";
	case LC_MSG_PING: return "PING";
	case LC_MSG_SRC_ADD: return "SRC_ADD";
	case LC_MSG_FILE: return "FILE";
	case LC_MSG_SRC_LISTED: return "SRC_LISTED";
	case LC_MSG_SINK_TARGET: return "SINK_TARGET";
	case LC_MSG_TARGET_OK: return "TARGET_OK";
	case LC_MSG_FILE_READY: return "FILE_READY";
	case LC_MSG_SRC_NOMORE: return "SRC_NOMORE";
	case LC_MSG_LISTEN: return "LISTEN";
	case LC_MSG_LISTENING: return "LISTENING";
	case LC_MSG_CONNECT: return "CONNECT";
	case LC_MSG_CONNECTED: return "CONNECTED";
	case LC_MSG_DIAL: return "DIAL";
	case LC_MSG_FILE_DONE: return "FILE_DONE";
	case LC_MSG_SRC_DONE: return "SRC_DONE";
	case LC_MSG_SINK_DONE: return "SINK_DONE";
	case LC_MSG_PROGRESS: return "PROGRESS";
	case LC_MSG_FILE_SUM: return "FILE_SUM";
	case LC_MSG_FILE_PREFIX: return "FILE_PREFIX";
	case LC_MSG_PREFIX_MATCH: return "PREFIX_MATCH";
	case LC_MSG_STREAM_LOST: return "STREAM_LOST";
	case LC_MSG_ACK: return "ACK";
	case LC_MSG_SRC_CREDIT: return "SRC_CREDIT";
	case LC_MSG_FILE_SKIP: return "FILE_SKIP";
	case LC_MSG_FILE_FAIL: return "FILE_FAIL";
	case LC_MSG_FILE_ABORT: return "FILE_ABORT";
	case LC_MSG_STOP: return "STOP";
	case LC_MSG_SINK_STOPPED: return "SINK_STOPPED";
	case LC_MSG_FILE_LEN: return "FILE_LEN";
	default: return "?";
	}
}

/* ---- HELLO ---- */

int
lc_msg_put_hello(struct lc_buf *out, const struct lc_msg_hello *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_HELLO, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->magic)) != 0 ||
	    (r = lc_buf_put_u16(out, m->proto)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->software)) != 0 ||
	    (r = lc_buf_put_u32(out, m->flags)) != 0 ||
	    (r = lc_buf_put_u32(out, m->max_streams)) != 0 ||
	    (r = lc_buf_put_u64(out, m->rmem_max)) != 0 ||
	    (r = lc_buf_put_u64(out, m->wmem_max)) != 0 ||
	    (r = lc_buf_put_u32(out, m->log_level)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->hostname)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_hello(const uint8_t *p, size_t n, struct lc_msg_hello *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	/* magic, proto and software are the same in every version */
	if (lc_rd_get_u32(&rd, &m->magic) != 0 || m->magic != LC_PROTO_MAGIC ||
	    lc_rd_get_u16(&rd, &m->proto) != 0 ||
	    lc_rd_get_cstring(&rd, m->software, sizeof(m->software)) != 0)
		return -LC_ERR_PROTO;
	if (m->proto != LC_PROTO_VERSION)
		return -LC_ERR_VERSION;
	if (lc_rd_get_u32(&rd, &m->flags) != 0 ||
	    lc_rd_get_u32(&rd, &m->max_streams) != 0 ||
	    lc_rd_get_u64(&rd, &m->rmem_max) != 0 ||
	    lc_rd_get_u64(&rd, &m->wmem_max) != 0 ||
	    lc_rd_get_u32(&rd, &m->log_level) != 0 ||
	    lc_rd_get_cstring(&rd, m->hostname, sizeof(m->hostname)) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

/* ---- ERROR ---- */

int
lc_msg_put_error(struct lc_buf *out, uint32_t code, const char *msg)
{
	size_t len = strlen(msg);
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_ERROR, &r);

	if (len >= sizeof(((struct lc_msg_error *)0)->msg))
		len = sizeof(((struct lc_msg_error *)0)->msg) - 1;
	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, code)) != 0 ||
	    (r = lc_buf_put_string(out, msg, len)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_error(const uint8_t *p, size_t n, struct lc_msg_error *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->code) != 0 ||
	    lc_rd_get_cstring(&rd, m->msg, sizeof(m->msg)) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

/* ---- messages without payload: BYE, SRC_NOMORE ---- */

int
lc_msg_put_empty(struct lc_buf *out, uint8_t type)
{
	int r;
	size_t s = lc_msg_begin(out, type, &r);

	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_empty(const uint8_t *p, size_t n)
{
	(void)p;
	return n == 0 ? 0 : -LC_ERR_PROTO;
}

/* ---- SRC_ADD ---- */

int
lc_msg_put_src_add(struct lc_buf *out, const struct lc_msg_src_add *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_SRC_ADD, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->flags)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->path)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_src_add(const uint8_t *p, size_t n, struct lc_msg_src_add *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->flags) != 0 ||
	    lc_rd_get_cstring(&rd, m->path, sizeof(m->path)) != 0 ||
	    m->path[0] == '\0' || (m->flags & ~LC_ADD_MASK) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

/* ---- FILE ---- */

int
lc_relname_ok(const char *name)
{
	const char *p = name, *slash;
	size_t n;

	if (*p == '\0')
		return 0;
	for (;;) {
		slash = strchr(p, '/');
		n = slash != NULL ? (size_t)(slash - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		if (slash == NULL)
			return 1;
		p = slash + 1;
	}
}

int
lc_relname_cmp(const char *a, const char *b)
{
	/* '/' ends a component: it sorts before every other byte */
	for (;; a++, b++) {
		unsigned char ca = (unsigned char)*a, cb = (unsigned char)*b;
		if (ca == cb) {
			if (ca == '\0')
				return 0;
			continue;
		}
		if (ca == '\0' || cb == '\0')
			return ca == '\0' ? -1 : 1;
		if (ca == '/' || cb == '/')
			return ca == '/' ? -1 : 1;
		return ca < cb ? -1 : 1;
	}
}

int
lc_msg_put_file(struct lc_buf *out, const struct lc_msg_file *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_FILE, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->id)) != 0 ||
	    (r = lc_buf_put_u8(out, m->kind)) != 0 ||
	    (r = lc_buf_put_u32(out, m->mode)) != 0 ||
	    (r = lc_buf_put_u64(out, m->size)) != 0 ||
	    (r = lc_buf_put_u64(out, (uint64_t)m->mtime_sec)) != 0 ||
	    (r = lc_buf_put_u32(out, m->mtime_nsec)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->name)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->link)) != 0 ||
	    (r = lc_buf_put_u32(out, m->uid)) != 0 ||
	    (r = lc_buf_put_u32(out, m->gid)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->user)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->group)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_file(const uint8_t *p, size_t n, struct lc_msg_file *m)
{
	struct lc_rd rd;
	uint64_t mt;

	/* the fixed fields and empty strings, not 8 KiB of buffers a file */
	memset(m, 0, offsetof(struct lc_msg_file, name));
	m->name[0] = m->link[0] = m->user[0] = m->group[0] = '\0';
	m->uid = m->gid = 0;
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->id) != 0 ||
	    lc_rd_get_u8(&rd, &m->kind) != 0 ||
	    lc_rd_get_u32(&rd, &m->mode) != 0 ||
	    lc_rd_get_u64(&rd, &m->size) != 0 ||
	    lc_rd_get_u64(&rd, &mt) != 0 ||
	    lc_rd_get_u32(&rd, &m->mtime_nsec) != 0 ||
	    lc_rd_get_cstring(&rd, m->name, sizeof(m->name)) != 0 ||
	    lc_rd_get_cstring(&rd, m->link, sizeof(m->link)) != 0 ||
	    lc_rd_get_u32(&rd, &m->uid) != 0 ||
	    lc_rd_get_u32(&rd, &m->gid) != 0 ||
	    lc_rd_get_cstring(&rd, m->user, sizeof(m->user)) != 0 ||
	    lc_rd_get_cstring(&rd, m->group, sizeof(m->group)) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	m->mtime_sec = (int64_t)mt;
	if (m->id == 0 || m->kind < LC_KIND_REG || m->kind > LC_KIND_STREAM ||
	    m->mtime_nsec >= 1000000000u || m->size > (uint64_t)INT64_MAX ||
	    m->name[0] == '\0' || (m->mode & ~07777u) != 0 ||
	    (m->kind == LC_KIND_SYMLINK) != (m->link[0] != '\0') ||
	    (m->kind != LC_KIND_REG && m->size != 0))
		return -LC_ERR_PROTO;
	return 0;
}

/* ---- SRC_LISTED ---- */

int
lc_msg_put_src_listed(struct lc_buf *out, const struct lc_msg_src_listed *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_SRC_LISTED, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->files)) != 0 ||
	    (r = lc_buf_put_u64(out, m->bytes)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_src_listed(const uint8_t *p, size_t n, struct lc_msg_src_listed *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->files) != 0 ||
	    lc_rd_get_u64(&rd, &m->bytes) != 0 || lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

/* ---- SINK_TARGET / TARGET_OK ---- */

int
lc_msg_put_sink_target(struct lc_buf *out, const struct lc_msg_sink_target *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_SINK_TARGET, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->flags)) != 0 ||
	    (r = lc_buf_put_u32(out, m->inflight)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->target)) != 0 ||
	    (r = lc_buf_put(out, m->takeover, LC_KEY_LEN)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_sink_target(const uint8_t *p, size_t n,
    struct lc_msg_sink_target *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->flags) != 0 ||
	    (m->flags & ~LC_TGT_MASK) != 0 ||
	    lc_rd_get_u32(&rd, &m->inflight) != 0 ||
	    lc_rd_get_cstring(&rd, m->target, sizeof(m->target)) != 0 ||
	    m->target[0] == '\0' ||
	    lc_rd_get_bytes(&rd, m->takeover, LC_KEY_LEN) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_msg_put_target_ok(struct lc_buf *out, const struct lc_msg_target_ok *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_TARGET_OK, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u8(out, m->is_dir)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->resolved)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_target_ok(const uint8_t *p, size_t n, struct lc_msg_target_ok *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u8(&rd, &m->is_dir) != 0 || m->is_dir > 1 ||
	    lc_rd_get_cstring(&rd, m->resolved, sizeof(m->resolved)) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

/* ---- FILE_READY ---- */

int
lc_msg_put_file_ready(struct lc_buf *out, const struct lc_msg_file_ready *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_FILE_READY, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->id)) != 0 ||
	    (r = lc_buf_put_u64(out, m->start)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_file_ready(const uint8_t *p, size_t n, struct lc_msg_file_ready *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->id) != 0 || m->id == 0 ||
	    lc_rd_get_u64(&rd, &m->start) != 0 || lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

/* ---- LISTEN / LISTENING ---- */

static int
lc_msg_put_ports(struct lc_buf *out, const uint16_t *ports, uint32_t n)
{
	int r = 0;

	for (uint32_t i = 0; i < n && r == 0; i++)
		r = lc_buf_put_u16(out, ports[i]);
	return r;
}

static int
lc_msg_get_ports(struct lc_rd *rd, uint16_t *ports, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (lc_rd_get_u16(rd, &ports[i]) != 0 || ports[i] == 0)
			return -LC_ERR_PROTO;
	}
	return 0;
}

/* u32 nports (0 or streams), then the ports. */
static int
lc_msg_put_nports(struct lc_buf *out, const uint16_t *ports, uint32_t n)
{
	int r = lc_buf_put_u32(out, n);

	return r != 0 ? r : lc_msg_put_ports(out, ports, n);
}

static int
lc_msg_get_nports(struct lc_rd *rd, uint32_t streams, uint32_t *n,
    uint16_t *ports)
{
	if (lc_rd_get_u32(rd, n) != 0 || (*n != 0 && *n != streams))
		return -LC_ERR_PROTO;
	return lc_msg_get_ports(rd, ports, *n);
}

static int
lc_xfer_params_ok(uint32_t streams, uint32_t window, uint32_t block,
    uint32_t flags)
{
	return streams >= 1 && streams <= LC_MAX_STREAMS &&
	    window <= LC_MAX_WINDOW && block >= LC_MIN_BLOCK &&
	    block <= LC_MAX_BLOCK && (flags & ~LC_XFER_MASK) == 0;
}

int
lc_msg_put_listen(struct lc_buf *out, const struct lc_msg_listen *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_LISTEN, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->streams)) != 0 ||
	    (r = lc_buf_put_u32(out, m->window)) != 0 ||
	    (r = lc_buf_put_u32(out, m->block)) != 0 ||
	    (r = lc_buf_put_u32(out, m->flags)) != 0 ||
	    (r = lc_buf_put_u32(out, m->csum)) != 0 ||
	    (r = lc_buf_put_u32(out, m->stall_s)) != 0 ||
	    (r = lc_buf_put_u32(out, m->quiet_s)) != 0 ||
	    (r = lc_buf_put(out, m->key, LC_KEY_LEN)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_listen(const uint8_t *p, size_t n, struct lc_msg_listen *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->streams) != 0 ||
	    lc_rd_get_u32(&rd, &m->window) != 0 ||
	    lc_rd_get_u32(&rd, &m->block) != 0 ||
	    lc_rd_get_u32(&rd, &m->flags) != 0 ||
	    lc_rd_get_u32(&rd, &m->csum) != 0 || m->csum > LC_CSUM_ALG_MAX ||
	    lc_rd_get_u32(&rd, &m->stall_s) != 0 ||
	    lc_rd_get_u32(&rd, &m->quiet_s) != 0 || m->quiet_s > 3600 ||
	    lc_rd_get_bytes(&rd, m->key, LC_KEY_LEN) != 0 ||
	    lc_rd_end(&rd) != 0 ||
	    !lc_xfer_params_ok(m->streams, m->window, m->block, m->flags))
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_msg_put_listening(struct lc_buf *out, const struct lc_msg_listening *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_LISTENING, &r);

	if (m->streams > LC_MAX_STREAMS ||
	    (m->nports != 0 && m->nports != m->streams))
		r = -LC_ERR_TOOBIG;
	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->streams)) != 0 ||
	    (r = lc_buf_put_u32(out, m->window)) != 0 ||
	    (r = lc_buf_put_u32(out, m->block)) != 0 ||
	    (r = lc_buf_put_u32(out, m->quota)) != 0 ||
	    (r = lc_msg_put_nports(out, m->ports, m->nports)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_listening(const uint8_t *p, size_t n, struct lc_msg_listening *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->streams) != 0 ||
	    lc_rd_get_u32(&rd, &m->window) != 0 ||
	    lc_rd_get_u32(&rd, &m->block) != 0 ||
	    lc_rd_get_u32(&rd, &m->quota) != 0 ||
	    !lc_xfer_params_ok(m->streams, m->window, m->block, 0) ||
	    m->quota == 0 ||
	    lc_msg_get_nports(&rd, m->streams, &m->nports, m->ports) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

/* ---- CONNECT / CONNECTED ---- */

int
lc_msg_put_connect(struct lc_buf *out, const struct lc_msg_connect *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_CONNECT, &r);

	if (m->streams > LC_MAX_STREAMS)
		r = -LC_ERR_TOOBIG;
	(void)(r != 0 ||
	    (r = lc_buf_put_cstring(out, (m->flags & LC_XFER_REVERSE) ? "" :
	    m->addr)) != 0 ||
	    (r = lc_buf_put_u32(out, m->streams)) != 0 ||
	    (r = lc_buf_put_u32(out, m->window)) != 0 ||
	    (r = lc_buf_put_u32(out, m->block)) != 0 ||
	    (r = lc_buf_put_u32(out, m->flags)) != 0 ||
	    (r = lc_buf_put_u32(out, m->csum)) != 0 ||
	    (r = lc_buf_put_u64(out, m->rate)) != 0 ||
	    (r = lc_buf_put_u32(out, m->zlevel)) != 0 ||
	    (r = lc_buf_put(out, m->key, LC_KEY_LEN)) != 0 ||
	    (r = lc_msg_put_ports(out, m->ports,
	    (m->flags & LC_XFER_REVERSE) ? 0 : m->streams)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_connect(const uint8_t *p, size_t n, struct lc_msg_connect *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_cstring(&rd, m->addr, sizeof(m->addr)) != 0 ||
	    lc_rd_get_u32(&rd, &m->streams) != 0 ||
	    lc_rd_get_u32(&rd, &m->window) != 0 ||
	    lc_rd_get_u32(&rd, &m->block) != 0 ||
	    lc_rd_get_u32(&rd, &m->flags) != 0 ||
	    lc_rd_get_u32(&rd, &m->csum) != 0 || m->csum > LC_CSUM_ALG_MAX ||
	    lc_rd_get_u64(&rd, &m->rate) != 0 ||
	    lc_rd_get_u32(&rd, &m->zlevel) != 0 ||
	    m->zlevel > LC_ZLEVEL_MAX ||
	    (m->zlevel != 0) != !!(m->flags & LC_XFER_COMPRESS) ||
	    lc_rd_get_bytes(&rd, m->key, LC_KEY_LEN) != 0 ||
	    !lc_xfer_params_ok(m->streams, m->window, m->block, m->flags) ||
	    /* an address to dial, or (reverse) none */
	    (m->addr[0] == '\0') != !!(m->flags & LC_XFER_REVERSE) ||
	    lc_msg_get_ports(&rd, m->ports, (m->flags & LC_XFER_REVERSE) ?
	    0 : m->streams) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_msg_put_connected(struct lc_buf *out, const struct lc_msg_connected *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_CONNECTED, &r);

	if (m->streams > LC_MAX_STREAMS ||
	    (m->nports != 0 && m->nports != m->streams))
		r = -LC_ERR_TOOBIG;
	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->streams)) != 0 ||
	    (r = lc_buf_put_u32(out, m->window)) != 0 ||
	    (r = lc_msg_put_nports(out, m->ports, m->nports)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_connected(const uint8_t *p, size_t n, struct lc_msg_connected *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->streams) != 0 ||
	    m->streams == 0 || m->streams > LC_MAX_STREAMS ||
	    lc_rd_get_u32(&rd, &m->window) != 0 ||
	    lc_msg_get_nports(&rd, m->streams, &m->nports, m->ports) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_msg_put_dial(struct lc_buf *out, const struct lc_msg_dial *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_DIAL, &r);

	if (m->streams == 0 || m->streams > LC_MAX_STREAMS)
		r = -LC_ERR_TOOBIG;
	(void)(r != 0 ||
	    (r = lc_buf_put_cstring(out, m->addr)) != 0 ||
	    (r = lc_buf_put_u32(out, m->streams)) != 0 ||
	    (r = lc_msg_put_ports(out, m->ports, m->streams)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_dial(const uint8_t *p, size_t n, struct lc_msg_dial *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_cstring(&rd, m->addr, sizeof(m->addr)) != 0 ||
	    m->addr[0] == '\0' ||
	    lc_rd_get_u32(&rd, &m->streams) != 0 ||
	    m->streams == 0 || m->streams > LC_MAX_STREAMS ||
	    lc_msg_get_ports(&rd, m->ports, m->streams) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

/* ---- FILE_DONE, SRC_DONE / SINK_DONE, PROGRESS ---- */

int
lc_msg_put_file_done(struct lc_buf *out, const struct lc_msg_file_done *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_FILE_DONE, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->id)) != 0 ||
	    (r = lc_buf_put_u64(out, m->bytes)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->checksum)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_file_done(const uint8_t *p, size_t n, struct lc_msg_file_done *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->id) != 0 || m->id == 0 ||
	    lc_rd_get_u64(&rd, &m->bytes) != 0 ||
	    lc_rd_get_cstring(&rd, m->checksum, sizeof(m->checksum)) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_msg_put_xfer_done(struct lc_buf *out, uint8_t type,
    const struct lc_msg_xfer_done *m)
{
	int r;
	size_t s = lc_msg_begin(out, type, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u64(out, m->bytes)) != 0 ||
	    (r = lc_buf_put_u32(out, m->files)) != 0 ||
	    (r = lc_buf_put_u64(out, m->wire)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_xfer_done(const uint8_t *p, size_t n, struct lc_msg_xfer_done *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u64(&rd, &m->bytes) != 0 ||
	    lc_rd_get_u32(&rd, &m->files) != 0 ||
	    lc_rd_get_u64(&rd, &m->wire) != 0 || m->wire > m->bytes ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_msg_put_progress(struct lc_buf *out, const struct lc_msg_progress *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_PROGRESS, &r);

	(void)(r != 0 || (r = lc_buf_put_u64(out, m->bytes)) != 0 ||
	    (r = lc_buf_put_u32(out, m->file)) != 0 ||
	    (r = lc_buf_put_u64(out, m->written)) != 0 ||
	    (r = lc_buf_put_u64(out, m->wire)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_progress(const uint8_t *p, size_t n, struct lc_msg_progress *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u64(&rd, &m->bytes) != 0 ||
	    lc_rd_get_u32(&rd, &m->file) != 0 ||
	    lc_rd_get_u64(&rd, &m->written) != 0 ||
	    lc_rd_get_u64(&rd, &m->wire) != 0 || m->wire > m->bytes ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

/* ---- FILE_LEN, FILE_SUM, FILE_PREFIX, PREFIX_MATCH, STREAM_LOST, ACK ---- */

int
lc_msg_put_file_len(struct lc_buf *out, const struct lc_msg_file_len *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_FILE_LEN, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->id)) != 0 ||
	    (r = lc_buf_put_u64(out, m->length)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_file_len(const uint8_t *p, size_t n, struct lc_msg_file_len *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->id) != 0 || m->id == 0 ||
	    lc_rd_get_u64(&rd, &m->length) != 0 ||
	    m->length > LC_STREAM_MAX || lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_msg_put_file_sum(struct lc_buf *out, const struct lc_msg_file_sum *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_FILE_SUM, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->id)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->checksum)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_file_sum(const uint8_t *p, size_t n, struct lc_msg_file_sum *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->id) != 0 || m->id == 0 ||
	    lc_rd_get_cstring(&rd, m->checksum, sizeof(m->checksum)) != 0 ||
	    m->checksum[0] == '\0' || lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_msg_put_file_prefix(struct lc_buf *out, const struct lc_msg_file_prefix *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_FILE_PREFIX, &r);

	if (m->n > LC_PREFIX_MAX_CHUNKS)
		r = -LC_ERR_TOOBIG;
	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->id)) != 0 ||
	    (r = lc_buf_put_u64(out, m->length)) != 0 ||
	    (r = lc_buf_put_u32(out, m->chunk)) != 0 ||
	    (r = lc_buf_put_u32(out, m->n)) != 0 ||
	    (r = lc_buf_put(out, m->hashes,
	    (size_t)m->n * LC_PREFIX_HASH_LEN)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_file_prefix(const uint8_t *p, size_t n,
    struct lc_msg_file_prefix *m)
{
	struct lc_rd rd;
	uint64_t want;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->id) != 0 || m->id == 0 ||
	    lc_rd_get_u64(&rd, &m->length) != 0 ||
	    m->length > (uint64_t)INT64_MAX ||
	    lc_rd_get_u32(&rd, &m->chunk) != 0 || m->chunk == 0 ||
	    lc_rd_get_u32(&rd, &m->n) != 0 ||
	    m->n > LC_PREFIX_MAX_CHUNKS)
		return -LC_ERR_PROTO;
	want = (m->length + m->chunk - 1) / m->chunk;
	if (want != m->n || rd.len != (size_t)m->n * LC_PREFIX_HASH_LEN)
		return -LC_ERR_PROTO;
	m->hashes = rd.p;
	return 0;
}

int
lc_msg_put_prefix_match(struct lc_buf *out,
    const struct lc_msg_prefix_match *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_PREFIX_MATCH, &r);

	if (m->n > LC_PREFIX_MAX_RUNS)
		r = -LC_ERR_TOOBIG;
	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->id)) != 0 ||
	    (r = lc_buf_put_u64(out, m->match)) != 0 ||
	    (r = lc_buf_put_u32(out, m->n)) != 0);
	for (uint32_t i = 0; r == 0 && i < m->n; i++)
		(void)((r = lc_buf_put_u32(out, m->runs[i].first)) != 0 ||
		    (r = lc_buf_put_u32(out, m->runs[i].count)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_prefix_match(const uint8_t *p, size_t n,
    struct lc_msg_prefix_match *m)
{
	struct lc_chunk_run *c;
	uint64_t after = 0;	/* the first chunk a run may start at */
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->id) != 0 || m->id == 0 ||
	    lc_rd_get_u64(&rd, &m->match) != 0 ||
	    m->match > (uint64_t)INT64_MAX ||
	    lc_rd_get_u32(&rd, &m->n) != 0 || m->n > LC_PREFIX_MAX_RUNS)
		return -LC_ERR_PROTO;
	for (uint32_t i = 0; i < m->n; i++) {
		c = &m->runs[i];
		/* in order, not overlapping nor touching (a run is whole) */
		if (lc_rd_get_u32(&rd, &c->first) != 0 ||
		    lc_rd_get_u32(&rd, &c->count) != 0 || c->count == 0 ||
		    c->first < after ||
		    (uint64_t)c->first + c->count > LC_PREFIX_MAX_CHUNKS)
			return -LC_ERR_PROTO;
		after = (uint64_t)c->first + c->count + 1;
	}
	return lc_rd_end(&rd) != 0 ? -LC_ERR_PROTO : 0;
}

int
lc_prefix_match_check(const struct lc_msg_prefix_match *m, uint64_t length,
    uint32_t chunk)
{
	const struct lc_chunk_run *c;
	uint64_t end;

	if (chunk == 0 || m->match > length ||
	    (m->match != length && m->match % chunk != 0))
		return -LC_ERR_PROTO;
	for (uint32_t i = 0; i < m->n; i++) {
		c = &m->runs[i];
		/* runs are bounded by LC_PREFIX_MAX_CHUNKS: no overflow */
		end = ((uint64_t)c->first + c->count) * chunk;
		if (end > length)
			end = length;
		if ((uint64_t)c->first * chunk >= end || end > m->match)
			return -LC_ERR_PROTO;
	}
	return 0;
}

uint64_t
lc_prefix_match_spans(const struct lc_msg_prefix_match *m, uint64_t length,
    uint32_t chunk, struct lc_span *out)
{
	uint64_t total = 0, end;

	for (uint32_t i = 0; i < m->n; i++) {
		out[i].off = (uint64_t)m->runs[i].first * chunk;
		end = ((uint64_t)m->runs[i].first + m->runs[i].count) * chunk;
		out[i].len = (end < length ? end : length) - out[i].off;
		total += out[i].len;
	}
	return total;
}

int
lc_msg_put_stream_lost(struct lc_buf *out, const struct lc_msg_stream_lost *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_STREAM_LOST, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->stream)) != 0 ||
	    (r = lc_buf_put_u8(out, m->has_last)) != 0 ||
	    (r = lc_buf_put_u32(out, m->last_file)) != 0 ||
	    (r = lc_buf_put_u64(out, m->last_off)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->reason)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_stream_lost(const uint8_t *p, size_t n,
    struct lc_msg_stream_lost *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->stream) != 0 ||
	    m->stream >= LC_MAX_STREAMS ||
	    lc_rd_get_u8(&rd, &m->has_last) != 0 || m->has_last > 1 ||
	    lc_rd_get_u32(&rd, &m->last_file) != 0 ||
	    lc_rd_get_u64(&rd, &m->last_off) != 0 ||
	    lc_rd_get_cstring(&rd, m->reason, sizeof(m->reason)) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_msg_put_ack(struct lc_buf *out, const struct lc_msg_ack *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_ACK, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->file)) != 0 ||
	    (r = lc_buf_put_u64(out, m->written)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_ack(const uint8_t *p, size_t n, struct lc_msg_ack *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->file) != 0 ||
	    lc_rd_get_u64(&rd, &m->written) != 0 || lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

/* ---- heartbeat ---- */

int
lc_msg_put_ping(struct lc_buf *out, const struct lc_msg_ping *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_PING, &r);

	(void)(r != 0 || (r = lc_buf_put_u32(out, m->grace_s)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_ping(const uint8_t *p, size_t n, struct lc_msg_ping *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->grace_s) != 0 || lc_rd_end(&rd) != 0 ||
	    m->grace_s == 0 || m->grace_s > LC_PING_GRACE_MAX)
		return -LC_ERR_PROTO;
	return 0;
}

/* ---- trees: credit, skip, fail ---- */

int
lc_msg_put_src_credit(struct lc_buf *out, const struct lc_msg_src_credit *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_SRC_CREDIT, &r);

	(void)(r != 0 || (r = lc_buf_put_u32(out, m->upto)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_src_credit(const uint8_t *p, size_t n,
    struct lc_msg_src_credit *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->upto) != 0 || lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_msg_put_file_skip(struct lc_buf *out, const struct lc_msg_file_skip *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_FILE_SKIP, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->id)) != 0 ||
	    (r = lc_buf_put_u8(out, m->why)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->msg)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_file_skip(const uint8_t *p, size_t n, struct lc_msg_file_skip *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->id) != 0 ||
	    lc_rd_get_u8(&rd, &m->why) != 0 ||
	    lc_rd_get_cstring(&rd, m->msg, sizeof(m->msg)) != 0 ||
	    lc_rd_end(&rd) != 0 || m->id == 0 ||
	    m->why < LC_SKIP_UPTODATE || m->why > LC_SKIP_FAILED)
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_msg_put_file_fail(struct lc_buf *out, const struct lc_msg_file_fail *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_FILE_FAIL, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_cstring(out, m->name)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->msg)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_file_fail(const uint8_t *p, size_t n, struct lc_msg_file_fail *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_cstring(&rd, m->name, sizeof(m->name)) != 0 ||
	    lc_rd_get_cstring(&rd, m->msg, sizeof(m->msg)) != 0 ||
	    lc_rd_end(&rd) != 0 || !lc_relname_ok(m->name))
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_msg_put_file_abort(struct lc_buf *out, const struct lc_msg_file_abort *m)
{
	int r;
	size_t s = lc_msg_begin(out, LC_MSG_FILE_ABORT, &r);

	(void)(r != 0 ||
	    (r = lc_buf_put_u32(out, m->id)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->msg)) != 0);
	return lc_msg_finish(out, s, r);
}

int
lc_msg_get_file_abort(const uint8_t *p, size_t n,
    struct lc_msg_file_abort *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_rd_get_u32(&rd, &m->id) != 0 ||
	    lc_rd_get_cstring(&rd, m->msg, sizeof(m->msg)) != 0 ||
	    lc_rd_end(&rd) != 0 || m->id == 0)
		return -LC_ERR_PROTO;
	return 0;
}

/* ---- data frames ---- */

void
lc_frame_put(uint8_t out[LC_FRAME_HDR_LEN], const struct lc_frame *f)
{
	out[0] = f->type;
	out[1] = f->flags;
	out[2] = 0;
	out[3] = 0;
	lc_poke_u32(out + 4, f->file_id);
	lc_poke_u64(out + 8, f->offset);
	lc_poke_u32(out + 16, f->len);
	lc_poke_u32(out + 20, f->raw_len);
}

int
lc_frame_get(const uint8_t in[LC_FRAME_HDR_LEN], uint32_t max_block,
    struct lc_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->type = in[0];
	f->flags = in[1];
	f->file_id = lc_peek_u32(in + 4);
	f->offset = lc_peek_u64(in + 8);
	f->len = lc_peek_u32(in + 16);
	f->raw_len = lc_peek_u32(in + 20);
	if (in[2] != 0 || in[3] != 0 || (f->flags != 0 &&
	    (f->type != LC_FRAME_DATA || f->flags != LC_FRAME_F_ZLIB)))
		return -LC_ERR_PROTO;
	switch (f->type) {
	case LC_FRAME_DATA:
		if (f->file_id == 0 || f->raw_len == 0 ||
		    f->raw_len > max_block ||
		    f->offset > (uint64_t)INT64_MAX - f->raw_len)
			return -LC_ERR_PROTO;
		if (f->flags & LC_FRAME_F_ZLIB)
			return f->len >= 1 && f->len < f->raw_len ? 0 :
			    -LC_ERR_PROTO;
		return f->len == f->raw_len ? 0 : -LC_ERR_PROTO;
	case LC_FRAME_HOLE:
		if (f->file_id == 0 || f->len != 0 || f->raw_len == 0 ||
		    f->raw_len > LC_MAX_HOLE ||
		    f->offset > (uint64_t)INT64_MAX - f->raw_len)
			return -LC_ERR_PROTO;
		return 0;
	case LC_FRAME_END:
	case LC_FRAME_IDLE:
		if (f->file_id != 0 || f->offset != 0 || f->len != 0 ||
		    f->raw_len != 0)
			return -LC_ERR_PROTO;
		return 0;
	default:
		return -LC_ERR_PROTO;
	}
}

/* ---- the takeover exchange (local socket) ---- */

static int
lc_takeover_magic(struct lc_rd *rd, const char *magic)
{
	uint8_t m[4];

	return lc_rd_get_bytes(rd, m, 4) != 0 || memcmp(m, magic, 4) != 0 ?
	    -LC_ERR_PROTO : 0;
}

int
lc_takeover_put_challenge(struct lc_buf *out,
    const uint8_t nonce[LC_TAKEOVER_NONCE_LEN])
{
	int r;

	(void)((r = lc_buf_put(out, "LCTC", 4)) != 0 ||
	    (r = lc_buf_put_u8(out, LC_TAKEOVER_VERSION)) != 0 ||
	    (r = lc_buf_put(out, nonce, LC_TAKEOVER_NONCE_LEN)) != 0);
	return r;
}

int
lc_takeover_get_challenge(const uint8_t *p, size_t n,
    uint8_t nonce[LC_TAKEOVER_NONCE_LEN])
{
	struct lc_rd rd;
	uint8_t v;

	memset(nonce, 0, LC_TAKEOVER_NONCE_LEN);
	lc_rd_init(&rd, p, n);
	if (lc_takeover_magic(&rd, "LCTC") != 0 ||
	    lc_rd_get_u8(&rd, &v) != 0 || v != LC_TAKEOVER_VERSION ||
	    lc_rd_get_bytes(&rd, nonce, LC_TAKEOVER_NONCE_LEN) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_takeover_put_request(struct lc_buf *out, const struct lc_takeover_req *m)
{
	int r;

	(void)((r = lc_buf_put(out, "LCTQ", 4)) != 0 ||
	    (r = lc_buf_put(out, m->mac, LC_TAKEOVER_MAC_LEN)) != 0 ||
	    (r = lc_buf_put_cstring(out, m->root)) != 0);
	return r;
}

int
lc_takeover_get_request(const uint8_t *p, size_t n, struct lc_takeover_req *m)
{
	struct lc_rd rd;

	memset(m, 0, sizeof(*m));
	lc_rd_init(&rd, p, n);
	if (lc_takeover_magic(&rd, "LCTQ") != 0 ||
	    lc_rd_get_bytes(&rd, m->mac, LC_TAKEOVER_MAC_LEN) != 0 ||
	    lc_rd_get_cstring(&rd, m->root, sizeof(m->root)) != 0 ||
	    lc_rd_end(&rd) != 0)
		return -LC_ERR_PROTO;
	return 0;
}

int
lc_takeover_put_answer(struct lc_buf *out, uint8_t verdict)
{
	int r;

	(void)((r = lc_buf_put(out, "LCTA", 4)) != 0 ||
	    (r = lc_buf_put_u8(out, verdict)) != 0);
	return r;
}

int
lc_takeover_get_answer(const uint8_t *p, size_t n, uint8_t *verdict)
{
	struct lc_rd rd;

	*verdict = 0;
	lc_rd_init(&rd, p, n);
	if (lc_takeover_magic(&rd, "LCTA") != 0 ||
	    lc_rd_get_u8(&rd, verdict) != 0 ||
	    *verdict < LC_TAKEOVER_YES || *verdict > LC_TAKEOVER_NO_ROOT ||
	    lc_rd_end(&rd) != 0) {
		*verdict = 0;
		return -LC_ERR_PROTO;
	}
	return 0;
}
