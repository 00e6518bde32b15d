/*
 * Wire formats: control messages (over the agent's stdin/stdout) and data
 * stream frames.  docs/PROTOCOL.md describes both in prose.
 *
 * Control frame:  u32 length | u8 type | payload      (length = 1 + payload)
 * All integers are big-endian; strings are u32 length + bytes (no NUL).
 * Structures are never cast onto the wire: each message has an encoder that
 * appends a whole frame to a struct lc_buf and a decoder that parses a
 * payload on a bounded view and rejects trailing bytes.  The messages,
 * their owners and their bodies' fields are one table, wire_msgs.def; the
 * encoders and decoders below are made from it (wire.c).
 */
#ifndef LANECP_WIRE_H
#define LANECP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "lc_limits.h"

/* LC_PATH_MAX, LC_HOST_MAX, LC_ADDR_MAX, LC_KEY_LEN: lanecp/limits.h */
#define LC_PROTO_MAGIC 0x4c4e4350u	/* "LNCP" */
#define LC_PROTO_VERSION 4
#define LC_CTL_MAX (1u << 20)		/* largest control frame */
#define LC_MAX_STREAMS 64
#define LC_MIN_BLOCK (4u << 10)
#define LC_MAX_BLOCK (64u << 20)
#define LC_MAX_WINDOW (1u << 30)
#define LC_SOFT_MAX 64			/* software version string */
#define LC_CSUM_MAX 160			/* "alg=hex" checksum text */
#define LC_OWNER_MAX 64			/* a user or group name */

/* The message types, from the table (wire_msgs.def: who sends each). */
enum lc_msg_type {
#define LC_MSG(name, code, owner, body) LC_MSG_##name = code,
#include "wire_msgs.def"
#undef LC_MSG
};

/* Who handles a message type (wire_msgs.def). */
enum lc_msg_owner {
	LC_OWNER_AGENT = 1,	/* the agent itself, whatever its role */
	LC_OWNER_SOURCE,	/* the source role */
	LC_OWNER_SINK,		/* the sink role */
	LC_OWNER_CTL,		/* only the controller receives it */
};

/* HELLO flags */
#define LC_HELLO_RESTRICTED 0x1u	/* agent serves one directory only */
#define LC_HELLO_PIPES 0x2u	/* agent knows LC_KIND_PIPE, FILE_LEN, the
				   stdin/program SRC_ADD and SINK_TARGET
				   flags (issue 14) */
#define LC_HELLO_MIRROR 0x4u	/* agent knows SRC_FILTER, the DEL_*
				   messages, LC_TGT_DELETE and _DRYRUN and
				   the dry-run FILE_SKIPs (issue 24) */
#define LC_HELLO_COUNTS 0x8u	/* FILE_DONE carries its u8 flags: an agent
				   adds them when the controller's HELLO has
				   this flag, the controller takes them when
				   the sink's has it (issue 24) */

/* FILE_DONE flags (with LC_HELLO_COUNTS) */
#define LC_DONE_REPLACED 0x1u	/* a regular file that replaced an entry
				   at the target: "updated", not "copied" */
#define LC_DONE_MASK 0x1u
#define LC_HELLO_HASHES 0x10u	/* agent knows FILE_HASHES and
				   LC_TGT_HASHES (issue 24, delta24b) */
#define LC_HELLO_NOMORE 0x20u	/* agent knows SINK_NOMORE: a sink that
				   gets it sends SINK_DONE once every file
				   is done, without the streams' END
				   (issue 23, nomore23) */
#define LC_HELLO_FED 0x40u	/* agent knows LC_ADD_FED and SRC_ENTRY:
				   a source fed entry by entry (issue 25,
				   the overlapped chain) */
#define LC_HELLO_SHARD 0x80u	/* agent knows SRC_FILTER kind 3,
				   LC_FILTER_SHARD (issue 25, --shard) */
#define LC_HELLO_COUNT_INFLIGHT 0x100u	/* as a sink, the agent bounds the
					   files in flight by their count
					   (TARGET_OK inflight not done),
					   not by their ids' distance from
					   the lowest not done: the
					   controller's credit may follow
					   the files done (issue 23,
					   credit23) */

#define LC_HELLO_FOLLOW 0x200u	/* as a source, the agent knows SRC_PART
				   and SRC_AVAIL: a fed entry read from the
				   part file the target before is still
				   writing, up to what is final there
				   (issue 25, the chain's next hop follows
				   the part file) */

/* File kinds in LC_MSG_FILE */
enum lc_file_kind {
	LC_KIND_REG = 1,
	LC_KIND_DIR = 2,
	LC_KIND_SYMLINK = 3,
	LC_KIND_PIPE = 4,	/* data of unknown length (a pipe): size 0 in
				   FILE, the length comes in FILE_LEN */
};

/*
 * The longest pipe (LC_KIND_PIPE) a sink takes: offsets and FILE_LEN
 * are bounded by it before the length is known.
 */
#define LC_PIPE_MAX (1ull << 62)

/* SRC_ADD flags */
#define LC_ADD_RECURSIVE 0x1u	/* -r */
#define LC_ADD_FOLLOW 0x2u	/* -L */
#define LC_ADD_CONTENTS 0x4u	/* "dir/": the contents, not dir itself */
#define LC_ADD_NAMES 0x8u	/* --owner: send user and group names */
#define LC_ADD_STDIN 0x10u	/* path "-": the local agent's stdin */
#define LC_ADD_PROGRAM 0x20u	/* -N i: path is a command for /bin/sh -c,
				   its stdout is the data */
#define LC_ADD_FED 0x40u	/* (HELLO 0x40) the root, then only the
				   entries SRC_ENTRY names, in that order,
				   until SRC_ENTRY's end (--also's chain) */
#define LC_ADD_MASK 0x7fu

/* SRC_ENTRY flags */
#define LC_ENTRY_END 0x1u	/* the fed request has no more (name "") */
#define LC_ENTRY_MASK 0x1u
/* SRC_ENTRY names the source may hold, not yet announced */
#define LC_FED_QUEUE_MAX 8192u

/* FILE_SKIP reasons */
enum lc_skip_why {
	LC_SKIP_UPTODATE = 1,	/* -u: same size and mtime */
	LC_SKIP_EXISTS = 2,	/* -O: the target exists */
	LC_SKIP_FAILED = 3,	/* could not be written: reported, not fatal */
	LC_SKIP_DRY_NEW = 4,	/* -n: it would be made (not there) */
	LC_SKIP_DRY_UPDATE = 5,	/* -n: it would be replaced */
	LC_SKIP_DRY_SAME = 6,	/* -n: a directory or link already as
				   listed */
};

/*
 * FILE_SKIP why 1: what the sink gave the skipped file from its source
 * (-p: mode, times; --owner: owner), as its message: these words, each
 * at most once, in this order, joined by ',' ("" when nothing changed).
 */
#define LC_SKIP_SET_MODE 0x1u
#define LC_SKIP_SET_OWNER 0x2u
#define LC_SKIP_SET_TIMES 0x4u

/* The message for the bits set (out holds at least 32 bytes). */
void lc_skip_set_put(unsigned set, char *out, size_t outsz);

/* The bits a message of FILE_SKIP why 1 names: 0, or -1 if it is not
 * such a message. */
int lc_skip_set_get(const char *msg, unsigned *set);

/*
 * Files in flight: the controller lets the source announce file ids only
 * while at most a window of them is not yet done (a window beyond the
 * lowest one not done, to a sink without LC_HELLO_COUNT_INFLIGHT), and
 * the sink holds at most that many (each may hold a descriptor at both
 * ends).  The controller
 * asks SINK_TARGET for LC_FILES_INFLIGHT_MAX; the sink grants (TARGET_OK
 * inflight) at most that, at most LC_FILES_INFLIGHT when --restrict, and
 * never less than LC_FILES_INFLIGHT or the ask, whichever is smaller: the
 * controller's first credit, sent before TARGET_OK, is LC_FILES_INFLIGHT.
 */
#define LC_FILES_INFLIGHT 512u
#define LC_FILES_INFLIGHT_MAX 4096u
/*
 * With LC_HELLO_COUNT_INFLIGHT, the ids the source may have announced
 * above the sink's mark (it keeps each file it sent open until the mark
 * passes it): its HELLO max_files, at most this, at least the window.
 */
#define LC_FILES_HELD_MAX 32768u

/* SINK_TARGET flags */
#define LC_TGT_FORCE 0x1u	/* overwrite an existing target (-f) */
#define LC_TGT_WANT_DIR 0x2u	/* several sources: target must be a dir */
#define LC_TGT_RESUME 0x4u	/* -a */
#define LC_TGT_NO_FSYNC 0x8u
#define LC_TGT_NO_SPACE_CHECK 0x10u
#define LC_TGT_PRESERVE 0x20u	/* -p: times and permission bits */
#define LC_TGT_UPDATE 0x40u	/* -u: skip files with the same size, mtime */
#define LC_TGT_SKIP_EXISTING 0x80u	/* -O */
#define LC_TGT_TREE 0x100u	/* names are relative paths; dirs, links */
#define LC_TGT_OWNER 0x200u	/* --owner: owner and group (as root) */
#define LC_TGT_NUMERIC_IDS 0x400u	/* --numeric-ids: no name mapping */
#define LC_TGT_SETID 0x800u	/* -p, root, local source: set-id bits too */
#define LC_TGT_STDOUT 0x1000u	/* target "-": the local agent's stdout */
#define LC_TGT_PROGRAM 0x2000u	/* -N o: target is a command for /bin/sh -c,
				   its stdin gets the data */
#define LC_TGT_DELTA 0x4000u	/* with -u: a changed file is built from the
				   one it replaces, only differing chunks sent */
#define LC_TGT_DELETE 0x8000u	/* --delete: keep the names listed for
				   DEL_SCAN */
#define LC_TGT_DRYRUN 0x10000u	/* -n: change nothing, answer FILE_SKIP
				   LC_SKIP_DRY_* for every entry */
#define LC_TGT_HASHES 0x20000u	/* with _DELTA: the source knows
				   FILE_HASHES; a delta's hashes go as those */
#define LC_TGT_MASK 0x3ffffu

/* LISTEN / CONNECT flags */
#define LC_XFER_ENCRYPT 0x1u
/*
 * Reverse: in LISTEN, the sink does not listen but dials the addresses a
 * DIAL gives; in CONNECT, the source listens (no address, no ports) and
 * names its ports in CONNECTED.  The TLS and key handshake keep their
 * roles (the sink is the server), whichever side dialled.
 */
#define LC_XFER_REVERSE 0x2u
/* Listen on the loopback address only (streams carried by the controller
 * over SSH arrive from the host itself). */
#define LC_XFER_LOOPBACK 0x4u
/*
 * Compression (-c): in LISTEN, DATA frames may come deflated
 * (LC_FRAME_F_ZLIB); without it the sink rejects them.  In CONNECT, set
 * exactly when zlevel is 1..9: the source deflates at that level.
 */
#define LC_XFER_COMPRESS 0x8u
#define LC_XFER_MASK 0xfu
#define LC_ZLEVEL_MAX 9
#define LC_CSUM_ALG_MAX 3u		/* highest enum lc_csum_alg value */

/* Decoded messages.  Strings are copied into fixed arrays. */
struct lc_msg_hello {
	uint32_t magic;
	uint16_t proto;
	char software[LC_SOFT_MAX];
	/* the fields below are only decoded when proto matches */
	uint32_t flags;
	uint32_t max_streams;
	uint64_t rmem_max;
	uint64_t wmem_max;
	uint32_t log_level;
	char hostname[LC_HOST_MAX];
	uint32_t max_files;	/* agents: files in flight their descriptor
				   limit covers (half of it, at most 65536);
				   the controller sends 0 */
};

struct lc_msg_error {
	uint32_t code;
	char msg[1024];
};

struct lc_msg_src_add {
	uint32_t flags;
	char path[LC_PATH_MAX];
};

struct lc_msg_src_entry {
	uint32_t flags;			/* LC_ENTRY_* */
	char name[LC_PATH_MAX];		/* as the source announces it */
};

struct lc_msg_src_part {
	uint64_t size;			/* the file's length when whole */
	char name[LC_PATH_MAX];		/* as the source announces it */
};

struct lc_msg_src_avail {
	uint32_t id;			/* a file announced from SRC_PART */
	uint64_t avail;			/* [0, avail) is final; never
					   decreasing, at most its size */
};

struct lc_msg_file {
	uint32_t id;
	uint8_t kind;
	uint32_t mode;
	uint64_t size;
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	char name[LC_PATH_MAX];	/* relative: components joined by '/' */
	char link[LC_PATH_MAX];	/* LC_KIND_SYMLINK: its target, else "" */
	uint32_t uid;		/* the source's owner and group */
	uint32_t gid;
	char user[LC_OWNER_MAX];	/* their names (LC_ADD_NAMES), or "" */
	char group[LC_OWNER_MAX];
};

/*
 * The controller's heartbeat: an agent that hears nothing at all from the
 * controller for grace_s seconds stops (its partial files stay for -a).
 */
#define LC_PING_GRACE_MAX 3600
struct lc_msg_ping {
	uint32_t grace_s;	/* 1 .. LC_PING_GRACE_MAX */
};

struct lc_msg_src_credit {
	uint32_t upto;		/* the source may announce ids < upto */
};

struct lc_msg_file_skip {
	uint32_t id;
	uint8_t why;		/* enum lc_skip_why */
	char msg[1024];
};

struct lc_msg_file_abort {
	uint32_t id;
	char msg[1024];
};

struct lc_msg_file_fail {
	char name[LC_PATH_MAX];
	char msg[1024];
};

/*
 * --exclude / --include (filter.h): at most LC_FILTER_MAX SRC_FILTERs,
 * each before the first SRC_ADD, in the user's order.
 */
#define LC_FILTER_MAX 1024	/* rules per copy */
#define LC_FILTER_PAT_MAX 1024	/* bytes of one pattern, NUL included */
enum lc_filter_kind {
	LC_FILTER_EXCLUDE = 1,
	LC_FILTER_INCLUDE = 2,
	LC_FILTER_SHARD = 3,	/* pattern "I/N" (shard.h): only the entries
				   of shard I of N; at most one, with
				   LC_HELLO_SHARD */
};

struct lc_msg_src_filter {
	uint8_t kind;		/* enum lc_filter_kind */
	char pattern[LC_FILTER_PAT_MAX];	/* not empty */
};

/* --delete (docs/PROTOCOL.md "Deletions") */
struct lc_msg_del_scan {
	char root[LC_PATH_MAX];	/* a relative name listed as a directory,
				   or "": the target directory itself */
};

struct lc_msg_del_cand {
	uint8_t kind;		/* LC_KIND_REG, _DIR or _SYMLINK (anything
				   else that is not a directory: _REG) */
	char name[LC_PATH_MAX];	/* relative, under the scan's root */
};

struct lc_msg_del_scanned {
	uint32_t count;		/* DEL_CANDs of this scan */
	char msg[1024];		/* "": complete; else why not (no deletion
				   follows) */
};

struct lc_msg_delete {
	uint8_t kind;
	char name[LC_PATH_MAX];
};

struct lc_msg_deleted {
	uint8_t kind;
	char name[LC_PATH_MAX];	/* the DELETE's, in order */
	char msg[1024];		/* "": removed; else why not */
};

struct lc_msg_src_listed {
	uint32_t files;
	uint64_t bytes;
};

struct lc_msg_sink_target {
	uint32_t flags;
	uint32_t inflight;	/* file ids not yet done at once, at most */
	char target[LC_PATH_MAX];
	/*
	 * The run's takeover key (lockholder.h, takeover.h): the same for
	 * every attempt of one lanecp invocation, random, secret; all zero:
	 * none (no takeover either way).
	 */
	uint8_t takeover[LC_KEY_LEN];
};

struct lc_msg_target_ok {
	uint8_t is_dir;
	char resolved[LC_PATH_MAX];
	uint32_t inflight;	/* files in flight granted (1 .. asked) */
};

struct lc_msg_file_ready {
	uint32_t id;
	uint64_t start;		/* first byte to send (resume) */
};

struct lc_msg_listen {
	uint32_t streams;
	uint32_t window;	/* 0: leave autotuning on */
	uint32_t block;
	uint32_t flags;
	uint32_t csum;		/* enum lc_csum_alg, 0: none */
	uint32_t stall_s;	/* a stream idle this long is lost; 0: never */
	uint32_t quiet_s;	/* every stream silent this long: the path went
				   away, reconnect them all; 0: never */
	uint8_t key[LC_KEY_LEN];
};

struct lc_msg_listening {
	uint32_t streams;
	uint32_t window;	/* effective SO_RCVBUF, 0 = autotuned */
	uint32_t block;
	uint32_t quota;		/* buffers per stream at the sink */
	uint32_t nports;	/* 0 (reverse) or streams */
	uint16_t ports[LC_MAX_STREAMS];
};

struct lc_msg_connect {
	char addr[LC_ADDR_MAX];
	uint32_t streams;
	uint32_t window;
	uint32_t block;
	uint32_t flags;
	uint32_t csum;		/* enum lc_csum_alg, 0: none */
	uint64_t rate;		/* bytes per second over all streams, 0: any */
	uint32_t zlevel;	/* deflate level 1..9 with LC_XFER_COMPRESS,
				   else 0 */
	uint8_t key[LC_KEY_LEN];
	uint16_t ports[LC_MAX_STREAMS];
};

struct lc_msg_connected {
	uint32_t streams;
	uint32_t window;	/* effective SO_SNDBUF, 0 = autotuned */
	uint32_t nports;	/* streams (reverse: the source listens) or 0 */
	uint16_t ports[LC_MAX_STREAMS];
};

/* DIAL (reverse): where the sink's streams connect to. */
struct lc_msg_dial {
	char addr[LC_ADDR_MAX];	/* numeric */
	uint32_t streams;
	uint16_t ports[LC_MAX_STREAMS];
};

struct lc_msg_file_done {
	uint32_t id;
	uint64_t bytes;
	char checksum[LC_CSUM_MAX];
	/*
	 * LC_HELLO_COUNTS: the u8 after the checksum, sent and decoded only
	 * when has_flags (a message without it is a peer's from before).
	 */
	uint8_t has_flags;
	uint8_t flags;		/* LC_DONE_* */
};

struct lc_msg_xfer_done {	/* SRC_DONE and SINK_DONE */
	uint64_t bytes;
	uint32_t files;
	uint64_t wire;		/* SRC_DONE: DATA payload bytes on the wire
				   (less than bytes when compressed); <= bytes;
				   SINK_DONE: 0 */
};

/* FILE_LEN: a pipe (LC_KIND_PIPE) ended after length bytes. */
struct lc_msg_file_len {
	uint32_t id;
	uint64_t length;	/* <= LC_PIPE_MAX */
};

/*
 * Heartbeat, about once a second from both agents.  bytes: received and
 * written (sink) or sent (source).  The sink adds its low-water mark:
 * every block before (file, written) in the global order is on disk.
 */
struct lc_msg_progress {
	uint64_t bytes;
	uint32_t file;
	uint64_t written;
	uint64_t wire;		/* source: DATA payload bytes on the wire
				   (<= bytes); sink: 0 */
};

struct lc_msg_file_sum {
	uint32_t id;
	char checksum[LC_CSUM_MAX];
};

#define LC_PREFIX_MAX_CHUNKS 16384
#define LC_PREFIX_HASH_LEN 32

/* Resume: the sink's partial file, hashed in chunks (SHA-256 each). */
struct lc_msg_file_prefix {
	uint32_t id;
	uint64_t length;	/* bytes in the partial file */
	uint32_t chunk;		/* chunk size; the last chunk may be short */
	uint32_t n;		/* ceil(length / chunk) */
	const uint8_t *hashes;	/* n * 32 bytes, points into the frame */
};

/*
 * -u's delta with LC_TGT_HASHES: the sink's chunk hashes of the old copy
 * in one or more FILE_HASHES frames, each a slice [first, first + n) of
 * the total.  A hash is the first 16 bytes of the chunk's SHA-256: half
 * the bytes let a file have twice the chunks for the same list, and
 * small chunks are what keeps a scattered change small (PROTOCOL.md,
 * "-u's delta").  LC_HASHES_MAX_CHUNKS: 1 GiB gets 8 KiB chunks, 2 MiB
 * of hashes; LC_HASHES_PER_FRAME: 512 KiB of them per frame.
 */
#define LC_HASHES_MAX_CHUNKS 131072u
#define LC_HASHES_PER_FRAME 32768u
#define LC_HASHES_HASH_LEN 16
/*
 * The hash lists of -u's deltas in flight at once: the sink sends whole
 * what would go past it; the source refuses a sink whose FILE_HASHES
 * lists not yet answered add up to more.
 */
#define LC_DELTA_MEM_MAX (32u << 20)
/* A PREFIX_MATCH answers either list: its runs lie below this chunk. */
#define LC_MATCH_MAX_CHUNKS LC_HASHES_MAX_CHUNKS
_Static_assert(LC_HASHES_MAX_CHUNKS >= LC_PREFIX_MAX_CHUNKS,
    "PREFIX_MATCH's run bound covers FILE_PREFIX's chunks too");

struct lc_msg_file_hashes {
	uint32_t id;
	uint64_t length;	/* bytes of the old copy compared */
	uint32_t chunk;		/* chunk size; the last chunk may be short */
	uint32_t total;		/* ceil(length / chunk), the whole list */
	uint32_t first;		/* this frame's first chunk */
	uint32_t n;		/* hashes in this frame, 1 .. PER_FRAME */
	const uint8_t *hashes;	/* n * 16 bytes, points into the frame */
};

/*
 * Resume: at most this many runs of differing chunks are rewritten in
 * place; a partial file with more is cut at the first chunk of the next
 * run (everything from there is sent again).  Half the chunks: runs do
 * not touch, so every run there can be is kept (-u's delta of a file
 * with changes scattered over thousands of chunks sends only those; 256
 * cut a 1 GiB file with 1 % changed in 4 KiB pages at about a tenth and
 * sent the rest).  64 KiB in the struct, 8 bytes a run on the wire.
 */
#define LC_PREFIX_MAX_RUNS (LC_PREFIX_MAX_CHUNKS / 2)

/* A run of differing chunks: chunks first .. first + count - 1. */
struct lc_chunk_run {
	uint32_t first;
	uint32_t count;
};

/*
 * The source's verdict on a FILE_PREFIX: the partial file is kept below
 * match except for the runs, which are sent again, as is [match, size).
 */
struct lc_msg_prefix_match {
	uint32_t id;
	uint64_t match;		/* the partial file is cut here */
	uint32_t n;		/* runs, in order, not touching */
	struct lc_chunk_run runs[LC_PREFIX_MAX_RUNS];
};

struct lc_msg_stream_lost {
	uint32_t stream;
	uint8_t has_last;	/* 0: nothing arrived on it */
	uint32_t last_file;	/* last whole block received on it */
	uint64_t last_off;
	char reason[256];
};

struct lc_msg_ack {
	uint32_t file;
	uint64_t written;
};

/* Room for any decoded body: one member per LC_BODY row, named as it. */
union lc_msg_any {
#define LC_BODY(body, type, checks, fields) struct lc_msg_##body body;
#include "wire_msgs.def"
#undef LC_BODY
};

/*
 * The message table (wire_msgs.def), by type.  lc_msg_owner: LC_OWNER_*,
 * 0 for a type not in it.  lc_msg_put: encode m, the body of type's
 * layout (NULL for a message without one) as lc_msg_put_<body> does.
 * lc_msg_get: decode a payload of that type into m as lc_msg_get_<body>
 * does; -LC_ERR_PROTO for a type not in the table.
 */
int lc_msg_owner(uint8_t type);
int lc_msg_put(struct lc_buf *out, uint8_t type, const void *m);
int lc_msg_get(uint8_t type, const uint8_t *p, size_t n,
    union lc_msg_any *m);

/*
 * Encoders append one whole frame to out.  Return 0, -LC_ERR_TOOBIG or
 * -LC_ERR_NOMEM.  One per body of the table, lc_msg_put_<body>(out, m);
 * a body several messages share (type NONE in the table) takes the type,
 * or more, and is declared by hand.
 */
#define LC__PUT_DECL_TYPE(code) LC__PUT_DECL(
#define LC__PUT_DECL_NONE LC__PUT_DECL_SKIP(
#define LC__PUT_DECL_SKIP(body)
#define LC__PUT_DECL(body) \
	int lc_msg_put_##body(struct lc_buf *out, \
	    const struct lc_msg_##body *m);
#define LC_BODY(body, type, checks, fields) LC__PUT_DECL_##type body)
#include "wire_msgs.def"
#undef LC_BODY
int lc_msg_put_error(struct lc_buf *out, uint32_t code, const char *msg);
int lc_msg_put_empty(struct lc_buf *out, uint8_t type);
int lc_msg_put_xfer_done(struct lc_buf *out, uint8_t type,
    const struct lc_msg_xfer_done *m);

/*
 * Frame splitting: if buf holds a whole frame, set *type, *payload, *plen
 * and *framelen (bytes to consume) and return 1; 0 if more bytes are
 * needed; -LC_ERR_PROTO for a zero or oversized length.
 */
int lc_msg_peek(const uint8_t *buf, size_t len, uint8_t *type,
    const uint8_t **payload, size_t *plen, size_t *framelen);

/*
 * Decoders parse a payload (without the length and type bytes) into m,
 * one per body of the table: lc_msg_get_<body>(p, n, m).  Return 0 or
 * -LC_ERR_PROTO; lc_msg_get_hello returns -LC_ERR_VERSION with magic,
 * proto and software filled when the peer speaks another version.  A
 * FILE_PREFIX's m->hashes points into p: valid while the frame is.
 */
#define LC_BODY(body, type, checks, fields) \
	int lc_msg_get_##body(const uint8_t *p, size_t n, \
	    struct lc_msg_##body *m);
#include "wire_msgs.def"
#undef LC_BODY
int lc_msg_get_empty(const uint8_t *p, size_t n);
/*
 * Check a decoded PREFIX_MATCH against the FILE_PREFIX it answers
 * (length, chunk): match at most length and at a chunk boundary or at
 * length, every run inside [0, match).  0 or -LC_ERR_PROTO.
 */
int lc_prefix_match_check(const struct lc_msg_prefix_match *m,
    uint64_t length, uint32_t chunk);
/*
 * The runs of a checked PREFIX_MATCH as byte ranges (out: m->n spans, the
 * last chunk of the partial file may be short); returns their total.
 */
uint64_t lc_prefix_match_spans(const struct lc_msg_prefix_match *m,
    uint64_t length, uint32_t chunk, struct lc_span *out);

/*
 * 1 if name is a relative name as FILE carries it: non-empty components
 * joined by single '/', none of them "." or "..", no leading or trailing
 * '/'.  Else 0.
 */
int lc_relname_ok(const char *name);

/*
 * Order of relative names in a listing (pre-order, each directory's
 * entries sorted by bytes): compares component by component.  Negative,
 * zero or positive like strcmp.
 */
int lc_relname_cmp(const char *a, const char *b);

/* Name of a message type for logs ("FILE_READY"), "?" if unknown. */
const char *lc_msg_name(uint8_t type);

/*
 * Data stream frame header, 24 bytes:
 *   u8 type | u8 flags | u16 reserved (0) | u32 file id | u64 offset |
 *   u32 length (payload bytes on the wire) | u32 raw length
 */
#define LC_FRAME_HDR_LEN 24
/*
 * DATA flag: the payload is one complete zlib stream (RFC 1950, deflate
 * inside, adler32 of the raw bytes at the end) that inflates to exactly
 * raw_len bytes; 1 <= len < raw_len <= block.  Only with LC_XFER_COMPRESS.
 */
#define LC_FRAME_F_ZLIB 0x01u

enum lc_frame_type {
	LC_FRAME_DATA = 1,	/* payload: file bytes at offset */
	LC_FRAME_END = 2,	/* no more frames on this stream */
	LC_FRAME_IDLE = 3,	/* nothing to send right now (heartbeat) */
	LC_FRAME_HOLE = 4,	/* raw_len zero bytes at offset, no payload */
};

#define LC_MAX_HOLE (1u << 30)	/* longest HOLE frame */

struct lc_frame {
	uint8_t type;
	uint8_t flags;
	uint32_t file_id;
	uint64_t offset;
	uint32_t len;
	uint32_t raw_len;
};

void lc_frame_put(uint8_t out[LC_FRAME_HDR_LEN], const struct lc_frame *f);
/*
 * Decode and validate a header against the negotiated block size: type
 * known, reserved bits zero, flags zero except LC_FRAME_F_ZLIB on DATA;
 * DATA: raw_len in 1..max_block, offset + raw_len not overflowing, and
 * len == raw_len, or with LC_FRAME_F_ZLIB 1 <= len < raw_len; HOLE with
 * len 0 and raw_len in 1..LC_MAX_HOLE, offset + raw_len not overflowing;
 * END and IDLE all zero.  Whether compressed frames were negotiated is the
 * caller's to check.  Returns 0 or -LC_ERR_PROTO.
 */
int lc_frame_get(const uint8_t in[LC_FRAME_HDR_LEN], uint32_t max_block,
    struct lc_frame *f);

/*
 * The takeover exchange (takeover.h, docs/PROTOCOL.md "Stale agents"), on
 * a local AF_UNIX socket between two agents of one account, never on the
 * network or the control channel:
 *
 *   holder -> asker   challenge  "LCTC" u8 version (1) nonce[32]
 *   asker -> holder   request    "LCTQ" mac[32] string root
 *   holder -> asker   answer     "LCTA" u8 verdict (LC_TAKEOVER_*)
 *
 * root is the asker's --restrict directory ("" for none), at most
 * LC_PATH_MAX - 1 bytes, no NUL.  Decoders reject short input, trailing
 * bytes, another version and unknown verdicts: 0 or -LC_ERR_PROTO.
 */
#define LC_TAKEOVER_VERSION 1
#define LC_TAKEOVER_NONCE_LEN 32
#define LC_TAKEOVER_MAC_LEN 32
#define LC_TAKEOVER_CHALLENGE_LEN (4 + 1 + LC_TAKEOVER_NONCE_LEN)
#define LC_TAKEOVER_REQUEST_MAX (4 + LC_TAKEOVER_MAC_LEN + 4 + LC_PATH_MAX)
#define LC_TAKEOVER_ANSWER_LEN 5

enum lc_takeover_verdict {
	LC_TAKEOVER_YES = 1,		/* stop me */
	LC_TAKEOVER_NO_KEY = 2,		/* not this run's key */
	LC_TAKEOVER_NO_ROOT = 3,	/* restricted to another directory
					   (or one of us is not restricted) */
};

struct lc_takeover_req {
	uint8_t mac[LC_TAKEOVER_MAC_LEN];
	char root[LC_PATH_MAX];
};

int lc_takeover_put_challenge(struct lc_buf *out,
    const uint8_t nonce[LC_TAKEOVER_NONCE_LEN]);
int lc_takeover_get_challenge(const uint8_t *p, size_t n,
    uint8_t nonce[LC_TAKEOVER_NONCE_LEN]);
int lc_takeover_put_request(struct lc_buf *out,
    const struct lc_takeover_req *m);
int lc_takeover_get_request(const uint8_t *p, size_t n,
    struct lc_takeover_req *m);
int lc_takeover_put_answer(struct lc_buf *out, uint8_t verdict);
int lc_takeover_get_answer(const uint8_t *p, size_t n, uint8_t *verdict);

#endif
