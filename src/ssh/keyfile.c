/*
 * Identity files (see ssh_int.h): reading key files, the openssh-key-v1
 * probe (see lanecp/ssh.h) and public key blobs from ".pub" files, so that
 * authentication knows before trying a key whether it is encrypted and
 * which public key it has.
 */
#include "buf.h"
#include "base64.h"
#include "knownhosts.h"
#include "log.h"
#include "ssh.h"
#include "ssh_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#define LC_SSH_KEYFILE_MAX (64 * 1024)
#define LC_SSH_BLOB_MAX (16 * 1024)

/*
 * Read a small file whole, NUL terminated, into a buffer of
 * LC_SSH_KEYFILE_MAX + 1 bytes (free it with lc_ssh_slurp_free(): it may
 * hold a private key).  A file longer than LC_SSH_KEYFILE_MAX is refused
 * (EFBIG) rather than cut.  Returns 0, -LC_ERR_IO, -LC_ERR_TOOBIG or
 * -LC_ERR_NOMEM; e says "cannot read PATH: <strerror>".
 */
static int
lc_ssh_slurp(const char *path, char **out, size_t *outlen, struct lc_err *e)
{
	char *buf = NULL, extra;
	size_t n = 0;
	ssize_t k;
	int fd, saved;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return lc_err_sys(e, LC_ERR_IO, errno, "cannot read %s", path);
	if ((buf = malloc(LC_SSH_KEYFILE_MAX + 1)) == NULL) {
		close(fd);
		return lc_err_sys(e, LC_ERR_NOMEM, ENOMEM, "cannot read %s",
		    path);
	}
	for (;;) {
		if (n < LC_SSH_KEYFILE_MAX)
			k = read(fd, buf + n, LC_SSH_KEYFILE_MAX - n);
		else
			k = read(fd, &extra, 1);	/* must be at EOF */
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0)
			break;
		if (k > 0 && n < LC_SSH_KEYFILE_MAX) {
			n += (size_t)k;
			continue;
		}
		saved = k < 0 ? errno : EFBIG;
		OPENSSL_clear_free(buf, LC_SSH_KEYFILE_MAX + 1);
		close(fd);
		return lc_err_sys(e, saved == EFBIG ? LC_ERR_TOOBIG : LC_ERR_IO,
		    saved, "cannot read %s", path);
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	if (outlen != NULL)
		*outlen = n;
	return 0;
}

static void
lc_ssh_slurp_free(char *buf)
{
	if (buf != NULL)
		OPENSSL_clear_free(buf, LC_SSH_KEYFILE_MAX + 1);
}

/*
 * "type base64 [comment]" -> blob.  Returns 0, -LC_ERR_PROTO (not such a
 * line, or the blob's type is not the line's), -LC_ERR_NOMEM or the
 * error of lc_ssh_slurp().
 */
static int
lc_ssh_read_pub(const char *path, unsigned char **blob, size_t *len)
{
	char *text = NULL, *p, *type, *b64, t2[64];
	unsigned char *out = NULL;
	size_t tlen, blen;
	int n, r;

	*blob = NULL;
	*len = 0;
	if ((r = lc_ssh_slurp(path, &text, NULL, NULL)) != 0)
		return r;
	r = -LC_ERR_PROTO;
	p = text + strspn(text, " \t\r\n");
	type = p;
	tlen = strcspn(type, " \t\r\n");
	b64 = type + tlen;
	b64 += strspn(b64, " \t");
	blen = strcspn(b64, " \t\r\n");
	if (tlen == 0 || blen == 0 || blen > 4 * LC_SSH_BLOB_MAX / 3)
		goto out;
	if ((out = malloc(blen)) == NULL) {
		r = -LC_ERR_NOMEM;
		goto out;
	}
	if ((n = lc_base64_decode(b64, blen, out, blen)) <= 0 ||
	    lc_knownhosts_blob_type(out, (size_t)n, t2, sizeof(t2)) != 0 ||
	    strlen(t2) != tlen || strncmp(t2, type, tlen) != 0)
		goto out;
	*blob = out;
	*len = (size_t)n;
	out = NULL;
	r = 0;
 out:
	free(out);
	lc_ssh_slurp_free(text);
	return r;
}

/*
 * OpenSSH private key format ("openssh-key-v1"): the public key and the
 * cipher name are outside the encrypted part (see lanecp/ssh.h).
 */
int
lc__ssh_openssh_key(const char *text, uint8_t *scratch, size_t scratchsz,
    int *encrypted, unsigned char **blob, size_t *bloblen)
{
	static const char beg[] = "-----BEGIN OPENSSH PRIVATE KEY-----";
	static const char end[] = "-----END OPENSSH PRIVATE KEY-----";
	static const char magic[] = "openssh-key-v1";	/* and its NUL */
	const char *b, *en;
	const uint8_t *cipher, *kdf, *kdfopt, *pub;
	size_t clen, klen, kolen, plen, rawsz;
	uint8_t m[sizeof(magic)];
	uint32_t nkeys;
	struct lc_rd rd;
	size_t used = 0;
	int n, r = -LC_ERR_PROTO;

	*encrypted = 0;
	*blob = NULL;
	*bloblen = 0;
	/* END is looked for only after BEGIN, so the two cannot overlap */
	if ((b = strstr(text, beg)) == NULL)
		return -LC_ERR_PROTO;
	b += sizeof(beg) - 1;
	if ((en = strstr(b, end)) == NULL || en < b)
		return -LC_ERR_PROTO;
	rawsz = (size_t)(en - b);
	if (rawsz > scratchsz)
		return -LC_ERR_TOOBIG;
	used = rawsz;	/* the decoder writes at most this much */
	if ((n = lc_base64_decode(b, rawsz, scratch, scratchsz)) < 0)
		goto out;
	lc_rd_init(&rd, scratch, (size_t)n);
	if (lc_rd_get_bytes(&rd, m, sizeof(m)) != 0 ||
	    memcmp(m, magic, sizeof(m)) != 0 ||
	    lc_rd_get_string_direct(&rd, &cipher, &clen) != 0 ||
	    lc_rd_get_string_direct(&rd, &kdf, &klen) != 0 ||
	    lc_rd_get_string_direct(&rd, &kdfopt, &kolen) != 0 ||
	    lc_rd_get_u32(&rd, &nkeys) != 0 || nkeys < 1 ||
	    lc_rd_get_string_direct(&rd, &pub, &plen) != 0 ||
	    plen == 0 || plen > LC_SSH_BLOB_MAX)
		goto out;
	if ((*blob = malloc(plen)) == NULL) {
		r = -LC_ERR_NOMEM;
		goto out;
	}
	*encrypted = !(clen == 4 && memcmp(cipher, "none", 4) == 0);
	memcpy(*blob, pub, plen);
	*bloblen = plen;
	r = 0;
 out:
	/* an unencrypted key: the private half was decoded here too */
	OPENSSL_cleanse(scratch, used);
	return r;
}

void
lc__ssh_id_probe(struct lc_ssh_id *id)
{
	unsigned char *b = NULL;
	uint8_t *scratch = NULL;
	char *text = NULL;
	struct lc_err e;
	struct stat st;
	size_t bl = 0, textlen = 0, pl;
	int enc = 0;

	id->exists = stat(id->path, &st) == 0 && !S_ISDIR(st.st_mode);
	if (!id->exists)
		return;
	pl = strlen(id->path);	/* < PATH_MAX: pub has room for ".pub" */
	memcpy(id->pub, id->path, pl);
	memcpy(id->pub + pl, ".pub", sizeof(".pub"));
	id->has_pub = access(id->pub, R_OK) == 0;
	if (id->has_pub &&
	    lc_ssh_read_pub(id->pub, &id->blob, &id->bloblen) != 0)
		lc_log_verbose("%s: cannot parse the public key", id->pub);
	lc_err_clear(&e);
	if (lc_ssh_slurp(id->path, &text, &textlen, &e) != 0) {
		lc_log_verbose("%s", e.msg);
		return;
	}
	if ((scratch = malloc(textlen + 1)) != NULL &&
	    lc__ssh_openssh_key(text, scratch, textlen + 1, &enc, &b,
	    &bl) == 0) {
		id->encrypted = enc;
		if (id->blob == NULL) {
			id->blob = b;
			id->bloblen = bl;
			b = NULL;	/* transferred */
		}
	}
	free(b);
	/* PEM (PKCS#1 with Proc-Type, or PKCS#8) */
	if (strstr(text, "Proc-Type: 4,ENCRYPTED") != NULL ||
	    strstr(text, "-----BEGIN ENCRYPTED PRIVATE KEY-----") != NULL)
		id->encrypted = 1;
	if (scratch != NULL)
		OPENSSL_clear_free(scratch, textlen + 1);
	lc_ssh_slurp_free(text);
}
