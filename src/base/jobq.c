#include "jobq.h"
#include "err.h"
#include "thread.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/queue.h>

struct lc_job {
	STAILQ_ENTRY(lc_job) link;
	lc_job_fn fn;
	void *arg;
};

struct lc_jobq {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	STAILQ_HEAD(, lc_job) jobs;
	pthread_t thread;
	int stop;
};

static void *
lc_jobq_main(void *arg)
{
	struct lc_jobq *q = arg;
	struct lc_job *j;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (!q->stop && STAILQ_EMPTY(&q->jobs))
			pthread_cond_wait(&q->cv, &q->mu);
		if (q->stop)
			break;
		j = STAILQ_FIRST(&q->jobs);
		STAILQ_REMOVE_HEAD(&q->jobs, link);
		pthread_mutex_unlock(&q->mu);
		j->fn(j->arg);
		free(j);
		pthread_mutex_lock(&q->mu);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

struct lc_jobq *
lc_jobq_new(const char *name)
{
	struct lc_jobq *q = calloc(1, sizeof(*q));

	if (q == NULL)
		return NULL;
	STAILQ_INIT(&q->jobs);
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	if (lc_thread_start(&q->thread, name, lc_jobq_main, q) != 0) {
		pthread_cond_destroy(&q->cv);
		pthread_mutex_destroy(&q->mu);
		free(q);
		return NULL;
	}
	return q;
}

int
lc_jobq_push(struct lc_jobq *q, lc_job_fn fn, void *arg)
{
	struct lc_job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return -LC_ERR_NOMEM;
	j->fn = fn;
	j->arg = arg;
	pthread_mutex_lock(&q->mu);
	if (q->stop) {
		pthread_mutex_unlock(&q->mu);
		free(j);
		return -LC_ERR_CANCELED;
	}
	STAILQ_INSERT_TAIL(&q->jobs, j, link);
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

void
lc_jobq_free(struct lc_jobq *q, lc_job_fn drop)
{
	struct lc_job *j;

	if (q == NULL)
		return;
	pthread_mutex_lock(&q->mu);
	q->stop = 1;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->thread, NULL);
	while ((j = STAILQ_FIRST(&q->jobs)) != NULL) {
		STAILQ_REMOVE_HEAD(&q->jobs, link);
		if (drop != NULL)
			drop(j->arg);
		free(j);
	}
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	free(q);
}
