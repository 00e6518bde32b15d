/*
 * A job queue with one worker thread, for the slow steps an agent must not
 * run on its control loop: hashing a partial file before a resume, and
 * finishing files (checksum compare, fsync, rename).  Jobs run one at a
 * time, in order.
 */
#ifndef LANECP_JOBQ_H
#define LANECP_JOBQ_H

struct lc_jobq;

typedef void (*lc_job_fn)(void *arg);

/* Start the worker; NULL on failure. */
struct lc_jobq *lc_jobq_new(const char *name);

/* Queue fn(arg).  0 or -LC_ERR_NOMEM / -LC_ERR_CANCELED after stop. */
int lc_jobq_push(struct lc_jobq *q, lc_job_fn fn, void *arg);

/*
 * Stop taking jobs, wait for the running one, drop the rest (each dropped
 * job gets drop(arg) if drop is set), join the worker and free.
 */
void lc_jobq_free(struct lc_jobq *q, lc_job_fn drop);

#endif
