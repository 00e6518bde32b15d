/*
 * known_hosts files on top of libssh2's knownhost API (see
 * lanecp/knownhosts.h): key types, names, loading the files and looking
 * a host key up.  One line's parsing (plain, wildcard and hashed host
 * lists, @revoked and @cert-authority) is in knownhosts_line.c, adding a
 * key to a file in knownhosts_add.c; their shared state is in
 * knownhosts_int.h.
 */
#include "knownhosts.h"
#include "base64.h"
#include "err.h"
#include "log.h"
#include "sshconf.h"
#include "knownhosts_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

/* Host key algorithm name -> the key type known_hosts records for it. */
static const struct {
	const char *alg;
	int keybit;
} lc_kh_algs[] = {
	{ "ssh-ed25519", LIBSSH2_KNOWNHOST_KEY_ED25519 },
	{ "ecdsa-sha2-nistp256", LIBSSH2_KNOWNHOST_KEY_ECDSA_256 },
	{ "ecdsa-sha2-nistp384", LIBSSH2_KNOWNHOST_KEY_ECDSA_384 },
	{ "ecdsa-sha2-nistp521", LIBSSH2_KNOWNHOST_KEY_ECDSA_521 },
	{ "rsa-sha2-512", LIBSSH2_KNOWNHOST_KEY_SSHRSA },
	{ "rsa-sha2-256", LIBSSH2_KNOWNHOST_KEY_SSHRSA },
	{ "ssh-rsa", LIBSSH2_KNOWNHOST_KEY_SSHRSA },
	{ "ssh-dss", LIBSSH2_KNOWNHOST_KEY_SSHDSS },
};

/* Host key algorithm name -> LIBSSH2_KNOWNHOST_KEY_*, 0 if none. */
static int
lc_kh_alg_keybit(const char *alg)
{
	size_t i;

	for (i = 0; i < sizeof(lc_kh_algs) / sizeof(lc_kh_algs[0]); i++)
		if (strcmp(alg, lc_kh_algs[i].alg) == 0)
			return lc_kh_algs[i].keybit;
	return 0;
}

/* LIBSSH2_HOSTKEY_TYPE_* -> LIBSSH2_KNOWNHOST_KEY_*, 0 if none. */
static int
lc_kh_type_keybit(int type)
{
	switch (type) {
	case LIBSSH2_HOSTKEY_TYPE_RSA:
		return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
	case LIBSSH2_HOSTKEY_TYPE_DSS:
		return LIBSSH2_KNOWNHOST_KEY_SSHDSS;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
	case LIBSSH2_HOSTKEY_TYPE_ED25519:
		return LIBSSH2_KNOWNHOST_KEY_ED25519;
	default:
		return 0;
	}
}

const char *
lc_knownhosts_type_label(int type)
{
	switch (type) {
	case LIBSSH2_HOSTKEY_TYPE_RSA:
		return "RSA";
	case LIBSSH2_HOSTKEY_TYPE_DSS:
		return "DSA";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
		return "ECDSA";
	case LIBSSH2_HOSTKEY_TYPE_ED25519:
		return "ED25519";
	default:
		return "unknown";
	}
}

int
lc_knownhosts_blob_type(const unsigned char *blob, size_t len, char *out,
    size_t outsz)
{
	size_t n, i;

	if (outsz == 0)
		return -LC_ERR_PROTO;
	out[0] = '\0';
	if (len < 4)
		return -LC_ERR_PROTO;
	n = (size_t)blob[0] << 24 | (size_t)blob[1] << 16 |
	    (size_t)blob[2] << 8 | blob[3];
	if (n == 0 || n > len - 4 || n >= outsz)
		return -LC_ERR_PROTO;
	for (i = 0; i < n; i++) {
		unsigned char c = blob[4 + i];
		if (c <= ' ' || c >= 0x7f)
			return -LC_ERR_PROTO;
		out[i] = (char)c;
	}
	out[n] = '\0';
	return 0;
}

void
lc_knownhosts_fingerprint(const unsigned char *blob, size_t len, char *out,
    size_t outsz)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	char b64[EVP_MAX_MD_SIZE * 2];
	unsigned int mdlen = 0;
	int n;

	if (outsz == 0)
		return;
	if (EVP_Digest(blob, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    (n = lc_base64_encode(md, mdlen, b64, sizeof(b64))) < 0) {
		snprintf(out, outsz, "SHA256:?");
		return;
	}
	while (n > 0 && b64[n - 1] == '=')
		b64[--n] = '\0';
	snprintf(out, outsz, "SHA256:%s", b64);
}

int
lc_knownhosts_name(const char *host, unsigned port, char *out, size_t outsz)
{
	size_t i;
	int n;

	if (port == 22 || port == 0)
		n = snprintf(out, outsz, "%s", host);
	else
		n = snprintf(out, outsz, "[%s]:%u", host, port);
	if (n < 0 || (size_t)n >= outsz)
		return -LC_ERR_TOOBIG;
	for (i = 0; out[i] != '\0'; i++)
		out[i] = (char)tolower((unsigned char)out[i]);
	return 0;
}

/* Every line of f, which is read as kh->files[file]. */
static int
lc_kh_load_fp(struct lc_knownhosts *kh, size_t file, FILE *f,
    const char *const *names, size_t nnames)
{
	const char *path = kh->files[file];
	char *line = NULL;
	unsigned long lineno = 0;
	int r = 0, skipping = 0;

	if ((line = malloc(LC_KH_LINE_MAX)) == NULL) {
		r = -LC_ERR_NOMEM;
		goto out;
	}
	while (fgets(line, LC_KH_LINE_MAX, f) != NULL) {
		size_t len = strlen(line);
		int complete = len > 0 && line[len - 1] == '\n';

		if (skipping) {
			/* the rest of an overlong line */
			skipping = !complete;
			continue;
		}
		lineno++;
		if (!complete && !feof(f)) {
			lc_log_debug("%s:%lu: line too long, ignored", path,
			    lineno);
			skipping = 1;
			continue;
		}
		while (len > 0 && (line[len - 1] == '\n' ||
		    line[len - 1] == '\r'))
			line[--len] = '\0';
		if ((r = lc__knownhosts_add_line(kh, line, file, lineno, names,
		    nnames)) != 0)
			goto out;
	}
	if (ferror(f))
		lc_log_verbose("error reading %s", path);
 out:
	free(line);
	return r;
}

static int
lc_kh_load_file(struct lc_knownhosts *kh, size_t file,
    const char *const *names, size_t nnames)
{
	const char *path = kh->files[file];
	FILE *f;
	int r;

	if ((f = fopen(path, "re")) == NULL) {
		if (errno != ENOENT && errno != ENOTDIR)
			lc_log_verbose("cannot read %s: %s", path,
			    strerror(errno));
		return 0;
	}
	r = lc_kh_load_fp(kh, file, f, names, nnames);
	fclose(f);
	return r;
}

static int
lc_kh_new(LIBSSH2_SESSION *sess, const char *const *files, size_t nfiles,
    struct lc_knownhosts **out, struct lc_err *e)
{
	struct lc_knownhosts *kh = NULL;
	size_t i;
	int r;

	*out = NULL;
	if ((kh = calloc(1, sizeof(*kh))) == NULL ||
	    (nfiles > 0 &&
	    (kh->files = calloc(nfiles, sizeof(*kh->files))) == NULL)) {
		r = lc_err_set(e, LC_ERR_NOMEM, "known hosts: out of memory");
		goto out;
	}
	if ((kh->h = libssh2_knownhost_init(sess)) == NULL) {
		r = lc_err_set(e, LC_ERR_INTERNAL,
		    "libssh2_knownhost_init failed");
		goto out;
	}
	for (i = 0; i < nfiles; i++) {
		if ((kh->files[i] = strdup(files[i])) == NULL) {
			r = lc_err_set(e, LC_ERR_NOMEM,
			    "known hosts: out of memory");
			goto out;
		}
		kh->nfiles++;
	}
	*out = kh;
	kh = NULL;	/* transferred */
	r = 0;
 out:
	lc_knownhosts_free(kh);
	return r;
}

int
lc__knownhosts_load_mem(LIBSSH2_SESSION *sess, const char *text,
    size_t len, const char *name, const char *const *names, size_t nnames,
    struct lc_knownhosts **out, struct lc_err *e)
{
	struct lc_knownhosts *kh = NULL;
	FILE *f = NULL;
	int r;

	*out = NULL;
	if ((r = lc_kh_new(sess, &name, 1, &kh, e)) != 0)
		return r;
	if (len > 0 && (f = fmemopen((void *)(uintptr_t)text, len,
	    "r")) == NULL) {
		r = lc_err_sys(e, LC_ERR_NOMEM, errno, "fmemopen");
		goto out;
	}
	if (f != NULL && (r = lc_kh_load_fp(kh, 0, f, names,
	    nnames)) != 0) {
		lc_err_set(e, -r, "reading %s: %s", name, lc_strerror(r));
		goto out;
	}
	*out = kh;
	kh = NULL;	/* transferred */
	r = 0;
 out:
	if (f != NULL)
		fclose(f);
	lc_knownhosts_free(kh);
	return r;
}

int
lc_knownhosts_load(LIBSSH2_SESSION *sess, const char *const *files,
    size_t nfiles, const char *const *names, size_t nnames,
    struct lc_knownhosts **out, struct lc_err *e)
{
	struct lc_knownhosts *kh = NULL;
	size_t i;
	int r;

	*out = NULL;
	if ((r = lc_kh_new(sess, files, nfiles, &kh, e)) != 0)
		return r;
	for (i = 0; i < nfiles; i++) {
		if ((r = lc_kh_load_file(kh, i, names, nnames)) != 0) {
			lc_err_set(e, -r, "reading %s: %s", files[i],
			    lc_strerror(r));
			goto out;
		}
	}
	lc_log_debug("known hosts: %zu entries from %zu files", kh->norig,
	    nfiles);
	*out = kh;
	kh = NULL;	/* transferred */
	r = 0;
 out:
	lc_knownhosts_free(kh);
	return r;
}

void
lc_knownhosts_free(struct lc_knownhosts *kh)
{
	size_t i;

	if (kh == NULL)
		return;
	if (kh->h != NULL)
		libssh2_knownhost_free(kh->h);
	for (i = 0; i < kh->nfiles; i++)
		free(kh->files[i]);
	free(kh->files);
	free(kh->orig);
	free(kh->rev);
	free(kh);
}

/* Is any key of this type recorded for one of the names?  1/0. */
static int
lc_kh_type_known(struct lc_knownhosts *kh, const char *const *names,
    size_t nnames, int keybit)
{
	size_t i;
	int rc;

	if (keybit == 0)
		return 0;
	for (i = 0; i < nnames; i++) {
		/* a key no entry has: an entry of the type gives MISMATCH */
		rc = libssh2_knownhost_checkp(kh->h, names[i], -1, "AAAA", 0,
		    LIBSSH2_KNOWNHOST_TYPE_PLAIN |
		    LIBSSH2_KNOWNHOST_KEYENC_BASE64 | keybit, NULL);
		if (rc == LIBSSH2_KNOWNHOST_CHECK_MATCH ||
		    rc == LIBSSH2_KNOWNHOST_CHECK_MISMATCH)
			return 1;
	}
	return 0;
}

int
lc_knownhosts_order_algs(struct lc_knownhosts *kh, const char *const *names,
    size_t nnames, const char *const *algs, size_t nalgs, char *out,
    size_t outsz)
{
	size_t i, o = 0;
	int pass, known, nknown = 0, n;

	if (outsz == 0)
		return -LC_ERR_TOOBIG;
	out[0] = '\0';
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < nalgs; i++) {
			known = lc_kh_type_known(kh, names, nnames,
			    lc_kh_alg_keybit(algs[i]));
			if (known != (pass == 0))
				continue;
			nknown += known;
			n = snprintf(out + o, outsz - o, "%s%s",
			    o > 0 ? "," : "", algs[i]);
			if (n < 0 || (size_t)n >= outsz - o)
				return -LC_ERR_TOOBIG;
			o += (size_t)n;
		}
	}
	return nknown;
}

static void
lc_kh_origin_of(const struct lc_knownhosts *kh, const void *node,
    struct lc_kh_result *res)
{
	size_t i;

	for (i = 0; i < kh->norig; i++) {
		if (kh->orig[i].node == node) {
			res->file = kh->files[kh->orig[i].file];
			res->line = kh->orig[i].line;
			return;
		}
	}
}

/*
 * Does a @revoked line name this key?  1 with res filled in (the first
 * such line), 0 if none, -LC_ERR_INTERNAL if the key cannot be hashed.
 */
static int
lc_kh_revoked_find(const struct lc_knownhosts *kh, const unsigned char *blob,
    size_t len, struct lc_kh_result *res)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	size_t i;

	if (kh->nrev == 0)
		return 0;
	if (EVP_Digest(blob, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen != 32)
		return -LC_ERR_INTERNAL;
	for (i = 0; i < kh->nrev; i++) {
		if (memcmp(kh->rev[i].sha256, md, 32) == 0) {
			res->status = LC_KH_REVOKED;
			res->file = kh->files[kh->rev[i].file];
			res->line = kh->rev[i].line;
			return 1;
		}
	}
	return 0;
}

/* No entry for the key: a @cert-authority line may cover the host. */
static int
lc_kh_ca(const struct lc_knownhosts *kh, const char *const *names,
    size_t nnames, struct lc_kh_result *res)
{
	if (res->status != LC_KH_UNKNOWN || kh->ca_line == 0)
		return 0;
	res->status = LC_KH_CA;
	res->name = names[kh->ca_name < nnames ? kh->ca_name : 0];
	res->file = kh->files[kh->ca_file];
	res->line = kh->ca_line;
	return 0;
}

int
lc_knownhosts_check(struct lc_knownhosts *kh, const char *const *names,
    size_t nnames, const unsigned char *blob, size_t len, int type,
    struct lc_kh_result *res, struct lc_err *e)
{
	int keybit = lc_kh_type_keybit(type);
	struct libssh2_knownhost *ext;
	size_t i;
	int rc;

	memset(res, 0, sizeof(*res));
	res->status = LC_KH_UNKNOWN;
	if (nnames == 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "known hosts: no name");
	if ((rc = lc_kh_revoked_find(kh, blob, len, res)) != 0) {
		res->name = names[0];
		return rc < 0 ? lc_err_set(e, -rc, "known hosts: cannot hash "
		    "the host key") : 0;
	}
	if (keybit == 0)
		return lc_kh_ca(kh, names, nnames, res);	/* not in known_hosts */
	for (i = 0; i < nnames; i++) {
		ext = NULL;
		rc = libssh2_knownhost_checkp(kh->h, names[i], -1,
		    (const char *)blob, len, LIBSSH2_KNOWNHOST_TYPE_PLAIN |
		    LIBSSH2_KNOWNHOST_KEYENC_RAW | keybit, &ext);
		switch (rc) {
		case LIBSSH2_KNOWNHOST_CHECK_MATCH:
			res->status = LC_KH_MATCH;
			res->name = names[i];
			return 0;
		case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
			res->status = LC_KH_CHANGED;
			res->name = names[i];
			if (ext != NULL)
				lc_kh_origin_of(kh, ext->node, res);
			return 0;
		case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
			break;
		default:
			return lc_err_set(e, LC_ERR_INTERNAL,
			    "known hosts lookup for %s failed", names[i]);
		}
	}
	return lc_kh_ca(kh, names, nnames, res);
}
