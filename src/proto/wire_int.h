/*
 * Inside the wire module: what wire.c (the table's one encoder and
 * decoder) needs of wire_checks.c (what is specific to one message).
 * The declarations come from the table (lanecp/wire_msgs.def).
 */
#ifndef LANECP_WIRE_INT_H
#define LANECP_WIRE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "wire.h"

/* A part of a body laid out in a way of its own (field kind HOOK). */
struct lc_msg_hook {
	/* append it: 0 or -LC_ERR_* */
	int (*put)(struct lc_buf *out, const void *m);
	/* read it: 0, -LC_ERR_PROTO, or another -LC_ERR_* that the decoder
	   returns as it is (HELLO: -LC_ERR_VERSION) */
	int (*get)(struct lc_rd *rd, void *m);
};

/*
 * lc__msg_check_<body>(m): 0 if a decoded body is valid, else not 0.
 * lc__msg_precheck_<body>(m): 0 if the body may be encoded, else not 0
 * (the encoder returns -LC_ERR_TOOBIG).
 */
#define LC_DECL_NONE(body)
#define LC_DECL_CHECK(body) int lc__msg_check_##body(const void *m);
#define LC_DECL_PRE(body) int lc__msg_precheck_##body(const void *m);
#define LC_DECL_BOTH(body) LC_DECL_CHECK(body) LC_DECL_PRE(body)
#define F(kind, mb) LC_DECL_F_##kind(mb)
#define FN(kind, mb, count)
#define LC_DECL_F_U8(mb)
#define LC_DECL_F_U16(mb)
#define LC_DECL_F_U32(mb)
#define LC_DECL_F_U64(mb)
#define LC_DECL_F_I64(mb)
#define LC_DECL_F_STR(mb)
#define LC_DECL_F_BYTES(mb)
#define LC_DECL_F_HOOK(name) extern const struct lc_msg_hook lc__msg_hook_##name;
#define LC_BODY(body, type, checks, fields) LC_DECL_##checks(body) fields
#include "wire_msgs.def"
#undef LC_BODY
#undef F
#undef FN

/* n ports; n of them, each non-zero, into room slots (n bounded first):
   0 or -LC_ERR_PROTO */
int lc__msg_put_ports(struct lc_buf *out, const uint16_t *ports,
    uint32_t n);
int lc__msg_get_ports(struct lc_rd *rd, uint16_t *ports, uint32_t n,
    size_t room);

#endif
