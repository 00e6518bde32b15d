/*
 * What is specific to one control message (wire_msgs.def): the checks of
 * a decoded body (lc__msg_check_<body>, after its last byte: 0 or not),
 * what an encoder refuses (lc__msg_precheck_<body>: 0 or not), and the
 * hooks for the parts of a body no field kind describes.  wire.c runs
 * them; everything else about a message is the table.
 */
#include "wire_int.h"
#include "err.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* ---- port lists (LISTENING, CONNECT, CONNECTED, DIAL) ---- */

int
lc__msg_put_ports(struct lc_buf *out, const uint16_t *ports, uint32_t n)
{
	int r = 0;

	for (uint32_t i = 0; i < n && r == 0; i++)
		r = lc_buf_put_u16(out, ports[i]);
	return r;
}

/* n ports, each non-zero, into room slots: n is bounded before use */
int
lc__msg_get_ports(struct lc_rd *rd, uint16_t *ports, uint32_t n, size_t room)
{
	if (n > room)
		return -LC_ERR_PROTO;
	for (uint32_t i = 0; i < n; i++) {
		if (lc_rd_get_u16(rd, &ports[i]) != 0 || ports[i] == 0)
			return -LC_ERR_PROTO;
	}
	return 0;
}

#define LC_BODY_OF(type, v) const struct lc_msg_##type *m = (v)

static int
lc_xfer_params_ok(uint32_t streams, uint32_t window, uint32_t block,
    uint32_t flags)
{
	return streams >= 1 && streams <= LC_MAX_STREAMS &&
	    window <= LC_MAX_WINDOW && block >= LC_MIN_BLOCK &&
	    block <= LC_MAX_BLOCK && (flags & ~LC_XFER_MASK) == 0;
}

/* a port list of n (0 or streams) */
static int
lc_nports_ok(uint32_t n, uint32_t streams)
{
	return n == 0 || n == streams;
}

static int
lc_msg_hello_version_put(struct lc_buf *out, const void *v)
{
	(void)out;
	(void)v;
	return 0;
}

/* magic, proto and software are the same in every version; the rest not */
static int
lc_msg_hello_version_get(struct lc_rd *rd, void *v)
{
	struct lc_msg_hello *m = v;

	(void)rd;
	if (m->magic != LC_PROTO_MAGIC)
		return -LC_ERR_PROTO;
	return m->proto != LC_PROTO_VERSION ? -LC_ERR_VERSION : 0;
}

const struct lc_msg_hook lc__msg_hook_hello_version = {
	lc_msg_hello_version_put, lc_msg_hello_version_get,
};

int
lc__msg_check_ping(const void *v)
{
	LC_BODY_OF(ping, v);

	return m->grace_s == 0 || m->grace_s > LC_PING_GRACE_MAX;
}

int
lc__msg_check_src_add(const void *v)
{
	LC_BODY_OF(src_add, v);

	return m->path[0] == '\0' || (m->flags & ~LC_ADD_MASK) != 0;
}

int
lc__msg_check_src_entry(const void *v)
{
	LC_BODY_OF(src_entry, v);

	return (m->flags & ~LC_ENTRY_MASK) != 0 ||
	    ((m->flags & LC_ENTRY_END) != 0) != (m->name[0] == '\0');
}

int
lc__msg_check_src_part(const void *v)
{
	LC_BODY_OF(src_part, v);

	return m->name[0] == '\0' || m->size > (uint64_t)INT64_MAX;
}

int
lc__msg_check_src_avail(const void *v)
{
	LC_BODY_OF(src_avail, v);

	return m->id == 0 || m->avail > (uint64_t)INT64_MAX;
}

int
lc__msg_check_file(const void *v)
{
	LC_BODY_OF(file, v);

	return m->id == 0 || m->kind < LC_KIND_REG ||
	    m->kind > LC_KIND_PIPE || m->mtime_nsec >= 1000000000u ||
	    m->size > (uint64_t)INT64_MAX || m->name[0] == '\0' ||
	    (m->mode & ~07777u) != 0 ||
	    (m->kind == LC_KIND_SYMLINK) != (m->link[0] != '\0') ||
	    (m->kind != LC_KIND_REG && m->size != 0);
}

int
lc__msg_check_sink_target(const void *v)
{
	LC_BODY_OF(sink_target, v);

	return (m->flags & ~LC_TGT_MASK) != 0 || m->target[0] == '\0';
}

int
lc__msg_check_target_ok(const void *v)
{
	LC_BODY_OF(target_ok, v);

	return m->is_dir > 1 || m->inflight == 0;
}

int
lc__msg_check_file_ready(const void *v)
{
	LC_BODY_OF(file_ready, v);

	return m->id == 0;
}

int
lc__msg_check_listen(const void *v)
{
	LC_BODY_OF(listen, v);

	return m->csum > LC_CSUM_ALG_MAX || m->quiet_s > 3600 ||
	    !lc_xfer_params_ok(m->streams, m->window, m->block, m->flags);
}

int
lc__msg_precheck_listening(const void *v)
{
	LC_BODY_OF(listening, v);

	return m->streams > LC_MAX_STREAMS ||
	    !lc_nports_ok(m->nports, m->streams);
}

int
lc__msg_check_listening(const void *v)
{
	LC_BODY_OF(listening, v);

	return !lc_xfer_params_ok(m->streams, m->window, m->block, 0) ||
	    m->quota == 0 || !lc_nports_ok(m->nports, m->streams);
}

/* CONNECT: reverse, the source listens: no address to dial, no ports */
static int
lc_msg_connect_addr_put(struct lc_buf *out, const void *v)
{
	LC_BODY_OF(connect, v);

	return lc_buf_put_cstring(out, (m->flags & LC_XFER_REVERSE) ? "" :
	    m->addr);
}

static int
lc_msg_connect_addr_get(struct lc_rd *rd, void *v)
{
	struct lc_msg_connect *m = v;

	return lc_rd_get_cstring(rd, m->addr, sizeof(m->addr));
}

const struct lc_msg_hook lc__msg_hook_connect_addr = {
	lc_msg_connect_addr_put, lc_msg_connect_addr_get,
};

static int
lc_msg_connect_ports_put(struct lc_buf *out, const void *v)
{
	LC_BODY_OF(connect, v);

	return lc__msg_put_ports(out, m->ports,
	    (m->flags & LC_XFER_REVERSE) ? 0 : m->streams);
}

static int
lc_msg_connect_ports_get(struct lc_rd *rd, void *v)
{
	struct lc_msg_connect *m = v;

	return lc__msg_get_ports(rd, m->ports,
	    (m->flags & LC_XFER_REVERSE) ? 0 : m->streams,
	    sizeof(m->ports) / sizeof(m->ports[0]));
}

const struct lc_msg_hook lc__msg_hook_connect_ports = {
	lc_msg_connect_ports_put, lc_msg_connect_ports_get,
};

int
lc__msg_precheck_connect(const void *v)
{
	LC_BODY_OF(connect, v);

	return m->streams > LC_MAX_STREAMS;
}

int
lc__msg_check_connect(const void *v)
{
	LC_BODY_OF(connect, v);

	return m->csum > LC_CSUM_ALG_MAX || m->zlevel > LC_ZLEVEL_MAX ||
	    (m->zlevel != 0) != !!(m->flags & LC_XFER_COMPRESS) ||
	    !lc_xfer_params_ok(m->streams, m->window, m->block, m->flags) ||
	    /* an address to dial, or (reverse) none */
	    (m->addr[0] == '\0') != !!(m->flags & LC_XFER_REVERSE);
}

int
lc__msg_precheck_connected(const void *v)
{
	LC_BODY_OF(connected, v);

	return m->streams > LC_MAX_STREAMS ||
	    !lc_nports_ok(m->nports, m->streams);
}

int
lc__msg_check_connected(const void *v)
{
	LC_BODY_OF(connected, v);

	return m->streams == 0 || m->streams > LC_MAX_STREAMS ||
	    !lc_nports_ok(m->nports, m->streams);
}

int
lc__msg_precheck_dial(const void *v)
{
	LC_BODY_OF(dial, v);

	return m->streams == 0 || m->streams > LC_MAX_STREAMS;
}

int
lc__msg_check_dial(const void *v)
{
	LC_BODY_OF(dial, v);

	return m->addr[0] == '\0' || m->streams == 0 ||
	    m->streams > LC_MAX_STREAMS;
}

/*
 * FILE_DONE's flags: a u8 after the checksum, or nothing from a sink that
 * does not send them (which one the controller expects is its check).
 */
static int
lc_msg_done_flags_put(struct lc_buf *out, const void *v)
{
	const struct lc_msg_file_done *m = v;

	return m->has_flags ? lc_buf_put_u8(out, m->flags) : 0;
}

static int
lc_msg_done_flags_get(struct lc_rd *rd, void *v)
{
	struct lc_msg_file_done *m = v;

	m->has_flags = rd->len > 0;
	return m->has_flags ? lc_rd_get_u8(rd, &m->flags) : 0;
}

const struct lc_msg_hook lc__msg_hook_done_flags = {
	lc_msg_done_flags_put, lc_msg_done_flags_get,
};

int
lc__msg_check_file_done(const void *v)
{
	LC_BODY_OF(file_done, v);

	return m->id == 0 || m->has_flags > 1 ||
	    (m->flags & ~LC_DONE_MASK) != 0 ||
	    (!m->has_flags && m->flags != 0);
}

int
lc__msg_check_xfer_done(const void *v)
{
	LC_BODY_OF(xfer_done, v);

	return m->wire > m->bytes;
}

int
lc__msg_check_progress(const void *v)
{
	LC_BODY_OF(progress, v);

	return m->wire > m->bytes;
}

int
lc__msg_check_file_sum(const void *v)
{
	LC_BODY_OF(file_sum, v);

	return m->id == 0 || m->checksum[0] == '\0';
}

int
lc__msg_precheck_file_prefix(const void *v)
{
	LC_BODY_OF(file_prefix, v);

	return m->n > LC_PREFIX_MAX_CHUNKS;
}

static int
lc_msg_prefix_hashes_put(struct lc_buf *out, const void *v)
{
	LC_BODY_OF(file_prefix, v);

	return lc_buf_put(out, m->hashes, (size_t)m->n * LC_PREFIX_HASH_LEN);
}

/* n hashes, n = ceil(length / chunk): the rest of the frame, in place */
static int
lc_msg_prefix_hashes_get(struct lc_rd *rd, void *v)
{
	struct lc_msg_file_prefix *m = v;
	uint64_t want;

	if (m->id == 0 || m->length > (uint64_t)INT64_MAX || m->chunk == 0 ||
	    m->n > LC_PREFIX_MAX_CHUNKS)
		return -LC_ERR_PROTO;
	want = (m->length + m->chunk - 1) / m->chunk;
	if (want != m->n || rd->len != (size_t)m->n * LC_PREFIX_HASH_LEN)
		return -LC_ERR_PROTO;
	m->hashes = rd->p;
	rd->p += rd->len;
	rd->len = 0;
	return 0;
}

const struct lc_msg_hook lc__msg_hook_prefix_hashes = {
	lc_msg_prefix_hashes_put, lc_msg_prefix_hashes_get,
};

int
lc__msg_precheck_file_hashes(const void *v)
{
	LC_BODY_OF(file_hashes, v);

	return m->n == 0 || m->n > LC_HASHES_PER_FRAME ||
	    m->total > LC_HASHES_MAX_CHUNKS ||
	    (uint64_t)m->first + m->n > m->total;
}

static int
lc_msg_slice_hashes_put(struct lc_buf *out, const void *v)
{
	LC_BODY_OF(file_hashes, v);

	return lc_buf_put(out, m->hashes, (size_t)m->n * LC_HASHES_HASH_LEN);
}

/*
 * A slice of the list: total = ceil(length / chunk) at most
 * LC_HASHES_MAX_CHUNKS, 1 .. LC_HASHES_PER_FRAME hashes inside it, the
 * rest of the frame.  That slices come in order and add up to the total
 * is the receiver's check (it knows what came before).
 */
static int
lc_msg_slice_hashes_get(struct lc_rd *rd, void *v)
{
	struct lc_msg_file_hashes *m = v;

	if (m->id == 0 || m->length > (uint64_t)INT64_MAX || m->chunk == 0 ||
	    lc__msg_precheck_file_hashes(m) ||
	    (m->length + m->chunk - 1) / m->chunk != m->total ||
	    rd->len != (size_t)m->n * LC_HASHES_HASH_LEN)
		return -LC_ERR_PROTO;
	m->hashes = rd->p;
	rd->p += rd->len;
	rd->len = 0;
	return 0;
}

const struct lc_msg_hook lc__msg_hook_slice_hashes = {
	lc_msg_slice_hashes_put, lc_msg_slice_hashes_get,
};

int
lc__msg_precheck_prefix_match(const void *v)
{
	LC_BODY_OF(prefix_match, v);

	return m->n > LC_PREFIX_MAX_RUNS;
}

int
lc__msg_check_prefix_match(const void *v)
{
	LC_BODY_OF(prefix_match, v);

	return m->id == 0 || m->match > (uint64_t)INT64_MAX;
}

static int
lc_msg_match_runs_put(struct lc_buf *out, const void *v)
{
	LC_BODY_OF(prefix_match, v);
	int r = 0;

	for (uint32_t i = 0; r == 0 && i < m->n; i++)
		(void)((r = lc_buf_put_u32(out, m->runs[i].first)) != 0 ||
		    (r = lc_buf_put_u32(out, m->runs[i].count)) != 0);
	return r;
}

static int
lc_msg_match_runs_get(struct lc_rd *rd, void *v)
{
	struct lc_msg_prefix_match *m = v;
	struct lc_chunk_run *c;
	uint64_t after = 0;	/* the first chunk a run may start at */

	if (m->n > LC_PREFIX_MAX_RUNS)
		return -LC_ERR_PROTO;
	for (uint32_t i = 0; i < m->n; i++) {
		c = &m->runs[i];
		/* in order, not overlapping nor touching (a run is whole) */
		if (lc_rd_get_u32(rd, &c->first) != 0 ||
		    lc_rd_get_u32(rd, &c->count) != 0 || c->count == 0 ||
		    c->first < after ||
		    (uint64_t)c->first + c->count > LC_MATCH_MAX_CHUNKS)
			return -LC_ERR_PROTO;
		after = (uint64_t)c->first + c->count + 1;
	}
	return 0;
}

const struct lc_msg_hook lc__msg_hook_match_runs = {
	lc_msg_match_runs_put, lc_msg_match_runs_get,
};

int
lc__msg_check_stream_lost(const void *v)
{
	LC_BODY_OF(stream_lost, v);

	return m->stream >= LC_MAX_STREAMS || m->has_last > 1;
}

static const char *const lc_skip_set_words[] = { "mode", "owner", "times" };

void
lc_skip_set_put(unsigned set, char *out, size_t outsz)
{
	size_t n = 0;

	if (outsz > 0)
		out[0] = '\0';
	for (size_t i = 0; i < 3; i++) {
		if (!(set & (1u << i)) || n >= outsz)
			continue;
		n += (size_t)snprintf(out + n, outsz - n, "%s%s",
		    n > 0 ? "," : "", lc_skip_set_words[i]);
	}
}

int
lc_skip_set_get(const char *msg, unsigned *set)
{
	const char *p = msg;
	size_t i = 0, n;

	*set = 0;
	if (*p == '\0')
		return 0;
	/* each word at most once and in order: one pass over the words */
	for (;;) {
		for (; i < 3; i++) {
			n = strlen(lc_skip_set_words[i]);
			if (strncmp(p, lc_skip_set_words[i], n) == 0 &&
			    (p[n] == ',' || p[n] == '\0'))
				break;
		}
		if (i == 3)
			return -1;
		*set |= 1u << i++;
		p += n;
		if (*p == '\0')
			return 0;
		p++;	/* the comma */
	}
}

int
lc__msg_check_file_skip(const void *v)
{
	LC_BODY_OF(file_skip, v);
	unsigned set;

	/* why 1 says what it updated, why 2 nothing, why 3 the error */
	return m->id == 0 || m->why < LC_SKIP_UPTODATE ||
	    m->why > LC_SKIP_DRY_SAME ||
	    (m->why == LC_SKIP_UPTODATE && lc_skip_set_get(m->msg, &set)) ||
	    (m->why == LC_SKIP_EXISTS && m->msg[0] != '\0');
}

int
lc__msg_check_file_fail(const void *v)
{
	LC_BODY_OF(file_fail, v);

	return !lc_relname_ok(m->name);
}

int
lc__msg_check_file_abort(const void *v)
{
	LC_BODY_OF(file_abort, v);

	return m->id == 0;
}

int
lc__msg_check_file_len(const void *v)
{
	LC_BODY_OF(file_len, v);

	return m->id == 0 || m->length > LC_PIPE_MAX;
}

/* ---- relative names (FILE, FILE_FAIL) ---- */
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

/* ---- resume: a PREFIX_MATCH against its FILE_PREFIX ---- */

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
		/* runs are bounded by LC_MATCH_MAX_CHUNKS: no overflow */
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
		uint64_t off = (uint64_t)m->runs[i].first * chunk;

		end = ((uint64_t)m->runs[i].first + m->runs[i].count) * chunk;
		end = end < length ? end : length;
		if (out != NULL) {
			out[i].off = off;
			out[i].len = end - off;
		}
		total += end - off;
	}
	return total;
}

int
lc__msg_check_src_filter(const void *v)
{
	LC_BODY_OF(src_filter, v);

	return (m->kind != LC_FILTER_EXCLUDE && m->kind != LC_FILTER_INCLUDE &&
	    m->kind != LC_FILTER_SHARD) || m->pattern[0] == '\0';
}

int
lc__msg_check_del_scan(const void *v)
{
	LC_BODY_OF(del_scan, v);

	return m->root[0] != '\0' && !lc_relname_ok(m->root);
}

static int
lc_del_kind_bad(uint8_t kind)
{
	return kind != LC_KIND_REG && kind != LC_KIND_DIR &&
	    kind != LC_KIND_SYMLINK;
}

int
lc__msg_check_del_cand(const void *v)
{
	LC_BODY_OF(del_cand, v);

	return lc_del_kind_bad(m->kind) || !lc_relname_ok(m->name);
}

int
lc__msg_check_delete(const void *v)
{
	LC_BODY_OF(delete, v);

	return lc_del_kind_bad(m->kind) || !lc_relname_ok(m->name);
}

int
lc__msg_check_deleted(const void *v)
{
	LC_BODY_OF(deleted, v);

	return lc_del_kind_bad(m->kind) || !lc_relname_ok(m->name);
}
