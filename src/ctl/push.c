/*
 * No remote install: the agent file the controller pushes, and the
 * remote start script (push.h).
 */
#include "push.h"
#include "lockholder.h"
#include "log.h"
#include "settings.h"
#include "version.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#ifndef LC_LIBEXECDIR
#define LC_LIBEXECDIR "/usr/local/libexec/lanecp"
#endif
#ifndef LC_BUILD_SYSTEM
#define LC_BUILD_SYSTEM "Linux"
#endif
#ifndef LC_BUILD_MACHINE
#define LC_BUILD_MACHINE "x86_64"
#endif

/*
 * The start script (push.h), run as /bin/sh -c SCRIPT lanecp SHA256 DIR
 * SIZE --transfer=ID|- HELLOLEN.  The id is one word of that form so that
 * an agent run as a forced command finds it in SSH_ORIGINAL_COMMAND
 * (lc_transfer_from_command()).  One line without single quotes, "!" or
 * backslashes (a "\?" below is a plain "?", kept from C's trigraphs): it
 * passes through the remote user's login shell (sh, csh or fish) inside
 * single quotes.  POSIX sh and coreutils only (ls, sha256sum, head,
 * mktemp), and /proc.
 *
 * The cache is used only where no other user can swap it: its real path
 * (symlinks resolved) and every parent owned by the user or root and not
 * writable by group or others, or else sticky (only an entry's owner can
 * rename it there, like /tmp); lanecp/ and VERSION-HASH/ the user's own,
 * mode 0700, no ACL.  Anything else: the agent goes to a private
 * temporary directory (mktemp -d, checked the same way), which is
 * removed before the agent runs: "push private ... DIR" names what was
 * not safe; "unsafe DIR" when no private directory can be made either.
 * A file is run only through the descriptor it was checked and hashed
 * on (fd 3, exec'd as /proc/self/fd/3): renaming something else into its
 * place in between changes nothing.  The agent keeps fd 3 (read-only,
 * its own file) and has argv[0] /proc/self/fd/3.
 */
static const char lc_push_script[] =
	"set -f; h=$1 n=$3 x= q= T=; [ \"$4\" = - ] || x=$4; "
	"if command -v lanecp >/dev/null 2>&1; then "
	"echo LANECP-BOOT path; exec lanecp --agent $x; fi; "
	"command -v sha256sum >/dev/null 2>&1 || "
	"{ echo LANECP-BOOT nosum; exit 75; }; "
	"u=$(id -u) b=$HOME/.cache; "
	"case $XDG_CACHE_HOME in /*) b=$XDG_CACHE_HOME;; esac; "
	/* r DIR: its real path */
	"r() { cd -P -- \"$1\" 2>/dev/null && pwd -P; }; "
	/* s REALDIR: it and every parent ours or root's, no group or other
	   write bit unless sticky ("+": the group bits are the ACL mask);
	   c: the one that is not, or $b */
	"s() { c=$1; while :; do set -- $(ls -ldn \"$c\" 2>/dev/null); "
	"case $3 in \"$u\"|0) ;; *) return 1;; esac; "
	"case $1 in d\?\?\?\?-\?\?-\?*|d\?\?\?\?\?\?\?\?[tT]*) ;; "
	"*) return 1;; esac; [ \"$c\" = / ] && c=$b && return 0; "
	"c=${c%/*}; c=${c:-/}; done; }; "
	/* k DIR: a real directory of ours, no group or other write bit,
	   no ACL */
	"k() { c=$1; [ -d \"$1\" ] || return 1; [ -L \"$1\" ] && return 1; "
	"set -- $(ls -ldn \"$1\"); [ \"$3\" = \"$u\" ] || return 1; "
	"case $1 in d\?\?\?\?-\?\?-\?|d\?\?\?\?-\?\?-\?.) return 0;; esac; "
	"return 1; }; "
	/* m DIR: made 0700 if missing, then k */
	"m() { [ -d \"$1\" ] || (umask 077 && mkdir \"$1\") 2>/dev/null; "
	"k \"$1\"; }; "
	/* o FILE: opened on fd 3, which is a regular file of ours that group
	   and others cannot write, whose SHA-256 is $h */
	"o() { [ -f \"$1\" ] && { command exec 3<\"$1\"; } 2>/dev/null || "
	"return 1; set -- $(ls -lLn /proc/self/fd/3 2>/dev/null); "
	"[ \"$3\" = \"$u\" ] || return 1; "
	"case $1 in -\?\?\?\?-\?\?-\?|-\?\?\?\?-\?\?-\?.) ;; "
	"*) return 1;; esac; w=$(sha256sum <&3 2>/dev/null); "
	"[ \"${w%% *}\" = \"$h\" ]; }; "
	"z() { [ -z \"$T\" ] || rm -rf \"$T\"; }; "
	/* the base made (0700) only inside a safe parent */
	"c=$b; [ -d \"$b\" ] || { a=${b%/*}; a=$(r \"${a:-/}\") && "
	"s \"$a\" && (umask 077 && mkdir \"$a/${b##*/}\") 2>/dev/null; }; "
	"if a=$(r \"$b\") && s \"$a\" && p=$a/lanecp && m \"$p\" && "
	"d=$p/$2 && m \"$d\"; then f=$d/lanecp; "
	"if o \"$f\"; then echo \"LANECP-BOOT cached $f\"; "
	"exec /proc/self/fd/3 --agent $x; fi; "
	"y=missing; [ -e \"$f\" ] && y=changed; "
	"else q=$c y=private; trap z EXIT; trap \"exit 75\" HUP INT TERM; "
	"T=$(umask 077 && mktemp -d 2>/dev/null) && d=$(r \"$T\") && "
	"s \"$d\" && k \"$d\" || "
	"{ echo \"LANECP-BOOT unsafe $q\"; exit 75; }; f=$d/lanecp; fi; "
	"exec 3<&-; head -c \"$5\" >/dev/null || exit 75; "
	"echo \"LANECP-BOOT push $y $(uname -s) $(uname -m)${q:+ $q}\"; "
	"read a || exit 75; [ \"$a\" = go ] || exit 75; "
	"t=$d/.lanecp.$$; (umask 077 && head -c \"$n\" >\"$t\") 2>/dev/null; "
	"chmod 700 \"$t\" 2>/dev/null; "
	"if o \"$t\" && mv -f \"$t\" \"$f\"; then z; "
	"echo \"LANECP-BOOT pushed $f\"; exec /proc/self/fd/3 --agent $x; fi; "
	"rm -f \"$t\"; echo \"LANECP-BOOT bad $f\"; exit 75";

static pthread_mutex_t lc_push_mu = PTHREAD_MUTEX_INITIALIZER;
static struct lc_push_agent lc_push_the;
static int lc_push_loaded;

static int
lc_push_load(struct lc_push_agent *a, const char *path, struct lc_err *e)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	struct stat st;
	size_t got = 0;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "agent %s", path);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > LC_PUSH_AGENT_MAX) {
		close(fd);
		return lc_err_set(e, LC_ERR_IO, "agent %s: not a regular file "
		    "of 1 to %u bytes", path, LC_PUSH_AGENT_MAX);
	}
	if ((a->data = malloc((size_t)st.st_size)) == NULL) {
		close(fd);
		return lc_err_set(e, LC_ERR_NOMEM, "agent %s: out of memory",
		    path);
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, a->data + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? errno : EIO;
			close(fd);
			free(a->data);
			a->data = NULL;
			return lc_err_sys(e, LC_ERR_IO, err, "read agent %s",
			    path);
		}
		got += (size_t)n;
	}
	close(fd);
	a->len = got;
	if (EVP_Digest(a->data, a->len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen != 32) {
		free(a->data);
		a->data = NULL;
		return lc_err_set(e, LC_ERR_INTERNAL, "sha256");
	}
	for (unsigned i = 0; i < 32; i++)
		snprintf(a->sha256 + 2 * i, 3, "%02x", md[i]);
	snprintf(a->path, sizeof(a->path), "%s", path);
	return 0;
}

/* The version as a directory name part: [A-Za-z0-9._+] kept, else '_'. */
static void
lc_push_dirname(struct lc_push_agent *a)
{
	char v[48];
	size_t i;

	snprintf(v, sizeof(v), "%s", LC_VERSION_STRING);
	for (i = 0; v[i] != '\0'; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' &&
		    v[i] <= 'Z') || (v[i] >= '0' && v[i] <= '9') ||
		    v[i] == '.' || v[i] == '_' || v[i] == '+'))
			v[i] = '_';
	snprintf(a->dir, sizeof(a->dir), "%s-%.16s", v, a->sha256);
}

int
lc_push_agent_get(const struct lc_push_agent **out, struct lc_err *e)
{
	char self[PATH_MAX], cand[PATH_MAX + 32], *slash;
	ssize_t n;
	int r = 0;

	pthread_mutex_lock(&lc_push_mu);
	if (lc_push_loaded)
		goto out;
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "readlink /proc/self/exe");
		goto out;
	}
	self[n] = '\0';
	snprintf(cand, sizeof(cand), "%s", self);
	if ((slash = strrchr(cand, '/')) != NULL)
		snprintf(slash + 1, sizeof(cand) - (size_t)(slash + 1 - cand),
		    "lanecp-agent");
	if (access(cand, R_OK) == 0 &&
	    lc_push_load(&lc_push_the, cand, e) == 0)
		goto loaded;
	/* PREFIX/bin/lanecp -> PREFIX/libexec/lanecp/lanecp-agent, wherever
	   the package put PREFIX (the .deb: /usr), then the configured one */
	if (slash != NULL) {
		*slash = '\0';
		if ((slash = strrchr(cand, '/')) != NULL)
			snprintf(slash + 1, sizeof(cand) -
			    (size_t)(slash + 1 - cand),
			    "libexec/lanecp/lanecp-agent");
		if (slash != NULL && access(cand, R_OK) == 0 &&
		    lc_push_load(&lc_push_the, cand, e) == 0)
			goto loaded;
	}
	snprintf(cand, sizeof(cand), "%s/lanecp-agent", LC_LIBEXECDIR);
	if (access(cand, R_OK) == 0 &&
	    lc_push_load(&lc_push_the, cand, e) == 0)
		goto loaded;
	/* the last resort: this lanecp, for a remote with the same libraries */
	if ((r = lc_push_load(&lc_push_the, "/proc/self/exe", e)) != 0)
		goto out;
	snprintf(lc_push_the.path, sizeof(lc_push_the.path), "%s", self);
 loaded:
	lc_push_dirname(&lc_push_the);
	lc_push_loaded = 1;
	lc_log_debug("agent to push: %s (%zu bytes, sha256 %s)",
	    lc_push_the.path, lc_push_the.len, lc_push_the.sha256);
 out:
	pthread_mutex_unlock(&lc_push_mu);
	if (r == 0)
		*out = &lc_push_the;
	return r;
}

int
lc_push_command(const struct lc_push_agent *a, const char *transfer,
    size_t hello_len, char *out, size_t outsz)
{
	int ok = transfer != NULL && lc_transfer_valid(transfer), n;

	n = snprintf(out, outsz, "exec /bin/sh -c '%s' lanecp %s %s %zu %s%s "
	    "%zu", lc_push_script, a->sha256, a->dir, a->len, ok ?
	    "--transfer=" : "-", ok ? transfer : "", hello_len);
	return n < 0 || (size_t)n >= outsz ? -LC_ERR_TOOBIG : 0;
}

/* 1 if s is "SYSTEM MACHINE": two words of 1..63 of [A-Za-z0-9._+-]. */
static int
lc_push_arch_valid(const char *s)
{
	size_t n[2] = { 0, 0 };
	int w = 0;

	for (; *s != '\0'; s++) {
		if (*s == ' ' && w == 0 && n[0] > 0)
			w = 1;
		else if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("._+-", *s) != NULL)
			n[w]++;
		else
			return 0;
	}
	return n[0] > 0 && n[0] < 64 && n[1] > 0 && n[1] < 64;
}

int
lc_push_local_arch(const char **out, struct lc_err *e)
{
	return lc_setting_str("ARCH", lc_push_arch_valid, "\"SYSTEM "
	    "MACHINE\" as uname -s and uname -m print them",
	    LC_BUILD_SYSTEM " " LC_BUILD_MACHINE, out, e);
}
