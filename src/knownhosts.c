/*
 * known_hosts files on top of libssh2's knownhost API (see
 * lanecp/knownhosts.h).
 */
#include "lanecp/knownhosts.h"
#include "lanecp/base64.h"
#include "lanecp/err.h"
#include "lanecp/log.h"
#include "lanecp/sshconf.h"
#include "lanecp/util.h"

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

#define LC_KH_LINE_MAX (16 * 1024)	/* longer lines are skipped */
#define LC_KH_BLOB_MAX (16 * 1024)	/* largest key blob we write */
#define LC_KH_SALT_LEN 20		/* as ssh: SHA-1 size */

struct lc_kh_origin {
	const void *node;	/* libssh2's entry */
	size_t file;		/* index into files */
	unsigned long line;
};

/* A key a @revoked line names: its SHA-256 and where the line is. */
struct lc_kh_revoked {
	unsigned char sha256[32];
	size_t file;
	unsigned long line;
};

struct lc_knownhosts {
	LIBSSH2_KNOWNHOSTS *h;
	char **files;
	size_t nfiles;
	struct lc_kh_origin *orig;
	size_t norig;
	size_t aorig;
	struct libssh2_knownhost *last;	/* last entry given an origin */
	struct lc_kh_revoked *rev;	/* @revoked lines, any host */
	size_t nrev;
	size_t arev;
	/* the first @cert-authority line covering one of the names */
	size_t ca_file;
	unsigned long ca_line;	/* 0: none */
	size_t ca_name;		/* index of the name it covers */
};

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

/* Give every entry libssh2 added since the last call its file and line. */
static int
lc_kh_note_new(struct lc_knownhosts *kh, size_t file, unsigned long line)
{
	struct libssh2_knownhost *n;

	while (libssh2_knownhost_get(kh->h, &n, kh->last) == 0) {
		if (kh->norig == kh->aorig) {
			size_t na = kh->aorig ? kh->aorig * 2 : 64;
			struct lc_kh_origin *o;

			if ((o = realloc(kh->orig, na * sizeof(*o))) == NULL)
				return -LC_ERR_NOMEM;
			kh->orig = o;
			kh->aorig = na;
		}
		kh->orig[kh->norig].node = n->node;
		kh->orig[kh->norig].file = file;
		kh->orig[kh->norig].line = line;
		kh->norig++;
		kh->last = n;
	}
	return 0;
}

static void
lc_kh_readline(struct lc_knownhosts *kh, const char *line, size_t len,
    size_t file, unsigned long lineno)
{
	if (libssh2_knownhost_readline(kh->h, line, len,
	    LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0)
		lc_log_debug("%s:%lu: cannot parse, ignored", kh->files[file],
		    lineno);
}

/*
 * A hashed host field, "|1|salt|hash" (the first hlen bytes of f): both
 * base64 of 20 bytes (SHA-1 size), as ssh's extract_salt() wants.
 * libssh2 1.10 leaks an HMAC context on every lookup for a hash of another
 * length, so such lines never reach it.  Well formed?  1/0.
 */
static int
lc_kh_hashed_ok(const char *f, size_t hlen)
{
	unsigned char buf[64];
	const char *salt = f + 3, *bar, *hash;
	size_t slen;

	if (hlen < 3 || (bar = memchr(salt, '|', hlen - 3)) == NULL)
		return 0;
	slen = (size_t)(bar - salt);
	hash = bar + 1;
	return lc_base64_decode_strict(salt, slen, buf, sizeof(buf)) ==
	    LC_KH_SALT_LEN &&
	    lc_base64_decode_strict(hash, hlen - 3 - slen - 1, buf,
	    sizeof(buf)) == LC_KH_SALT_LEN;
}

/* Next blank-separated field of *pp (advanced past it), or NULL. */
static char *
lc_kh_field(char **pp, size_t *len)
{
	char *p = *pp, *f;

	p += strspn(p, " \t");
	if (*p == '\0')
		return NULL;
	f = p;
	*len = strcspn(p, " \t");
	*pp = p + *len;
	return f;
}

/*
 * Does the hashed host field "|1|salt|hash" (first hlen bytes of f,
 * checked by lc_kh_hashed_ok) stand for name?  1/0.
 */
static int
lc_kh_hashed_match(const char *f, size_t hlen, const char *name)
{
	unsigned char salt[64], hash[64], mac[EVP_MAX_MD_SIZE];
	const char *bar = memchr(f + 3, '|', hlen - 3);
	unsigned int maclen = 0;
	size_t slen;

	if (bar == NULL)
		return 0;
	slen = (size_t)(bar - (f + 3));
	if (lc_base64_decode_strict(f + 3, slen, salt, sizeof(salt)) !=
	    LC_KH_SALT_LEN ||
	    lc_base64_decode_strict(bar + 1, hlen - 3 - slen - 1, hash,
	    sizeof(hash)) != LC_KH_SALT_LEN ||
	    HMAC(EVP_sha1(), salt, LC_KH_SALT_LEN,
	    (const unsigned char *)name, strlen(name), mac, &maclen) == NULL ||
	    maclen != LC_KH_SALT_LEN)
		return 0;
	return CRYPTO_memcmp(mac, hash, LC_KH_SALT_LEN) == 0;
}

/*
 * Does the host field hosts (hlen bytes: a hashed name, or a pattern list
 * as ssh's match_hostname takes it) cover names[i]?  The index, or -1.
 */
static long
lc_kh_hosts_cover(char *hosts, size_t hlen, const char *const *names,
    size_t nnames)
{
	size_t i;
	char save = hosts[hlen];
	long r = -1;

	if (strncmp(hosts, "|1|", 3) == 0) {
		if (!lc_kh_hashed_ok(hosts, hlen))
			return -1;
		for (i = 0; i < nnames && r < 0; i++)
			if (lc_kh_hashed_match(hosts, hlen, names[i]))
				r = (long)i;
		return r;
	}
	hosts[hlen] = '\0';
	for (i = 0; i < nnames && r < 0; i++)
		if (lc_sshconf_match_list(names[i], hosts) == 1)
			r = (long)i;
	hosts[hlen] = save;
	return r;
}

/* The key (base64 field b, blen bytes) as an SSH blob: SHA-256 into md. */
static int
lc_kh_key_digest(const char *b, size_t blen, unsigned char md[32])
{
	unsigned char *blob = NULL;
	char type[64];
	unsigned int mdlen = 0;
	int n, r = -LC_ERR_PROTO;

	if (blen > LC_KH_LINE_MAX)
		return -LC_ERR_PROTO;
	if ((blob = malloc(blen / 4 * 3 + 3)) == NULL)
		return -LC_ERR_NOMEM;
	n = lc_base64_decode(b, blen, blob, blen / 4 * 3 + 3);
	if (n == -LC_ERR_NOMEM)
		r = n;
	if (n > 0 && lc_knownhosts_blob_type(blob, (size_t)n, type,
	    sizeof(type)) == 0 &&
	    EVP_Digest(blob, (size_t)n, md, &mdlen, EVP_sha256(),
	    NULL) == 1 && mdlen == 32)
		r = 0;
	free(blob);
	return r;
}

static int
lc_kh_add_revoked(struct lc_knownhosts *kh, const unsigned char md[32],
    size_t file, unsigned long line)
{
	if (kh->nrev == kh->arev) {
		size_t na = kh->arev ? kh->arev * 2 : 8;
		struct lc_kh_revoked *v;

		if ((v = realloc(kh->rev, na * sizeof(*v))) == NULL)
			return -LC_ERR_NOMEM;
		kh->rev = v;
		kh->arev = na;
	}
	memcpy(kh->rev[kh->nrev].sha256, md, 32);
	kh->rev[kh->nrev].file = file;
	kh->rev[kh->nrev].line = line;
	kh->nrev++;
	return 0;
}

/*
 * A marker line ("@revoked HOSTS TYPE KEY", "@cert-authority HOSTS TYPE
 * KEY").  A revoked key is kept whatever its host patterns say: a key
 * that is known to be stolen must never be trusted, for any name (ssh
 * itself only applies the lines whose patterns match).  A CA line only
 * notes that it covers one of the names: lanecp cannot check host
 * certificates, so the check can say why the key is not known.
 */
static int
lc_kh_marker_line(struct lc_knownhosts *kh, char *p, size_t file,
    unsigned long lineno, const char *const *names, size_t nnames)
{
	unsigned char md[32];
	char *rest, *hosts, *type, *key;
	size_t ml, hlen = 0, tlen = 0, klen = 0, i;
	int revoked, r;
	long which;

	ml = strcspn(p, " \t");
	revoked = ml == 8 && strncmp(p, "@revoked", 8) == 0;
	if (!revoked && !(ml == 15 && strncmp(p, "@cert-authority", 15) == 0)) {
		lc_log_debug("%s:%lu: unknown marker, line ignored",
		    kh->files[file], lineno);
		return 0;
	}
	rest = p + ml;
	hosts = lc_kh_field(&rest, &hlen);
	type = hosts != NULL ? lc_kh_field(&rest, &tlen) : NULL;
	key = type != NULL ? lc_kh_field(&rest, &klen) : NULL;
	r = key != NULL ? lc_kh_key_digest(key, klen, md) : -LC_ERR_PROTO;
	if (r == -LC_ERR_NOMEM)
		return r;
	if (r != 0) {
		if (revoked)
			lc_log_warn("%s line %lu: cannot read the key of this "
			    "@revoked line, ignored", kh->files[file], lineno);
		else
			lc_log_debug("%s:%lu: malformed @cert-authority line, "
			    "ignored", kh->files[file], lineno);
		return 0;
	}
	if (revoked)
		return lc_kh_add_revoked(kh, md, file, lineno);
	if (kh->ca_line != 0)
		return 0;
	if (strncmp(hosts, "|1|", 3) != 0) {
		for (i = 0; i < hlen; i++)
			hosts[i] = (char)tolower((unsigned char)hosts[i]);
	}
	if ((which = lc_kh_hosts_cover(hosts, hlen, names, nnames)) >= 0) {
		kh->ca_file = file;
		kh->ca_line = lineno;
		kh->ca_name = (size_t)which;
	}
	return 0;
}

/*
 * One line.  Plain host lists are lowercased (ssh compares host names
 * without case); a list with wildcards is matched here and, where it
 * matches, the entry is added under the lookup name itself.
 */
static int
lc_kh_add_line(struct lc_knownhosts *kh, char *line, size_t file,
    unsigned long lineno, const char *const *names, size_t nnames)
{
	char *p = line, *hosts, *rest, *buf = NULL;
	size_t hlen, i;
	int r = 0;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0' || *p == '#')
		return 0;
	if (*p == '@')
		return lc_kh_marker_line(kh, p, file, lineno, names, nnames);
	hosts = p;
	hlen = strcspn(hosts, " \t");
	rest = hosts + hlen;
	if (strncmp(hosts, "|1|", 3) != 0) {
		for (i = 0; i < hlen; i++)
			hosts[i] = (char)tolower((unsigned char)hosts[i]);
	}
	if (strncmp(hosts, "|1|", 3) == 0 && !lc_kh_hashed_ok(hosts, hlen)) {
		lc_log_warn("%s:%lu: malformed hashed host name, line ignored",
		    kh->files[file], lineno);
		return 0;
	}
	if (strncmp(hosts, "|1|", 3) == 0 || strcspn(hosts, "*?!") >= hlen) {
		lc_kh_readline(kh, hosts, strlen(hosts), file, lineno);
		return lc_kh_note_new(kh, file, lineno);
	}
	/* wildcard list */
	if (*rest == '\0')
		return 0;
	*rest++ = '\0';
	if ((buf = malloc(LC_KH_NAME_MAX + 2 + strlen(rest))) == NULL)
		return -LC_ERR_NOMEM;
	for (i = 0; i < nnames && r == 0; i++) {
		if (lc_sshconf_match_list(names[i], hosts) != 1)
			continue;
		snprintf(buf, LC_KH_NAME_MAX + 2 + strlen(rest), "%s %s",
		    names[i], rest);
		lc_kh_readline(kh, buf, strlen(buf), file, lineno);
		r = lc_kh_note_new(kh, file, lineno);
	}
	free(buf);
	return r;
}

/* Every line of f, which is read as kh->files[file]. */
static int
lc_kh_load_stream(struct lc_knownhosts *kh, size_t file, FILE *f,
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
		if ((r = lc_kh_add_line(kh, line, file, lineno, names,
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
	r = lc_kh_load_stream(kh, file, f, names, nnames);
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
	if (f != NULL && (r = lc_kh_load_stream(kh, 0, f, names,
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
