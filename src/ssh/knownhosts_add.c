/*
 * known_hosts: adding a host's key to a file (lc_knownhosts_add), with
 * its name hashed when HashKnownHosts says so.
 */
#include "knownhosts.h"
#include "base64.h"
#include "err.h"
#include "log.h"
#include "fdio.h"
#include "path.h"
#include "knownhosts_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#define LC_KH_BLOB_MAX (16 * 1024)	/* largest key blob we write */

/* Create home/.ssh (0700) if path's directory is it and it is missing. */
static int
lc_kh_ensure_dir(const char *path, const char *home, struct lc_err *e)
{
	char dir[PATH_MAX], sshdir[PATH_MAX];
	struct stat st;
	int n;

	lc_path_dirname(path, dir, sizeof(dir));
	if (stat(dir, &st) == 0)
		return 0;
	if (errno != ENOENT)
		return lc_err_sys(e, LC_ERR_IO, errno, "%s", dir);
	if (home == NULL)
		return lc_err_set(e, LC_ERR_IO, "%s: no such directory", dir);
	n = snprintf(sshdir, sizeof(sshdir), "%s/.ssh", home);
	if (n < 0 || (size_t)n >= sizeof(sshdir) || strcmp(dir, sshdir) != 0)
		return lc_err_set(e, LC_ERR_IO, "%s: no such directory", dir);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return lc_err_sys(e, LC_ERR_IO, errno, "mkdir %s", dir);
	return 0;
}

/* "|1|salt|hash" of name into out. */
static int
lc_kh_hash_name(const char *name, char *out, size_t outsz)
{
	unsigned char salt[LC_KH_SALT_LEN], mac[EVP_MAX_MD_SIZE];
	char bs[64], bm[64];
	unsigned int maclen = 0;
	int n;

	if (RAND_bytes(salt, sizeof(salt)) != 1 ||
	    HMAC(EVP_sha1(), salt, (int)sizeof(salt),
	    (const unsigned char *)name, strlen(name), mac, &maclen) == NULL ||
	    lc_base64_encode(salt, sizeof(salt), bs, sizeof(bs)) < 0 ||
	    lc_base64_encode(mac, maclen, bm, sizeof(bm)) < 0)
		return -LC_ERR_INTERNAL;
	n = snprintf(out, outsz, "|1|%s|%s", bs, bm);
	return n < 0 || (size_t)n >= outsz ? -LC_ERR_TOOBIG : 0;
}

/* Does the (non-empty) file end without a newline?  1/0. */
static int
lc_kh_needs_newline(int fd)
{
	struct stat st;
	char c;

	if (fstat(fd, &st) != 0 || st.st_size <= 0 || !S_ISREG(st.st_mode))
		return 0;
	if (pread(fd, &c, 1, st.st_size - 1) != 1)
		return 0;
	return c != '\n';
}

int
lc_knownhosts_add(const char *file, const char *home, const char *name,
    const unsigned char *blob, size_t len, int hash, struct lc_err *e)
{
	char type[64], hostfield[LC_KH_NAME_MAX + 64], *line = NULL;
	size_t linesz;
	int fd = -1, r, n, nl;

	if (len == 0 || len > LC_KH_BLOB_MAX ||
	    lc_knownhosts_blob_type(blob, len, type, sizeof(type)) != 0)
		return lc_err_set(e, LC_ERR_PROTO, "malformed host key");
	if (hash) {
		if ((r = lc_kh_hash_name(name, hostfield,
		    sizeof(hostfield))) != 0)
			return lc_err_set(e, -r, "cannot hash host name %s",
			    name);
	} else {
		n = snprintf(hostfield, sizeof(hostfield), "%s", name);
		if (n < 0 || (size_t)n >= sizeof(hostfield))
			return lc_err_set(e, LC_ERR_TOOBIG, "host name too long");
	}
	linesz = strlen(hostfield) + strlen(type) + 4 * ((len + 2) / 3) + 8;
	if ((line = malloc(linesz)) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	n = snprintf(line, linesz, "\n%s %s ", hostfield, type);
	if (n < 0 || (size_t)n >= linesz ||
	    lc_base64_encode(blob, len, line + n, linesz - (size_t)n) < 0) {
		r = lc_err_set(e, LC_ERR_INTERNAL, "known hosts line");
		goto out;
	}
	strcat(line, "\n");
	if ((r = lc_kh_ensure_dir(file, home, e)) != 0)
		goto out;
	if ((fd = open(file, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC,
	    0600)) < 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "cannot open %s", file);
		goto out;
	}
	nl = lc_kh_needs_newline(fd);
	if ((r = lc_write_all(fd, line + (nl ? 0 : 1),
	    strlen(line) - (nl ? 0 : 1))) != 0) {
		r = lc_err_sys(e, LC_ERR_IO, errno, "cannot write %s", file);
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		r = lc_err_sys(e, LC_ERR_IO, errno, "cannot write %s", file);
		goto out;
	}
	fd = -1;
	r = 0;
 out:
	if (fd >= 0)
		close(fd);
	free(line);
	return r;
}
