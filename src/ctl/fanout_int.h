/*
 * --also, internal: what fanout.c (the targets in turn, the reports) and
 * fanout_chain.c (the overlapped chain) share.  Not part of copy.h.
 */
#ifndef LANECP_FANOUT_INT_H
#define LANECP_FANOUT_INT_H

#include <stddef.h>

#include "copy.h"
#include "err.h"
#include "feed.h"

/* One copy of oo into t (of the n at t0: lc_copy), t->e set on error. */
void lc__fanout_run_one(struct lc_copy_opts *oo, int signal_fd,
    struct lc_fanout_target *t0, size_t n, struct lc_fanout_target *t);

/* Target i is copied from this host: the one before it is incomplete. */
void lc__fanout_upstream_bad(struct lc_fanout_target *t, size_t i);

/* The line that starts target i's copy from this host instead of a hop. */
void
lc__fanout_say_from_here(const struct lc_fanout_target *t, size_t i, size_t n);

/* Target i's hop failed: say so, and that it is copied from this host. */
void lc__fanout_hop_failed(const struct lc_copy_opts *o,
    struct lc_fanout_target *t, size_t i, size_t n);

/* The run's result once every target ran: 0, or which are incomplete. */
int lc__fanout_incomplete(const struct lc_fanout_target *t, size_t n,
    struct lc_err *e);

/* Target t's hop ran to its end and failed only for what t refused. */
int lc__fanout_target_refused(const struct lc_fanout_target *t);

/*
 * Before target i's copy from this host after its hop failed: keep what
 * the hop made there (made: its made_log), refuse the target's own files
 * in the way as without -f (fanout.c).
 */
void lc__fanout_keep_made(struct lc_copy_opts *oo, struct lc_feed *made,
    size_t i, size_t n, const char *dest);

/* Whether the chain of o can run its hops at once (one source, -r). */
int lc__fanout_can_overlap(const struct lc_copy_opts *o);

/*
 * Run the overlapped chain; 0 when it ran (t filled), -1 when it could
 * not start (nothing was tried; t[i].from_why may say why).
 */
int lc__fanout_overlap(const struct lc_copy_opts *o, int signal_fd,
    struct lc_fanout_target *t, size_t n);

/* The run's result after the overlapped chain (a signal's first). */
int lc__fanout_after_overlap(struct lc_fanout_target *t, size_t n,
    struct lc_err *e);

#endif
