/*
 * Controller-side handle on one agent: a remote `lanecp --agent` over an
 * SSH exec channel, or the same agent code in a local thread on a
 * socketpair.  Either way the controller sees one file descriptor and
 * speaks the control protocol on it.
 */
#ifndef LANECP_ENDPOINT_H
#define LANECP_ENDPOINT_H

#include <pthread.h>

#include "agent.h"
#include "buf.h"
#include "err.h"
#include "lockholder.h"
#include "push.h"
#include "ssh.h"
#include "wire.h"

struct lc_endpoint {
	int remote;
	char name[300];		/* "local" or "user@host", for messages */
	int fd;
	struct lc_ssh *ssh;
	pthread_t thread;	/* local agent */
	int thread_started;
	int agent_fd;		/* local agent's end of the socketpair */
	struct lc_buf in;
	struct lc_buf out;
	struct lc_msg_hello hello;
	int hello_seen;
	int eof;
	int answered;		/* read a byte from the remote command */
	/* the transfer id handed to the agent (lockholder.h), "" for none;
	   set by the caller before opening */
	char transfer[LC_TRANSFER_HEX + 1];
	/* set by the caller before opening: start the agent through the
	   push script (push.h), or say in errors why not (1 --no-push,
	   2 LANECP_NO_PUSH) */
	int push;
	int no_push;
	int booted;		/* the script's last BOOT line was read */
	int boot_said;		/* enum lc_boot_said: how the agent started */
	char boot_path[LC_PUSH_LINE_MAX];	/* the remote agent file */
	uint8_t *boot_hello;	/* what was queued before the start (the
				   HELLO, and what prime added), sent again
				   after a push */
	size_t boot_hello_len;
	/*
	 * Set by the caller before opening, or NULL: called once the SSH
	 * connection is made, before the command starts; what it queues in
	 * ep->out goes out right behind the HELLO, without waiting for the
	 * agent (and the push script drops it with the HELLO).
	 */
	int (*prime)(void *arg, struct lc_err *e);
	void *prime_arg;
};

/* LC_BOOT_PRIVATE: pushed to a private temporary directory, removed
 * before it ran (the cache was not safe, push.h) */
enum lc_boot_said { LC_BOOT_NONE = 0, LC_BOOT_PATH, LC_BOOT_CACHED,
	LC_BOOT_PUSHED, LC_BOOT_PRIVATE };

/* Clear ep (no agent, fds -1, empty buffers). */
void lc_endpoint_init(struct lc_endpoint *ep);

/* Start the in-process agent (with ep->transfer, if set).  Returns 0 or
 * -LC_ERR_INTERNAL. */
int lc_endpoint_open_local(struct lc_endpoint *ep, struct lc_err *e);

/*
 * Connect with SSH and run "<agent_cmd> --agent" there, with
 * " --transfer ID" when ep->transfer is set (a valid id); with ep->push,
 * the push script instead (push.h; agent_cmd is then "lanecp", the name
 * it looks for on the PATH).  Returns 0, -LC_ERR_USAGE (agent_cmd too
 * long) or an error of lc_ssh_connect() or lc_ssh_exec().  With ep->push
 * the controller's HELLO must be in ep->out already (push.h).
 */
int lc_endpoint_open_remote(struct lc_endpoint *ep,
    const struct lc_ssh_opts *so, const char *agent_cmd, struct lc_err *e);

/*
 * After lc_endpoint_open_remote() with ep->push: read the script's BOOT
 * lines and push the agent when it asks for it and the remote system is
 * this build's (push.h); nothing else may be written to ep->fd before.
 * Waits up to timeout_ms (< 0: no limit) for each step.  Returns 0 (also
 * when there is nothing to do), 1 when signal_fd became readable (the
 * caller reads it), or -LC_ERR_AGENT / -LC_ERR_TIMEOUT with e set.
 */
int lc_endpoint_boot(struct lc_endpoint *ep, const char *agent_cmd,
    int signal_fd, int timeout_ms, struct lc_err *e);

/*
 * Read what is available into ep->in.  Returns 0, with ep->eof set at EOF
 * and when the agent is gone (ECONNRESET and other read errors), or
 * -LC_ERR_AGENT when ep->in cannot grow.
 */
int lc_endpoint_read(struct lc_endpoint *ep);
/* Write queued output; 0 or -LC_ERR_AGENT. */
int lc_endpoint_flush(struct lc_endpoint *ep);

/*
 * Close the control channel (the agent sees EOF and stops), then reap:
 * join the local thread, or wait up to timeout_ms for the remote command
 * and collect its exit status (-1 if unknown); with sent_only, only until
 * what was written has gone out (lc_ssh_wait_sent; status -1).
 */
void lc_endpoint_close(struct lc_endpoint *ep, int timeout_ms, int sent_only,
    int *status);

/*
 * After an unexpected EOF: explain what happened to the agent in e.
 * Returns -LC_ERR_AGENT (-LC_ERR_INTERNAL for the local agent), or over
 * the OpenSSH transport what ssh's own failure means
 * (lc_ssh_transport_err: -LC_ERR_HOSTKEY, -LC_ERR_AUTH, -LC_ERR_CONNECT,
 * ...), never 0.
 */
int lc_endpoint_lost(struct lc_endpoint *ep, const char *agent_cmd,
    struct lc_err *e);

/* Close (without waiting), disconnect and free the buffers. */
void lc_endpoint_free(struct lc_endpoint *ep);

#endif
