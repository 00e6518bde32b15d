/*
 * scp's habits on lanecp's command line: -P, -l and -c are bbcp's
 * letters here (progress interval, log file, compression), and an scp
 * user's argument to them would go silently wrong (-P 2501 connects to
 * port 22, -l 10000 writes a log named ./10000, -c CIPHER becomes a
 * missing file).  Where the argument cannot mean what lanecp would do
 * with it, refuse, naming the scp meaning and lanecp's spelling of it.
 */
#include "options.h"
#include "err.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int
lc_scp_log_habit(const char *a, struct lc_err *e)
{
	unsigned long long kbit;
	struct stat st;

	/* an all-digit name not there yet: scp's -l LIMIT (Kbit/s) */
	if (a[0] == '\0' || strspn(a, "0123456789") != strlen(a) ||
	    stat(a, &st) == 0)
		return 0;
	if (e == NULL)
		return -LC_ERR_USAGE;
	kbit = strlen(a) <= 12 ? strtoull(a, NULL, 10) : 0;
	return lc_err_set(e, LC_ERR_USAGE,
	    "-l %.32s: lanecp's -l is a log file (as bbcp's), not scp's rate "
	    "limit in Kbit/s; for a limit use -x RATE in bytes/s (-x %llu "
	    "for %.32s Kbit/s); for a log file of that name write -l ./%.32s",
	    a, kbit * 1000 / 8, a, a);
}

int
lc_scp_port_habit(const char *a, struct lc_err *e)
{
	size_t n = strspn(a, "0123456789");
	unsigned long v;

	/* a whole number that is a port and an odd progress interval */
	if (n == 0 || n > 5 || a[n] != '\0')
		return 0;
	v = strtoul(a, NULL, 10);
	if (v < 1024 || v > 65535)
		return 0;
	return lc_err_set(e, LC_ERR_USAGE,
	    "-P %s: lanecp's -P is the progress interval in seconds (as "
	    "bbcp's), not scp's port; for port %s use "
	    "ssh://[user@]host:%s/path or -o Port=%s; for progress lines "
	    "every %s s write --progress %s",
	    a, a, a, a, a, a);
}

int
lc_scp_cipher_habit(const char *next, struct lc_err *e)
{
	/* the names scp -c takes, and OpenSSH's older ones */
	static const char *const pfx[] = { "aes128-", "aes192-", "aes256-",
		"chacha20-poly1305", "3des-cbc", "blowfish-cbc", "cast128-cbc",
		"arcfour", "rijndael-cbc" };
	struct stat st;
	size_t i;

	if (stat(next, &st) == 0)
		return 0; /* a file: -c compresses it */
	for (i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (strncmp(next, pfx[i], strlen(pfx[i])) == 0)
			break;
	if (i == sizeof(pfx) / sizeof(pfx[0]))
		return 0;
	return lc_err_set(e, LC_ERR_USAGE,
	    "-c %.64s: lanecp's -c is compression (-c alone: level 1, -cN: "
	    "level N), not scp's cipher; lanecp chooses the SSH cipher "
	    "itself (with --ssh: -o Ciphers=%.64s)",
	    next, next);
}
