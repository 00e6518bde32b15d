/*
 * RevokedHostKeys files: key lists and OpenSSH KRLs (see
 * lanecp/revokedkeys.h).
 */
#include "revokedkeys.h"
#include "revokedkeys_int.h"
#include "err.h"
#include "base64.h"
#include "knownhosts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#define LC_REVOKED_LINE_MAX (16 * 1024)	/* a key list's longest line */
#define LC_REVOKED_CERT_SUFFIX "-cert-v01@openssh.com"

/* KRL (PROTOCOL.krl): header and section types. */
#define LC_KRL_MAGIC		"SSHKRL\n\0"
#define LC_KRL_MAGIC_LEN	8
#define LC_KRL_VERSION		1
#define LC_KRL_CERTIFICATES	1
#define LC_KRL_EXPLICIT_KEY	2
#define LC_KRL_SHA1		3
#define LC_KRL_SIGNATURE	4
#define LC_KRL_SHA256		5
#define LC_KRL_EXTENSION	255
#define LC_KRL_CERT_SERIAL_LIST	0x20
#define LC_KRL_CERT_SERIAL_RANGE 0x21
#define LC_KRL_CERT_SERIAL_BITMAP 0x22
#define LC_KRL_CERT_KEY_ID	0x23
#define LC_KRL_CERT_EXTENSION	0x39

/* The key under test and what the file says about it. */
struct lc_rk {
	const unsigned char *blob;
	size_t len;
	unsigned char sha1[20];
	unsigned char sha256[32];
	int revoked;
	const char *why;	/* KRL: what is wrong with it */
	int unusable;		/* ... and it is well formed, just unusable */
};

/* A bounded view of bytes being decoded; get helpers check lengths. */
struct lc_rk_view {
	const unsigned char *p;
	size_t n;
};

static int
lc_rk_u8(struct lc_rk_view *v, unsigned *out)
{
	if (v->n < 1)
		return -LC_ERR_PROTO;
	*out = v->p[0];
	v->p++;
	v->n--;
	return 0;
}

static int
lc_rk_u32(struct lc_rk_view *v, uint32_t *out)
{
	if (v->n < 4)
		return -LC_ERR_PROTO;
	*out = (uint32_t)v->p[0] << 24 | (uint32_t)v->p[1] << 16 |
	    (uint32_t)v->p[2] << 8 | v->p[3];
	v->p += 4;
	v->n -= 4;
	return 0;
}

static int
lc_rk_skip(struct lc_rk_view *v, size_t n)
{
	if (v->n < n)
		return -LC_ERR_PROTO;
	v->p += n;
	v->n -= n;
	return 0;
}

/* An SSH string: uint32 length, then that many bytes (a view of them). */
static int
lc_rk_string(struct lc_rk_view *v, struct lc_rk_view *out)
{
	uint32_t n;

	if (lc_rk_u32(v, &n) != 0 || n > v->n)
		return -LC_ERR_PROTO;
	out->p = v->p;
	out->n = n;
	v->p += n;
	v->n -= n;
	return 0;
}

static int
lc_rk_bad(struct lc_rk *k, const char *why)
{
	k->why = why;
	return -LC_ERR_PROTO;
}

static int
lc_rk_unusable(struct lc_rk *k, const char *why)
{
	k->why = why;
	k->unusable = 1;
	return -LC_ERR_PROTO;
}

/* An extension: string name, boolean critical, string contents. */
static int
lc_rk_extension(struct lc_rk *k, struct lc_rk_view d)
{
	struct lc_rk_view name, body;
	unsigned crit;

	if (lc_rk_string(&d, &name) != 0 || lc_rk_u8(&d, &crit) != 0 ||
	    lc_rk_string(&d, &body) != 0 || d.n != 0)
		return lc_rk_bad(k, "bad extension");
	if (crit != 0)
		return lc_rk_unusable(k, "a critical extension lanecp does "
		    "not know");
	return 0;
}

/* A certificate section: checked for form only (see the header). */
static int
lc_rk_certs(struct lc_rk *k, struct lc_rk_view d)
{
	struct lc_rk_view ca, reserved, sub, s;
	unsigned type;
	int r;

	if (lc_rk_string(&d, &ca) != 0 || lc_rk_string(&d, &reserved) != 0)
		return lc_rk_bad(k, "bad certificate section");
	while (d.n > 0) {
		if (lc_rk_u8(&d, &type) != 0 || lc_rk_string(&d, &sub) != 0)
			return lc_rk_bad(k, "bad certificate subsection");
		switch (type) {
		case LC_KRL_CERT_SERIAL_LIST:
			if (sub.n % 8 != 0)
				return lc_rk_bad(k, "bad serial list");
			break;
		case LC_KRL_CERT_SERIAL_RANGE:
			if (sub.n != 16)
				return lc_rk_bad(k, "bad serial range");
			break;
		case LC_KRL_CERT_SERIAL_BITMAP:
			if (lc_rk_skip(&sub, 8) != 0 ||
			    lc_rk_string(&sub, &s) != 0 || sub.n != 0)
				return lc_rk_bad(k, "bad serial bitmap");
			break;
		case LC_KRL_CERT_KEY_ID:
			while (sub.n > 0)
				if (lc_rk_string(&sub, &s) != 0)
					return lc_rk_bad(k, "bad key id list");
			break;
		case LC_KRL_CERT_EXTENSION:
			if ((r = lc_rk_extension(k, sub)) != 0)
				return r;
			break;
		default:
			return lc_rk_unusable(k, "an unknown certificate "
			    "subsection");
		}
	}
	return 0;
}

/*
 * A list of strings (explicit keys, or hashes of size hlen > 0): does one
 * equal what (wlen bytes)?
 */
static int
lc_rk_list(struct lc_rk *k, struct lc_rk_view d, size_t hlen,
    const unsigned char *what, size_t wlen)
{
	struct lc_rk_view s;

	while (d.n > 0) {
		if (lc_rk_string(&d, &s) != 0 || s.n == 0 ||
		    (hlen > 0 && s.n != hlen))
			return lc_rk_bad(k, hlen > 0 ? "bad key hash" :
			    "bad key");
		if (s.n == wlen && memcmp(s.p, what, wlen) == 0)
			k->revoked = 1;
	}
	return 0;
}

/* The whole KRL; k->revoked says whether it revokes k's key. */
static int
lc_rk_krl(struct lc_rk *k, struct lc_rk_view v)
{
	struct lc_rk_view d;
	uint32_t version;
	unsigned type;
	int r;

	if (lc_rk_skip(&v, LC_KRL_MAGIC_LEN) != 0 ||
	    lc_rk_u32(&v, &version) != 0)
		return lc_rk_bad(k, "short header");
	if (version != LC_KRL_VERSION)
		return lc_rk_unusable(k, "an unknown format version");
	/* krl_version, generated_date, flags; reserved, comment */
	if (lc_rk_skip(&v, 24) != 0 || lc_rk_string(&v, &d) != 0 ||
	    lc_rk_string(&v, &d) != 0)
		return lc_rk_bad(k, "short header");
	while (v.n > 0) {
		if (lc_rk_u8(&v, &type) != 0)
			return lc_rk_bad(k, "short section");
		if (type == LC_KRL_SIGNATURE)
			return lc_rk_unusable(k, "signed, and lanecp does not "
			    "check KRL signatures");
		if (lc_rk_string(&v, &d) != 0)
			return lc_rk_bad(k, "section longer than the file");
		switch (type) {
		case LC_KRL_CERTIFICATES:
			r = lc_rk_certs(k, d);
			break;
		case LC_KRL_EXPLICIT_KEY:
			r = lc_rk_list(k, d, 0, k->blob, k->len);
			break;
		case LC_KRL_SHA1:
			r = lc_rk_list(k, d, sizeof(k->sha1), k->sha1,
			    sizeof(k->sha1));
			break;
		case LC_KRL_SHA256:
			r = lc_rk_list(k, d, sizeof(k->sha256), k->sha256,
			    sizeof(k->sha256));
			break;
		case LC_KRL_EXTENSION:
			r = lc_rk_extension(k, d);
			break;
		default:
			r = lc_rk_unusable(k, "an unknown section type");
			break;
		}
		if (r != 0)
			return r;
	}
	return 0;
}

/* [p, end) without leading blanks; the length of its first field. */
static size_t
lc_rk_token(const unsigned char **p, const unsigned char *end)
{
	const unsigned char *q;

	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
	for (q = *p; q < end && *q != ' ' && *q != '\t'; q++)
		;
	return (size_t)(q - *p);
}

/*
 * One line of a key list (n bytes, no newline): 0 if not the key, 1 if
 * it is, -LC_ERR_PROTO if not a public key, -LC_ERR_HOSTKEY for a
 * certificate, -LC_ERR_NOMEM.
 */
static int
lc_rk_keyline(struct lc_rk *k, const unsigned char *p, size_t n)
{
	const unsigned char *end = p + n, *type, *b64;
	unsigned char *blob = NULL;
	char btype[128];
	size_t tlen, blen, sl = strlen(LC_REVOKED_CERT_SUFFIX);
	int dn, r;

	while (end > p && end[-1] == '\r')
		end--;
	tlen = lc_rk_token(&p, end);
	if (tlen == 0 || *p == '#')
		return 0;
	type = p;
	p += tlen;
	blen = lc_rk_token(&p, end);
	b64 = p;
	if (blen == 0)
		return -LC_ERR_PROTO;
	if (tlen > sl && memcmp(type + tlen - sl, LC_REVOKED_CERT_SUFFIX,
	    sl) == 0)
		return -LC_ERR_HOSTKEY;
	if ((blob = malloc(blen / 4 * 3 + 3)) == NULL)
		return -LC_ERR_NOMEM;
	dn = lc_base64_decode((const char *)b64, blen, blob, blen / 4 * 3 + 3);
	if (dn == -LC_ERR_NOMEM)
		r = dn;
	else if (dn <= 0 || lc_knownhosts_blob_type(blob, (size_t)dn, btype,
	    sizeof(btype)) != 0 || strlen(btype) != tlen ||
	    memcmp(btype, type, tlen) != 0)
		r = -LC_ERR_PROTO;	/* as ssh: the type must match */
	else
		r = (size_t)dn == k->len && memcmp(blob, k->blob, k->len) == 0;
	free(blob);
	return r;
}

static int
lc_rk_keylist(struct lc_rk *k, const unsigned char *data, size_t size,
    const char *name, struct lc_revoked_result *res, struct lc_err *e)
{
	const unsigned char *p = data, *end = data + size, *nl;
	unsigned long lineno = 0;
	size_t n;
	int r;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = (size_t)((nl != NULL ? nl : end) - p);
		lineno++;
		if (n > LC_REVOKED_LINE_MAX)
			return lc_err_set(e, LC_ERR_HOSTKEY, "RevokedHostKeys "
			    "%s line %lu: longer than %d bytes", name, lineno,
			    LC_REVOKED_LINE_MAX);
		r = lc_rk_keyline(k, p, n);
		if (r == -LC_ERR_NOMEM)
			return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
		if (r == -LC_ERR_HOSTKEY)
			return lc_err_set(e, LC_ERR_HOSTKEY, "RevokedHostKeys "
			    "%s line %lu: a certificate, which lanecp cannot "
			    "check", name, lineno);
		if (r < 0)
			return lc_err_set(e, LC_ERR_HOSTKEY, "RevokedHostKeys "
			    "%s line %lu: not a public key", name, lineno);
		if (r == 1) {
			res->revoked = 1;
			res->line = lineno;
			return 0;
		}
		p += n + (nl != NULL);
	}
	return 0;
}

int
lc__revokedkeys_check_mem(const unsigned char *data, size_t size,
    const char *name, const unsigned char *blob, size_t len,
    struct lc_revoked_result *res, struct lc_err *e)
{
	struct lc_rk k;
	struct lc_rk_view v = { data, size };
	unsigned int n1 = 0, n2 = 0;

	memset(res, 0, sizeof(*res));
	memset(&k, 0, sizeof(k));
	k.blob = blob;
	k.len = len;
	if (size > LC_REVOKED_FILE_MAX)
		return lc_err_set(e, LC_ERR_HOSTKEY, "RevokedHostKeys %s: "
		    "larger than %u bytes", name, LC_REVOKED_FILE_MAX);
	if (size < LC_KRL_MAGIC_LEN ||
	    memcmp(data, LC_KRL_MAGIC, LC_KRL_MAGIC_LEN) != 0)
		return lc_rk_keylist(&k, data, size, name, res, e);
	res->krl = 1;
	if (EVP_Digest(blob, len, k.sha1, &n1, EVP_sha1(), NULL) != 1 ||
	    EVP_Digest(blob, len, k.sha256, &n2, EVP_sha256(), NULL) != 1 ||
	    n1 != sizeof(k.sha1) || n2 != sizeof(k.sha256))
		return lc_err_set(e, LC_ERR_INTERNAL, "cannot hash the host "
		    "key");
	if (lc_rk_krl(&k, v) != 0)
		return lc_err_set(e, LC_ERR_HOSTKEY, "RevokedHostKeys %s: %s "
		    "KRL (%s)", name, k.unusable ? "unusable" : "malformed",
		    k.why);
	res->revoked = k.revoked;
	return 0;
}

/* The whole file (at most LC_REVOKED_FILE_MAX bytes) into *out. */
static int
lc_rk_read(const char *path, unsigned char **out, size_t *outlen,
    struct lc_err *e)
{
	unsigned char *buf = NULL, *nb;
	struct stat st;
	size_t n = 0, cap, ncap;
	ssize_t got;
	int fd, r;

	*out = NULL;
	*outlen = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK)) < 0)
		return lc_err_sys(e, LC_ERR_HOSTKEY, errno,
		    "RevokedHostKeys %s", path);
	if (fstat(fd, &st) != 0) {
		r = lc_err_sys(e, LC_ERR_HOSTKEY, errno, "RevokedHostKeys %s",
		    path);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		r = lc_err_sys(e, LC_ERR_HOSTKEY, EISDIR, "RevokedHostKeys %s",
		    path);
		goto out;
	}
	/* a FIFO or socket could hand out nothing and look empty */
	if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) {
		r = lc_err_set(e, LC_ERR_HOSTKEY, "RevokedHostKeys %s: not a "
		    "regular file", path);
		goto out;
	}
	if (S_ISREG(st.st_mode) && st.st_size > (off_t)LC_REVOKED_FILE_MAX)
		goto toobig;
	/* one byte more than the file: its end is seen without a resize */
	cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 4096;
	if ((buf = malloc(cap)) == NULL)
		goto nomem;
	for (;;) {
		if (n == cap) {
			if (cap > LC_REVOKED_FILE_MAX)
				goto toobig;
			ncap = cap > LC_REVOKED_FILE_MAX / 2 ?
			    LC_REVOKED_FILE_MAX + 1 : cap * 2;
			if ((nb = realloc(buf, ncap)) == NULL)
				goto nomem;
			buf = nb;
			cap = ncap;
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = lc_err_sys(e, LC_ERR_HOSTKEY, errno,
			    "RevokedHostKeys %s", path);
			goto out;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	*out = buf;
	*outlen = n;
	buf = NULL;	/* transferred */
	r = 0;
	goto out;
 toobig:
	r = lc_err_set(e, LC_ERR_HOSTKEY, "RevokedHostKeys %s: larger than "
	    "%u bytes", path, LC_REVOKED_FILE_MAX);
	goto out;
 nomem:
	r = lc_err_set(e, LC_ERR_NOMEM, "out of memory");
 out:
	free(buf);
	close(fd);
	return r;
}

int
lc_revokedkeys_check(const char *path, const unsigned char *blob,
    size_t len, struct lc_revoked_result *res, struct lc_err *e)
{
	unsigned char *data = NULL;
	size_t size = 0;
	int r;

	memset(res, 0, sizeof(*res));
	if ((r = lc_rk_read(path, &data, &size, e)) != 0)
		return r;
	r = lc__revokedkeys_check_mem(data, size, path, blob, len, res, e);
	free(data);
	return r;
}
