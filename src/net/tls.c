#include "tls.h"
#include "buf.h"
#include "secmem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/ssl.h>

#define LC_TLS_PSK_LEN 32
#define LC_TLS_READ_BUF (256u << 10)

static const char lc_tls_identity[] = "lanecp-v1";
static const char lc_tls_label[] = "lanecp tls psk v1";
static const unsigned char lc_tls_aes128gcm[] = { 0x13, 0x01 };

/* on a page of its own, left out of core dumps (secmem.h) */
struct lc_tls {
	SSL_CTX *ctx;
	uint8_t psk[LC_TLS_PSK_LEN];
};

static int
lc_tls_derive(const uint8_t key[LC_KEY_LEN], uint8_t out[LC_TLS_PSK_LEN])
{
	EVP_PKEY_CTX *kctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
	size_t len = LC_TLS_PSK_LEN;
	int ok;

	ok = kctx != NULL && EVP_PKEY_derive_init(kctx) > 0 &&
	    EVP_PKEY_CTX_set_hkdf_md(kctx, EVP_sha256()) > 0 &&
	    EVP_PKEY_CTX_set1_hkdf_key(kctx, key, LC_KEY_LEN) > 0 &&
	    EVP_PKEY_CTX_add1_hkdf_info(kctx,
		(const unsigned char *)lc_tls_label, sizeof(lc_tls_label) - 1) >
	    0 && EVP_PKEY_derive(kctx, out, &len) > 0 && len == LC_TLS_PSK_LEN;
	EVP_PKEY_CTX_free(kctx);
	return ok ? 0 : -LC_ERR_INTERNAL;
}

static SSL_SESSION *
lc_tls_session(SSL *ssl)
{
	struct lc_tls *t = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
	const SSL_CIPHER *cipher = SSL_CIPHER_find(ssl, lc_tls_aes128gcm);
	SSL_SESSION *s;

	if (t == NULL || cipher == NULL || (s = SSL_SESSION_new()) == NULL)
		return NULL;
	if (!SSL_SESSION_set1_master_key(s, t->psk, sizeof(t->psk)) ||
	    !SSL_SESSION_set_cipher(s, cipher) ||
	    !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
		SSL_SESSION_free(s);
		return NULL;
	}
	return s;
}

static int
lc_tls_use_session(SSL *ssl, const EVP_MD *md, const unsigned char **id,
    size_t *idlen, SSL_SESSION **sess)
{
	SSL_SESSION *s = lc_tls_session(ssl);

	*sess = NULL;
	if (s == NULL)
		return 0;
	if (md != NULL && md != SSL_CIPHER_get_handshake_digest(
	    SSL_SESSION_get0_cipher(s))) {
		SSL_SESSION_free(s);	/* after HRR with another hash */
		return 1;
	}
	*sess = s;
	*id = (const unsigned char *)lc_tls_identity;
	*idlen = sizeof(lc_tls_identity) - 1;
	return 1;
}

static int
lc_tls_find_session(SSL *ssl, const unsigned char *id, size_t idlen,
    SSL_SESSION **sess)
{
	*sess = NULL;
	if (idlen != sizeof(lc_tls_identity) - 1 ||
	    memcmp(id, lc_tls_identity, idlen) != 0)
		return 1;	/* unknown identity: no PSK, handshake fails */
	*sess = lc_tls_session(ssl);
	return *sess != NULL;
}

int
lc_tls_init_agent(void)
{
	/* NO_LOAD_CONFIG: the once-only configuration step runs as "none",
	 * so a later implicit initialisation (SSL_CTX_new) cannot load it */
	if (OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL) != 1 ||
	    OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG, NULL) != 1)
		return -LC_ERR_INTERNAL;
	return 0;
}

int
lc_tls_new(int server, const uint8_t key[LC_KEY_LEN], struct lc_tls **out,
    struct lc_err *e)
{
	struct lc_tls *t;

	*out = NULL;
	if ((t = lc_secmem_alloc(sizeof(*t))) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	if (lc_tls_derive(key, t->psk) != 0)
		goto fail;
	t->ctx = SSL_CTX_new(server ? TLS_server_method() :
	    TLS_client_method());
	if (t->ctx == NULL ||
	    !SSL_CTX_set_min_proto_version(t->ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_max_proto_version(t->ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_ciphersuites(t->ctx, "TLS_AES_128_GCM_SHA256") ||
	    !SSL_CTX_set_num_tickets(t->ctx, 0))
		goto fail;
	SSL_CTX_set_app_data(t->ctx, t);
	SSL_CTX_set_session_cache_mode(t->ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(t->ctx, SSL_OP_NO_TICKET);
	SSL_CTX_set_max_early_data(t->ctx, 0);
	/*
	 * No read-ahead: it saves one recv(2) per 16 KiB record (header and
	 * body are read apart) but copies every record once more inside
	 * OpenSSL; on loopback that doubled the time in memmove and was
	 * slower overall.  The read buffer still fits a whole record.
	 */
	SSL_CTX_set_read_ahead(t->ctx, 0);
	SSL_CTX_set_default_read_buffer_len(t->ctx, LC_TLS_READ_BUF);
	if (server)
		SSL_CTX_set_psk_find_session_callback(t->ctx,
		    lc_tls_find_session);
	else
		SSL_CTX_set_psk_use_session_callback(t->ctx,
		    lc_tls_use_session);
	*out = t;
	return 0;
 fail:
	lc_tls_free(t);
	return lc_err_set(e, LC_ERR_INTERNAL, "cannot set up TLS: %s",
	    ERR_reason_error_string(ERR_get_error()));
}

void
lc_tls_free(struct lc_tls *t)
{
	if (t == NULL)
		return;
	SSL_CTX_free(t->ctx);
	lc_secmem_free(t, sizeof(*t));	/* wipes the PSK */
}

static int
lc_tls_handshake(struct lc_tls *t, struct lc_conn *c, int server,
    struct lc_err *e)
{
	struct lc_err sub;
	SSL *ssl;
	unsigned long err;
	int r;

	lc_err_clear(&sub);
	ERR_clear_error();
	if ((ssl = SSL_new(t->ctx)) == NULL || !SSL_set_fd(ssl, c->fd)) {
		SSL_free(ssl);
		return lc_err_set(e, LC_ERR_INTERNAL, "SSL_new failed");
	}
	/*
	 * Under the connection's deadline (lc_conn_set_deadline) the socket
	 * is non-blocking: each time OpenSSL wants bytes or room, wait for
	 * them only until the deadline, so the handshake as a whole is
	 * bounded, not each read.
	 */
	for (;;) {
		errno = 0;
		r = server ? SSL_accept(ssl) : SSL_connect(ssl);
		if (r == 1) {
			c->ssl = ssl;
			return 0;
		}
		r = SSL_get_error(ssl, r);
		if ((r != SSL_ERROR_WANT_READ && r != SSL_ERROR_WANT_WRITE) ||
		    c->deadline_ms == 0)
			break;
		if ((r = lc_conn_wait(c, r == SSL_ERROR_WANT_WRITE,
		    &sub)) != 0) {
			SSL_free(ssl);
			ERR_clear_error();
			return lc_err_set(e, -r, "TLS handshake %s", sub.msg);
		}
	}
	err = ERR_peek_last_error();
	SSL_free(ssl);
	ERR_clear_error();
	if (r == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK))
		return lc_err_set(e, LC_ERR_TIMEOUT, "TLS handshake timed out");
	if (err != 0)
		return lc_err_set(e, LC_ERR_STREAM, "TLS handshake failed: %s",
		    ERR_reason_error_string(err) ? ERR_reason_error_string(err) :
		    "unknown error");
	if (r == SSL_ERROR_SYSCALL && errno != 0)
		return lc_err_sys(e, LC_ERR_STREAM, errno,
		    "TLS handshake failed");
	return lc_err_set(e, LC_ERR_STREAM, "TLS handshake failed: "
	    "connection closed");
}

int
lc_tls_accept(struct lc_tls *t, struct lc_conn *c, struct lc_err *e)
{
	return lc_tls_handshake(t, c, 1, e);
}

int
lc_tls_connect(struct lc_tls *t, struct lc_conn *c, struct lc_err *e)
{
	return lc_tls_handshake(t, c, 0, e);
}

static const char lc_tls_bulk_label[] = "lanecp bulk v1";

int
lc_tls_export_bulk(struct ssl_st *ssl, uint32_t idx, unsigned dir,
    uint8_t out[LC_AEAD_SECRET_LEN])
{
	uint8_t ctx[9];

	memcpy(ctx, "LCBK", 4);
	lc_poke_u32(ctx + 4, idx);
	ctx[8] = (uint8_t)dir;
	if (SSL_version(ssl) != TLS1_3_VERSION ||
	    SSL_export_keying_material(ssl, out, LC_AEAD_SECRET_LEN,
	    lc_tls_bulk_label, sizeof(lc_tls_bulk_label) - 1, ctx, sizeof(ctx),
	    1) != 1) {
		OPENSSL_cleanse(out, LC_AEAD_SECRET_LEN);
		ERR_clear_error();
		return -LC_ERR_INTERNAL;
	}
	return 0;
}
