/*
 * Internal to the controller: its state, shared by controller.c (the poll
 * loop and the checked relay of agent messages), negotiate.c (HELLO,
 * stream/window/block settlement, LISTENING -> CONNECT) and datapath.c
 * (the data path and the addresses each side dials).
 */
#ifndef LANECP_CONTROLLER_INT_H
#define LANECP_CONTROLLER_INT_H

#include "controller.h"
#include "endpoint.h"
#include "location.h"
#include "progress.h"
#include "relay.h"
#include "wire.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What each request asked for (the peer checks: controller.c). */
struct lc_ctl_req {
	char name[LC_PATH_MAX];	/* the root name its FILEs carry; "" with
				   LC_ADD_CONTENTS (names are its entries) */
	uint32_t flags;		/* LC_ADD_* sent with it */
	uint32_t files;		/* FILEs relayed for it */
	uint64_t bytes;
	int root_dir;		/* its root entry was a directory */
	char *last;		/* last name announced for it (the order) */
	char *lastdir;		/* last directory announced for it */
};

/*
 * A file in flight: announced and not yet done.  The controller keeps
 * LC_FILES_INFLIGHT of them in a ring indexed by id (the source may only
 * announce ids below the credit it was given, lo + LC_FILES_INFLIGHT), so
 * its memory does not grow with the tree.
 */
struct lc_ctl_file {
	uint32_t id;		/* 0: free slot */
	uint8_t kind;		/* LC_KIND_* */
	uint32_t req;		/* the request (SRC_ADD) it answers */
	uint64_t size;
	uint64_t prefix_len;	/* resume: the sink's partial file */
	uint32_t chunk;		/* resume: its chunk size */
	uint64_t kept;		/* resume: bytes of it kept (resumed) */
	uint64_t match;		/* resume: the source's PREFIX_MATCH */
	uint8_t prefixed;	/* FILE_PREFIX relayed */
	uint8_t matched;	/* PREFIX_MATCH relayed */
	uint8_t ready;		/* FILE_READY relayed */
	uint8_t summed;		/* FILE_SUM relayed */
	uint8_t done;		/* FILE_DONE or FILE_SKIP seen */
	uint8_t aborted;	/* FILE_ABORT relayed: the sink skips it */
	uint8_t stream;		/* LC_KIND_STREAM: size is LC_STREAM_MAX (a
				   bound) until FILE_LEN */
	uint8_t len_known;	/* FILE_LEN relayed: size is the length */
	char *name;		/* as announced (owned) */
};

struct lc_ctl {
	const struct lc_copy_opts *o;
	int stdout_target;	/* the target is "-": stdout is the data's */
	int pipes;		/* "-" or -N on either side (HELLO check) */
	uint32_t streams_open;	/* streams announced, no FILE_LEN yet */
	struct lc_location *srcs;
	struct lc_ctl_req *reqs;	/* one per source, what was asked */
	struct lc_location dst;
	struct lc_endpoint src;
	struct lc_endpoint dst_ep;
	uint8_t *key;		/* LC_KEY_LEN bytes, secmem.h */
	uint32_t streams;
	uint32_t window;
	uint32_t block;
	int negotiated;
	int listening;
	uint32_t adds_sent;
	uint32_t listed;
	uint32_t files_total;	/* ids announced: 1 .. files_total */
	uint32_t files_settled;	/* ready, or done without data */
	uint32_t files_sent;	/* FILE_READY relayed (the source's count) */
	uint32_t files_done;	/* FILE_DONE or FILE_SKIP */
	uint32_t files_written;	/* regular files FILE_DONE */
	uint32_t lo;		/* lowest id not done */
	uint32_t credit;	/* SRC_CREDIT sent: ids below it */
	uint64_t bytes_total;
	uint64_t bytes_done;
	uint32_t mark_file;	/* the sink's last mark (PROGRESS) */
	uint64_t mark_written;
	int nomore_sent;
	int src_done;
	int sink_done;
	int bye_sent;
	int src_bye;
	int dst_bye;
	uint64_t t_start;
	struct lc_progress progress;
	uint64_t next_progress;
	uint64_t next_json;	/* --json-progress: the next line (ms) */
	uint64_t json_bytes;	/* and the bytes at the last one */
	uint64_t json_ns;
	uint64_t next_ping;	/* the agents' heartbeat (ms) */
	struct lc_ctl_file ring[LC_FILES_INFLIGHT];
	char target_shown[LC_PATH_MAX + 300];
	struct lc_copy_result *res;
	pid_t test_proxy;
	uint64_t src_sent;	/* from the source's heartbeat */
	uint64_t src_wire;	/* of those, payload bytes on the wire */
	uint64_t t_src_msg;	/* last message from each agent (ms) */
	uint64_t t_dst_msg;
	uint64_t t_progress;	/* last time data or files moved */
	uint64_t last_bytes;
	uint64_t t_moved;	/* when the sink last reported new bytes (ms) */
	int target_is_dir;
	int target_ok;		/* TARGET_OK seen */
	int keep_setid;		/* -p as root from a local source */
	int connected;		/* CONNECTED seen */
	/* the data path (datapath.c) */
	int path;		/* enum lc_path settled for this attempt */
	int tls;		/* the data streams run TLS (not over SSH) */
	char path_why[200];	/* why, for -v and --json */
	struct lc_ssh_opts so_src;	/* how each remote end was reached */
	struct lc_ssh_opts so_dst;
	struct lc_ssh *pre[2][LC_MAX_STREAMS];	/* --via-ssh: one per stream
						   (source, sink), opened
						   before LISTEN */
	uint16_t dst_ports[LC_MAX_STREAMS];	/* LISTENING, for a relay */
	struct lc_relay *relay;
	struct lc_endpoint *err_ep;	/* the agent whose ERROR ended the copy */
};

/* The agent program to run remotely (-T), "lanecp" by default. */
const char *lc__ctl_agent_cmd(const struct lc_ctl *c);

/* Queue HELLO on ep's control output.  0 or -LC_ERR_*. */
int lc__ctl_send_hello(struct lc_endpoint *ep);

/*
 * ep's HELLO (payload p, n bytes): record it.  0, or -LC_ERR_VERSION /
 * -LC_ERR_PROTO with e set.
 */
int lc__ctl_got_hello(struct lc_ctl *c, struct lc_endpoint *ep,
    const uint8_t *p, size_t n, struct lc_err *e);

/*
 * Both endpoints answered HELLO: settle streams, window and block from the
 * options and both HELLOs, make the stream key, and queue SINK_TARGET and
 * LISTEN to the sink and one SRC_ADD per source.  0 or -LC_ERR_* with e set.
 */
int lc__ctl_negotiate(struct lc_ctl *c, struct lc_err *e);

/*
 * The sink's LISTENING (payload p, n bytes): take the streams and block it
 * grants (never more than asked), and queue CONNECT with its ports to the
 * source (through the test proxy in hook builds).  Fills the settled
 * values into c->res.  0 or -LC_ERR_* with e set.
 */
int lc__ctl_listening(struct lc_ctl *c, const uint8_t *p, size_t n,
    struct lc_err *e);

/*
 * The address the source's data streams connect to, into out (outsz
 * bytes): the one the controller itself used to reach the sink's host.
 * 0 or -LC_ERR_INTERNAL with e set.
 */
int lc__ctl_data_addr(struct lc_ctl *c, char *out, size_t outsz,
    struct lc_err *e);

/*
 * Settle the data path for this attempt (c->path, c->path_why) from the
 * options and the endpoints, and for --via-ssh open the SSH connections
 * for the streams (which may lower c->streams).  Called by negotiate
 * once streams are settled.  0 or -LC_ERR_* with e set.
 */
int lc__ctl_path_setup(struct lc_ctl *c, struct lc_err *e);

/* LISTEN and CONNECT flags for the path (LC_XFER_REVERSE, ..._LOOPBACK). */
uint32_t lc__ctl_listen_flags(const struct lc_ctl *c);
uint32_t lc__ctl_connect_flags(const struct lc_ctl *c);

/*
 * The source's CONNECTED: in reverse, DIAL its ports to the sink; through
 * the controller (relay, via SSH), start the relay.  0 or -LC_ERR_*.
 */
int lc__ctl_connected(struct lc_ctl *c, const struct lc_msg_connected *m,
    struct lc_err *e);

/*
 * What -v says about the path: "data streams to ADDR, direct", "reverse:
 * HOST dials ADDR", "relayed through this host", "via SSH x N", and why.
 */
void lc__ctl_path_text(const struct lc_ctl *c, const char *daddr, char *out,
    size_t outsz);

/* The sink lost stream i: a relayed stream is connected again. */
void lc__ctl_path_lost(struct lc_ctl *c, uint32_t i);

/* Stop the relay and close what the path opened. */
void lc__ctl_path_free(struct lc_ctl *c);

#endif
