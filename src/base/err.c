#include "err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const lc_err_text[LC_ERR_MAX] = {
	[LC_OK] = "success",
	[LC_ERR_INTERNAL] = "internal error",
	[LC_ERR_NOMEM] = "out of memory",
	[LC_ERR_USAGE] = "usage error",
	[LC_ERR_CONFIG] = "bad ssh configuration",
	[LC_ERR_CONNECT] = "connection failed",
	[LC_ERR_AUTH] = "authentication failed",
	[LC_ERR_HOSTKEY] = "host key verification failed",
	[LC_ERR_IO] = "file I/O error",
	[LC_ERR_EXISTS] = "target exists",
	[LC_ERR_DENIED] = "path refused",
	[LC_ERR_AGENT] = "remote agent failed",
	[LC_ERR_PROTO] = "protocol error",
	[LC_ERR_VERSION] = "protocol version mismatch",
	[LC_ERR_STREAM] = "data stream failed",
	[LC_ERR_INTEGRITY] = "data stream integrity check failed",
	[LC_ERR_NOSPACE] = "no space left on device",
	[LC_ERR_TIMEOUT] = "timed out",
	[LC_ERR_CHECKSUM] = "checksum mismatch",
	[LC_ERR_CANCELED] = "canceled",
	[LC_ERR_EOF] = "connection closed by peer",
	[LC_ERR_TOOBIG] = "length over limit",
	[LC_ERR_PARTIAL] = "partial transfer",
	[LC_ERR_LOCKED] = "file locked by another lanecp",
	[LC_ERR_NOPATH] = "data streams cannot connect",
	[LC_ERR_NOAGENT] = "remote lanecp cannot be run",
	[LC_ERR_PROGRAM] = "a -N program failed",
	[LC_ERR_PIPE] = "the reader of the output went away",
};

const char *
lc_strerror(int code)
{
	if (code < 0)
		code = -code;
	if (code >= LC_ERR_MAX || lc_err_text[code] == NULL)
		return "unknown error";
	return lc_err_text[code];
}

void
lc_err_clear(struct lc_err *e)
{
	if (e != NULL)
		memset(e, 0, sizeof(*e));
}

static int lc__err_vset(struct lc_err *e, int code, int err,
    const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

static int
lc__err_vset(struct lc_err *e, int code, int err, const char *fmt,
    va_list ap)
{
	if (code < 0)
		code = -code;
	if (e == NULL)
		return -code;
	e->code = code;
	e->sys_errno = err;
	e->remote = 0;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	if (err != 0) {
		size_t n = strlen(e->msg);
		snprintf(e->msg + n, sizeof(e->msg) - n, ": %s", strerror(err));
	}
	return -code;
}

int
lc_err_set(struct lc_err *e, int code, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = lc__err_vset(e, code, 0, fmt, ap);
	va_end(ap);
	return r;
}

int
lc_err_set_first(struct lc_err *e, int code, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (e != NULL && e->code != 0)
		return code < 0 ? code : -code;
	va_start(ap, fmt);
	r = lc__err_vset(e, code, 0, fmt, ap);
	va_end(ap);
	return r;
}

int
lc_err_sys(struct lc_err *e, int code, int err, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (err == ENOSPC || err == EDQUOT)
		code = LC_ERR_NOSPACE;
	va_start(ap, fmt);
	r = lc__err_vset(e, code, err, fmt, ap);
	va_end(ap);
	return r;
}

int
lc_err_ensure(struct lc_err *e, int r, const char *what)
{
	if (e != NULL && e->code == 0 && r < 0)
		lc_err_set(e, -r, "%s: %s", what, lc_strerror(r));
	return r;
}
