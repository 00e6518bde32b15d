#include "checksum.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <zlib.h>

struct lc_csum {
	int alg;
	EVP_MD_CTX *md;		/* sha256 */
	uLong z;		/* crc32, adler32 */
};

static const char *const lc_csum_names[LC_CSUM_ALGS] = {
	[LC_CSUM_NONE] = "none",
	[LC_CSUM_SHA256] = "sha256",
	[LC_CSUM_CRC32] = "crc32",
	[LC_CSUM_ADLER32] = "adler32",
};

const char *
lc_csum_alg_name(int alg)
{
	return alg > 0 && alg < LC_CSUM_ALGS ? lc_csum_names[alg] : "none";
}

int
lc_csum_alg_parse(const char *name)
{
	for (int a = 1; a < LC_CSUM_ALGS; a++)
		if (strcasecmp(name, lc_csum_names[a]) == 0)
			return a;
	return LC_CSUM_NONE;
}

struct lc_csum *
lc_csum_new(int alg)
{
	struct lc_csum *c;

	if (alg <= LC_CSUM_NONE || alg >= LC_CSUM_ALGS ||
	    (c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->alg = alg;
	switch (alg) {
	case LC_CSUM_SHA256:
		if ((c->md = EVP_MD_CTX_new()) == NULL ||
		    EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1) {
			lc_csum_free(c);
			return NULL;
		}
		break;
	case LC_CSUM_CRC32:
		c->z = crc32(0L, Z_NULL, 0);
		break;
	default:
		c->z = adler32(0L, Z_NULL, 0);
		break;
	}
	return c;
}

void
lc_csum_update(struct lc_csum *c, const void *p, size_t n)
{
	switch (c->alg) {
	case LC_CSUM_SHA256:
		(void)EVP_DigestUpdate(c->md, p, n);
		break;
	case LC_CSUM_CRC32:
		c->z = crc32_z(c->z, p, n);
		break;
	default:
		c->z = adler32_z(c->z, p, n);
		break;
	}
}

struct lc_csum *
lc_csum_dup(const struct lc_csum *c)
{
	struct lc_csum *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	*d = *c;
	d->md = NULL;
	if (c->md != NULL && ((d->md = EVP_MD_CTX_new()) == NULL ||
	    EVP_MD_CTX_copy_ex(d->md, c->md) != 1)) {
		lc_csum_free(d);
		return NULL;
	}
	return d;
}

void
lc_csum_text(const struct lc_csum *c, char out[LC_CSUM_TEXT_MAX])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	size_t o;

	o = (size_t)snprintf(out, LC_CSUM_TEXT_MAX, "%s:",
	    lc_csum_alg_name(c->alg));
	if (c->alg == LC_CSUM_SHA256) {
		EVP_MD_CTX *tmp = EVP_MD_CTX_new();
		if (tmp == NULL || EVP_MD_CTX_copy_ex(tmp, c->md) != 1 ||
		    EVP_DigestFinal_ex(tmp, md, &n) != 1)
			n = 0;
		EVP_MD_CTX_free(tmp);
		for (unsigned i = 0; i < n && o + 3 <= LC_CSUM_TEXT_MAX; i++)
			o += (size_t)snprintf(out + o, LC_CSUM_TEXT_MAX - o,
			    "%02x", md[i]);
	} else {
		snprintf(out + o, LC_CSUM_TEXT_MAX - o, "%08lx",
		    (unsigned long)(c->z & 0xffffffffUL));
	}
}

void
lc_csum_free(struct lc_csum *c)
{
	if (c == NULL)
		return;
	EVP_MD_CTX_free(c->md);
	free(c);
}

int
lc_csum_fd(struct lc_csum *c, int fd, uint64_t len, const char *name,
    struct lc_err *e)
{
	enum { CHUNK = 1 << 20 };
	uint8_t *buf = malloc(CHUNK);
	uint64_t off = 0;

	if (buf == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	while (off < len) {
		size_t want = len - off < CHUNK ? (size_t)(len - off) : CHUNK;
		ssize_t n = pread(fd, buf, want, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			if (n == 0)
				return lc_err_set(e, LC_ERR_IO, "%s: shorter "
				    "than %llu bytes", name,
				    (unsigned long long)len);
			return lc_err_sys(e, LC_ERR_IO, errno, "read %s",
			    name);
		}
		lc_csum_update(c, buf, (size_t)n);
		off += (uint64_t)n;
	}
	free(buf);
	return 0;
}

int
lc_csum_parse_arg(const char *arg, int *alg, char expect[LC_CSUM_TEXT_MAX])
{
	char name[16];
	const char *eq = strchr(arg, '=');
	size_t nlen = eq != NULL ? (size_t)(eq - arg) : strlen(arg), hlen, want;

	*alg = LC_CSUM_NONE;
	if (expect != NULL)
		expect[0] = '\0';
	if (nlen == 0 || nlen >= sizeof(name))
		return -LC_ERR_USAGE;
	memcpy(name, arg, nlen);
	name[nlen] = '\0';
	if ((*alg = lc_csum_alg_parse(name)) == LC_CSUM_NONE)
		return -LC_ERR_USAGE;
	if (eq == NULL)
		return 0;
	hlen = strlen(eq + 1);
	want = *alg == LC_CSUM_SHA256 ? 64 : 8;
	if (hlen != want)
		return -LC_ERR_USAGE;
	for (size_t i = 0; i < hlen; i++)
		if (!isxdigit((unsigned char)eq[1 + i]))
			return -LC_ERR_USAGE;
	if (expect != NULL) {
		int n = snprintf(expect, LC_CSUM_TEXT_MAX, "%s:",
		    lc_csum_alg_name(*alg));
		for (size_t i = 0; i < hlen; i++)
			expect[(size_t)n + i] =
			    (char)tolower((unsigned char)eq[1 + i]);
		expect[(size_t)n + hlen] = '\0';
	}
	return 0;
}

uint32_t
lc_prefix_chunk(uint64_t len, uint32_t block, uint32_t max_chunks)
{
	uint64_t c = block, max = (1ULL << 31);

	while (c < max && (len + c - 1) / c > max_chunks)
		c *= 2;
	if ((len + c - 1) / c > max_chunks)
		return 0;
	return (uint32_t)c;
}

int
lc_prefix_hash(int fd, uint64_t off, uint64_t len, uint8_t out[32],
    struct lc_csum *feed, const char *name, struct lc_err *e)
{
	enum { CHUNK = 1 << 20 };
	/* one chunk of a resume or a delta is often 8 KiB and hashed by a
	   call of its own: a buffer of 1 MiB for each cost more than the
	   hash (43 s for 4,096 chunks under AddressSanitizer) */
	size_t bufsz = len < CHUNK ? (len > 0 ? (size_t)len : 1) : CHUNK;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	uint8_t *buf = malloc(bufsz);
	unsigned int olen = 0;
	uint64_t done = 0;
	int r = 0;

	if (md == NULL || buf == NULL ||
	    EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		r = lc_err_set(e, LC_ERR_NOMEM, "out of memory");
		goto out;
	}
	while (done < len) {
		size_t want = len - done < bufsz ? (size_t)(len - done) : bufsz;
		ssize_t n = pread(fd, buf, want, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n == 0 ? lc_err_set(e, LC_ERR_IO, "%s: shorter than "
			    "expected", name) : lc_err_sys(e, LC_ERR_IO, errno,
			    "read %s", name);
			goto out;
		}
		EVP_DigestUpdate(md, buf, (size_t)n);
		if (feed != NULL)
			lc_csum_update(feed, buf, (size_t)n);
		done += (uint64_t)n;
	}
	if (EVP_DigestFinal_ex(md, out, &olen) != 1 || olen != 32)
		r = lc_err_set(e, LC_ERR_INTERNAL, "SHA-256 failed");
 out:
	EVP_MD_CTX_free(md);
	free(buf);
	return r;
}
