/*
 * One AES-128-GCM message per data frame: see aead.h.
 * The EVP context keeps the expanded key of the current epoch; each frame
 * only sets its nonce, so a frame costs one pass of the cipher and GHASH.
 */
#include "aead.h"
#include "buf.h"
#include "secmem.h"
#include "settings.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

static const char lc_aead_key_label[] = "lanecp bulk key v1";

/* on a page of its own, left out of core dumps (secmem.h) */
struct lc_aead {
	EVP_CIPHER_CTX *ctx;
	int seal;
	int dead;		/* a tag failed, or the cipher did */
	uint8_t secret[LC_AEAD_SECRET_LEN];
	uint64_t seq;		/* next frame counter */
	uint32_t epoch;
	uint64_t epoch_bytes;	/* plaintext under this epoch's key */
	uint64_t epoch_max;	/* lc_aead_epoch(): LC_AEAD_EPOCH_BYTES
				   unless LANECP_AEAD_EPOCH lowers it */
};

/*
 * The epoch's key: HKDF-Expand(secret, label | u32 epoch, 16), which for
 * one output block is HMAC-SHA256(secret, info | 0x01) truncated.
 */
static int
lc_aead_rekey(struct lc_aead *a)
{
	uint8_t info[sizeof(lc_aead_key_label) - 1 + 4 + 1];
	uint8_t t[32];
	unsigned int tl = 0;
	size_t ll = sizeof(lc_aead_key_label) - 1;
	int ok;

	memcpy(info, lc_aead_key_label, ll);
	lc_poke_u32(info + ll, a->epoch);
	info[ll + 4] = 0x01;
	ok = HMAC(EVP_sha256(), a->secret, LC_AEAD_SECRET_LEN, info,
	    sizeof(info), t, &tl) != NULL && tl == sizeof(t) &&
	    EVP_CipherInit_ex(a->ctx, EVP_aes_128_gcm(), NULL, t, NULL,
	    a->seal) == 1;
	OPENSSL_cleanse(t, sizeof(t));
	a->epoch_bytes = 0;
	return ok ? 0 : -LC_ERR_INTERNAL;
}

int
lc_aead_epoch(uint64_t *out, struct lc_err *e)
{
	return lc_setting_uint("AEAD_EPOCH", LC_AEAD_EPOCH_MIN,
	    LC_AEAD_EPOCH_BYTES, LC_AEAD_EPOCH_BYTES, out, e);
}

int
lc_aead_new(const uint8_t secret[LC_AEAD_SECRET_LEN], int seal,
    struct lc_aead **out)
{
	struct lc_aead *a;
	struct lc_err e;
	uint64_t epoch;
	int r;

	*out = NULL;
	if ((r = lc_aead_epoch(&epoch, &e)) != 0)
		return r;
	if ((a = lc_secmem_alloc(sizeof(*a))) == NULL)
		return -LC_ERR_NOMEM;
	a->seal = seal ? 1 : 0;
	a->epoch_max = epoch;
	memcpy(a->secret, secret, LC_AEAD_SECRET_LEN);
	if ((a->ctx = EVP_CIPHER_CTX_new()) == NULL ||
	    lc_aead_rekey(a) != 0) {
		lc_aead_free(a);
		return -LC_ERR_INTERNAL;
	}
	*out = a;
	return 0;
}

void
lc_aead_free(struct lc_aead *a)
{
	if (a == NULL)
		return;
	EVP_CIPHER_CTX_free(a->ctx);	/* cleanses the key schedule */
	lc_secmem_free(a, sizeof(*a));	/* wipes the secret */
}

/* Set the nonce for the next frame and feed the associated data. */
static int
lc_aead_begin(struct lc_aead *a, const uint8_t *aad, size_t aadlen,
    size_t n)
{
	uint8_t nonce[LC_AEAD_NONCE_LEN];
	int outl;

	if (a->dead || a->seq == UINT64_MAX || n > INT_MAX ||
	    aadlen > INT_MAX)
		return -LC_ERR_INTERNAL;
	if (a->epoch_bytes >= a->epoch_max) {
		if (a->epoch == UINT32_MAX)
			return -LC_ERR_INTERNAL;
		a->epoch++;
		if (lc_aead_rekey(a) != 0)
			return -LC_ERR_INTERNAL;
	}
	lc_poke_u32(nonce, 0);
	lc_poke_u64(nonce + 4, a->seq);
	if (EVP_CipherInit_ex(a->ctx, NULL, NULL, NULL, nonce, a->seal) != 1 ||
	    (aadlen > 0 && EVP_CipherUpdate(a->ctx, NULL, &outl, aad,
	    (int)aadlen) != 1))
		return -LC_ERR_INTERNAL;
	return 0;
}

/* The frame is done: the counter (and the epoch's byte count) move on. */
static void
lc_aead_next(struct lc_aead *a, size_t n)
{
	a->seq++;
	a->epoch_bytes += n;
}

int
lc_aead_seal(struct lc_aead *a, const uint8_t *aad, size_t aadlen,
    uint8_t *p, size_t n, uint8_t tag[LC_AEAD_TAG_LEN])
{
	uint8_t fin[LC_AEAD_TAG_LEN];	/* GCM's final writes nothing */
	int outl = 0, fl = 0;

	if (!a->seal || lc_aead_begin(a, aad, aadlen, n) != 0)
		goto fail;
	if ((n > 0 && (EVP_EncryptUpdate(a->ctx, p, &outl, p, (int)n) != 1 ||
	    (size_t)outl != n)) ||
	    EVP_EncryptFinal_ex(a->ctx, fin, &fl) != 1 || fl != 0 ||
	    EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_GCM_GET_TAG, LC_AEAD_TAG_LEN,
	    tag) != 1)
		goto fail;
	lc_aead_next(a, n);
	return 0;
 fail:
	a->dead = 1;
	return -LC_ERR_INTERNAL;
}

int
lc_aead_open(struct lc_aead *a, const uint8_t *aad, size_t aadlen,
    uint8_t *p, size_t n, const uint8_t tag[LC_AEAD_TAG_LEN])
{
	uint8_t t[LC_AEAD_TAG_LEN], fin[LC_AEAD_TAG_LEN];
	int outl = 0, fl = 0;

	if (a->dead)
		return -LC_ERR_INTEGRITY;
	if (a->seal || lc_aead_begin(a, aad, aadlen, n) != 0) {
		a->dead = 1;
		return -LC_ERR_INTERNAL;
	}
	memcpy(t, tag, sizeof(t));	/* the ctrl takes a non-const buffer */
	if ((n > 0 && (EVP_DecryptUpdate(a->ctx, p, &outl, p, (int)n) != 1 ||
	    (size_t)outl != n)) ||
	    EVP_CIPHER_CTX_ctrl(a->ctx, EVP_CTRL_GCM_SET_TAG, LC_AEAD_TAG_LEN,
	    t) != 1) {
		a->dead = 1;
		return -LC_ERR_INTERNAL;
	}
	if (EVP_DecryptFinal_ex(a->ctx, fin, &fl) != 1 || fl != 0) {
		a->dead = 1;	/* a forged or misplaced frame */
		return -LC_ERR_INTEGRITY;
	}
	lc_aead_next(a, n);
	return 0;
}

uint64_t
lc_aead_count(const struct lc_aead *a)
{
	return a->seq;
}
