/* Small system helpers shared by the modules. */
#ifndef LANECP_UTIL_H
#define LANECP_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Monotonic clock in milliseconds / nanoseconds. */
uint64_t lc_now_ms(void);
uint64_t lc_now_ns(void);

/* *ts = now on clock + ms (ms >= 0): a deadline for pthread_cond_timedwait. */
void lc_deadline(clockid_t clock, int ms, struct timespec *ts);

/*
 * Start a worker thread: all signals blocked in it (signals are the main
 * thread's business) and its name set (visible in top -H, gdb).  Returns 0
 * or -LC_ERR_INTERNAL.
 */
int lc_thread_start(pthread_t *t, const char *name, void *(*fn)(void *),
    void *arg);

/* write(2)/read(2) loops that retry on EINTR.  0, or -errno. */
int lc_write_all(int fd, const void *p, size_t n);
/* Reads exactly n bytes; -ENODATA on EOF before n bytes. */
int lc_read_full(int fd, void *p, size_t n);

int lc_set_nonblock(int fd, int on);
int lc_set_cloexec(int fd);

/* A pipe used to wake a poll() loop: lc_wake_signal is async-signal-safe. */
struct lc_wake {
	int rfd;
	int wfd;
};
int lc_wake_open(struct lc_wake *w);
void lc_wake_signal(struct lc_wake *w);
void lc_wake_drain(struct lc_wake *w);
void lc_wake_close(struct lc_wake *w);

/* Read a small integer from a /proc file; 0 if unreadable. */
uint64_t lc_proc_u64(const char *path);

/* Last path component of p, without trailing slashes, into out. */
void lc_path_basename(const char *p, char *out, size_t outsz);
/* Directory part of p ("." if none), into out. */
void lc_path_dirname(const char *p, char *out, size_t outsz);

#endif
