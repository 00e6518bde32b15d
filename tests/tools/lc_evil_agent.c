/*
 * lc_evil_agent: a hostile source agent for tests (scp CVE-2019-6111
 * style).  Run as "-T lc_evil_agent": it answers HELLO like a real agent
 * and, asked for any file, announces one named $LC_EVIL_NAME instead.  A
 * correct sink must refuse the name before any byte is written.
 */
#include "lanecp/buf.h"
#include "lanecp/util.h"
#include "lanecp/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
flush(struct lc_buf *b)
{
	int r = lc_write_all(1, lc_buf_ptr(b), lc_buf_len(b));

	lc_buf_reset(b);
	return r;
}

int
main(void)
{
	const char *name = getenv("LC_EVIL_NAME");
	struct lc_buf in, out;
	uint8_t *p, type;
	const uint8_t *payload;
	size_t plen, flen;
	ssize_t n;

	if (name == NULL)
		name = "../evil";
	lc_buf_init(&in, 1 << 21);
	lc_buf_init(&out, 1 << 21);
	for (;;) {
		if (lc_buf_reserve(&in, 65536, &p) != 0)
			return 1;
		n = read(0, p, 65536);
		lc_buf_unappend(&in, n > 0 ? 65536 - (size_t)n : 65536);
		if (n <= 0)
			return 0;
		while (lc_msg_peek(lc_buf_ptr(&in), lc_buf_len(&in), &type,
		    &payload, &plen, &flen) == 1) {
			if (type == LC_MSG_HELLO) {
				struct lc_msg_hello h;
				memset(&h, 0, sizeof(h));
				h.magic = LC_PROTO_MAGIC;
				h.proto = LC_PROTO_VERSION;
				snprintf(h.software, sizeof(h.software), "evil");
				h.max_streams = LC_MAX_STREAMS;
				snprintf(h.hostname, sizeof(h.hostname), "evil");
				lc_msg_put_hello(&out, &h);
			} else if (type == LC_MSG_SRC_ADD) {
				struct lc_msg_file f;
				struct lc_msg_src_listed l = { 1, 5 };
				memset(&f, 0, sizeof(f));
				f.id = 1;
				f.kind = LC_KIND_REG;
				f.mode = 0644;
				f.size = 5;
				snprintf(f.name, sizeof(f.name), "%s", name);
				lc_msg_put_file(&out, &f);
				lc_msg_put_src_listed(&out, &l);
			}
			lc_buf_consume(&in, flen);
		}
		if (flush(&out) != 0)
			return 1;
	}
}
