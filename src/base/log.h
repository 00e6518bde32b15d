/*
 * Logging.
 *
 * Each line is formatted whole in a stack buffer, control characters and
 * invalid UTF-8 are escaped (lc_log_escape) (peer-supplied names cannot forge lines or move the cursor), and
 * the line goes out with a single write(2) so lines from different threads
 * never interleave.  A per-thread tag (lc_log_set_tag) names the stream or
 * role the line comes from.
 */
#ifndef LANECP_LOG_H
#define LANECP_LOG_H

#include <stddef.h>

enum lc_log_level {
	LC_LOG_ERROR = 0,	/* always shown */
	LC_LOG_WARN = 1,	/* shown unless -q */
	LC_LOG_INFO = 2,	/* shown unless -q */
	LC_LOG_VERBOSE = 3,	/* -v */
	LC_LOG_DEBUG = 4,	/* -vv */
};

/* Program name prefix ("lanecp"), threshold level and the output fd. */
void lc_log_init(const char *prog, int level, int fd);
void lc_log_set_level(int level);
int lc_log_level(void);

/*
 * Also append lines, timestamped, to this fd (-l FILE); -1 disables.  The
 * file gets what the terminal gets, but never less than LC_LOG_INFO.
 */
void lc_log_set_file(int fd);

/* Tag for lines from the calling thread ("stream 3"); NULL clears.  The
 * string must outlive its use (copied into thread-local storage). */
void lc_log_set_tag(const char *tag);

/*
 * The live progress line on a terminal: lc_log_status writes line (which
 * starts with \r and ends with ESC [K, no newline) to the log fd and
 * remembers that it is there; every log line printed later first erases
 * it, so that messages never mix into it.  lc_log_status_clear erases it.
 */
void lc_log_status(const char *line, size_t n);
void lc_log_status_clear(void);

void lc__log(int level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A line for the -l file only (its start and result lines). */
void lc_log_record(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define lc_log_error(...) lc__log(LC_LOG_ERROR, __FILE__, __LINE__, __VA_ARGS__)
#define lc_log_warn(...) lc__log(LC_LOG_WARN, __FILE__, __LINE__, __VA_ARGS__)
#define lc_log_info(...) lc__log(LC_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__)
#define lc_log_verbose(...) \
	lc__log(LC_LOG_VERBOSE, __FILE__, __LINE__, __VA_ARGS__)
#define lc_log_debug(...) lc__log(LC_LOG_DEBUG, __FILE__, __LINE__, __VA_ARGS__)

/*
 * Make src safe for one line of a terminal or a log, into dst (always NUL
 * terminated, never cut inside a character or an escape): printable ASCII
 * and valid UTF-8 stay as they are; control characters, invalid UTF-8 and
 * the code points that act on a terminal or reorder a line (C1, U+2028,
 * bidi overrides) become \xNN, a byte each.  The one escape style of
 * every line lanecp prints (names in -v lines, errors, the -l log).  A
 * backslash stays as it is, so escaping twice changes nothing.  Returns
 * dst.
 */
char *lc_log_escape(char *dst, size_t dstsz, const char *src);

#endif
