/*
 * The per-stream handshake (stream.h): the HMAC challenge-response of a
 * plain TCP stream, the stream's name inside TLS, the switch to the bulk
 * AEAD, and how many handshakes a host may hold at once.
 */
#include "stream.h"
#include "aead.h"
#include "buf.h"
#include "tls.h"
#include "clock.h"
#include "fdio.h"
#include "log.h"
#include "thread.h"
#include "wake.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <limits.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#define LC_NONCE_LEN LC_HS_NONCE_LEN
#define LC_MAC_LEN LC_HS_MAC_LEN
#define LC_HS_VERSION 1

int
lc_hs_admit(const struct lc_hs_slot *p, size_t n, const char *host,
    uint32_t per_host, int *why)
{
	size_t used = 0, mine = 0;
	int old_mine = -1, old_all = -1;

	*why = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i].host == NULL)
			continue;
		used++;
		if (old_all < 0 || p[i].t0 < p[old_all].t0)
			old_all = (int)i;
		if (strcmp(p[i].host, host) != 0)
			continue;
		mine++;
		if (old_mine < 0 || p[i].t0 < p[old_mine].t0)
			old_mine = (int)i;
	}
	if (mine >= per_host && old_mine >= 0) {
		*why = LC_HS_PER_HOST;
		return old_mine;
	}
	if (used >= n && old_all >= 0) {
		*why = LC_HS_ALL_BUSY;
		return old_all;
	}
	return -1;
}

/* Map a failed SSL_read/SSL_write to an error. */

/* ---- handshake ---- */

static const char lc_hs_client_label[] = "lanecp data client v1";
static const char lc_hs_server_label[] = "lanecp data server v1";

static int
lc_hs_mac(const uint8_t key[LC_KEY_LEN], const char *label,
    const uint8_t nonce_s[LC_NONCE_LEN], const uint8_t nonce_c[LC_NONCE_LEN],
    uint32_t idx, uint8_t mac[LC_MAC_LEN])
{
	uint8_t msg[sizeof(lc_hs_client_label) + 2 * LC_NONCE_LEN + 4];
	size_t ll = strlen(label), off = 0;
	unsigned int maclen = 0;

	memcpy(msg, label, ll);
	off += ll;
	memcpy(msg + off, nonce_s, LC_NONCE_LEN);
	off += LC_NONCE_LEN;
	memcpy(msg + off, nonce_c, LC_NONCE_LEN);
	off += LC_NONCE_LEN;
	lc_poke_u32(msg + off, idx);
	off += 4;
	if (HMAC(EVP_sha256(), key, LC_KEY_LEN, msg, off, mac, &maclen) ==
	    NULL || maclen != LC_MAC_LEN)
		return -LC_ERR_INTERNAL;
	return 0;
}

/* ---- handshake messages: pure decoders ---- */

int
lc_stream_hs_get_hello(const uint8_t *p, size_t n,
    uint8_t nonce_s[LC_HS_NONCE_LEN], struct lc_err *e)
{
	memset(nonce_s, 0, LC_HS_NONCE_LEN);
	if (n != LC_HS_HELLO_LEN || memcmp(p, "LCDS", 4) != 0 ||
	    p[4] != LC_HS_VERSION)
		return lc_err_set(e, LC_ERR_STREAM, "not a lanecp sink (or "
		    "another version)");
	if (p[5] != 0 || p[6] != 0 || p[7] != 0)
		return lc_err_set(e, LC_ERR_STREAM, "bad sink hello flags");
	memcpy(nonce_s, p + 8, LC_HS_NONCE_LEN);
	return 0;
}

int
lc_stream_hs_put_resp(const uint8_t key[LC_KEY_LEN],
    const uint8_t nonce_s[LC_HS_NONCE_LEN],
    const uint8_t nonce_c[LC_HS_NONCE_LEN], uint32_t idx,
    uint8_t out[LC_HS_RESP_LEN])
{
	memcpy(out, "LCDC", 4);
	lc_poke_u32(out + 4, idx);
	memcpy(out + 8, nonce_c, LC_HS_NONCE_LEN);
	return lc_hs_mac(key, lc_hs_client_label, nonce_s, nonce_c, idx,
	    out + 8 + LC_HS_NONCE_LEN);
}

int
lc_stream_hs_put_fin(const uint8_t key[LC_KEY_LEN],
    const uint8_t nonce_s[LC_HS_NONCE_LEN],
    const uint8_t nonce_c[LC_HS_NONCE_LEN], uint32_t idx,
    uint8_t out[LC_HS_FIN_LEN])
{
	memcpy(out, "LCDA", 4);
	return lc_hs_mac(key, lc_hs_server_label, nonce_s, nonce_c, idx,
	    out + 4);
}

int
lc_stream_hs_check_resp(const uint8_t key[LC_KEY_LEN],
    const uint8_t nonce_s[LC_HS_NONCE_LEN], const uint8_t *p, size_t n,
    uint32_t nstreams, uint32_t *idx, uint8_t nonce_c[LC_HS_NONCE_LEN],
    struct lc_err *e)
{
	uint8_t want[LC_HS_MAC_LEN];
	uint32_t i;
	int ok;

	*idx = 0;
	memset(nonce_c, 0, LC_HS_NONCE_LEN);
	if (n != LC_HS_RESP_LEN || memcmp(p, "LCDC", 4) != 0)
		return lc_err_set(e, LC_ERR_STREAM, "not a lanecp data stream");
	i = lc_peek_u32(p + 4);
	if (i >= nstreams)
		return lc_err_set(e, LC_ERR_STREAM, "bad stream index %u", i);
	if (lc_hs_mac(key, lc_hs_client_label, nonce_s, p + 8, i, want) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "HMAC failed");
	ok = CRYPTO_memcmp(want, p + 8 + LC_HS_NONCE_LEN, LC_HS_MAC_LEN) == 0;
	OPENSSL_cleanse(want, sizeof(want));
	if (!ok)
		return lc_err_set(e, LC_ERR_STREAM,
		    "authentication failed (wrong transfer key)");
	*idx = i;
	memcpy(nonce_c, p + 8, LC_HS_NONCE_LEN);
	return 0;
}

int
lc_stream_hs_check_fin(const uint8_t key[LC_KEY_LEN],
    const uint8_t nonce_s[LC_HS_NONCE_LEN],
    const uint8_t nonce_c[LC_HS_NONCE_LEN], uint32_t idx, const uint8_t *p,
    size_t n, struct lc_err *e)
{
	uint8_t want[LC_HS_MAC_LEN];
	int ok;

	if (n != LC_HS_FIN_LEN || memcmp(p, "LCDA", 4) != 0)
		return lc_err_set(e, LC_ERR_STREAM, "bad sink proof");
	if (lc_hs_mac(key, lc_hs_server_label, nonce_s, nonce_c, idx,
	    want) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "HMAC failed");
	ok = CRYPTO_memcmp(want, p + 4, LC_HS_MAC_LEN) == 0;
	OPENSSL_cleanse(want, sizeof(want));
	if (!ok)
		return lc_err_set(e, LC_ERR_STREAM, "failed to prove the "
		    "transfer key");
	return 0;
}

int
lc_stream_hs_get_ident(const uint8_t *p, size_t n, uint32_t nstreams,
    uint32_t *idx, struct lc_err *e)
{
	*idx = 0;
	if (n != LC_HS_IDENT_LEN || memcmp(p, "LCDI", 4) != 0 ||
	    lc_peek_u32(p + 4) >= nstreams)
		return lc_err_set(e, LC_ERR_STREAM, "bad stream announcement");
	*idx = lc_peek_u32(p + 4);
	return 0;
}

/* ---- handshake on a connection ---- */

/*
 * After the TLS handshake and the stream's name: leave the record layer.
 * The source keeps a sealer, the sink an opener for frames toward the
 * sink, keyed from this handshake's exporter for this stream; the TLS
 * state is freed (nothing more goes through it), and every later byte on
 * the socket is an AEAD frame.  The sink reads the name with read-ahead
 * off, so no frame bytes can be left inside OpenSSL: checked anyway.
 */
static int
lc_conn_go_bulk(struct lc_conn *c, int server, struct lc_err *e)
{
	uint8_t secret[LC_AEAD_SECRET_LEN];
	struct lc_aead *a = NULL;
	int r;

	if (server && (SSL_pending(c->ssl) != 0 || SSL_has_pending(c->ssl)))
		return lc_err_set(e, LC_ERR_STREAM, "data stream from %s: "
		    "bytes after the stream name inside TLS", c->peer);
	if ((r = lc_tls_export_bulk(c->ssl, c->idx, LC_AEAD_DIR_TO_SINK,
	    secret)) == 0)
		r = lc_aead_new(secret, !server, &a);
	OPENSSL_cleanse(secret, sizeof(secret));
	if (r != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "cannot derive the bulk "
		    "keys of data stream %u", c->idx);
	if (server)
		c->rx = a;
	else
		c->tx = a;
	SSL_free(c->ssl);
	c->ssl = NULL;
	return 0;
}

/* Over TLS: the client names its stream inside the authenticated channel. */
static int
lc_stream_accept_tls(struct lc_conn *c, uint32_t nstreams, struct lc_err *e)
{
	uint8_t m[LC_HS_IDENT_LEN];
	struct lc_err sub;
	uint32_t idx;
	int r;

	lc_err_clear(&sub);
	if (lc_conn_read_full(c, m, sizeof(m), &sub) != 0)
		return lc_err_set(e, LC_ERR_STREAM, "handshake: %s", sub.msg);
	if ((r = lc_stream_hs_get_ident(m, sizeof(m), nstreams, &idx, e)) != 0)
		return r;
	c->idx = idx;
	return lc_conn_go_bulk(c, 1, e);
}

int
lc_stream_accept_auth(struct lc_conn *c, const uint8_t key[LC_KEY_LEN],
    uint32_t nstreams, struct lc_err *e)
{
	uint8_t hello[LC_HS_HELLO_LEN];
	uint8_t resp[LC_HS_RESP_LEN];
	uint8_t fin[LC_HS_FIN_LEN];
	uint8_t nonce_c[LC_HS_NONCE_LEN];
	struct lc_err sub;
	uint32_t idx;
	int r;

	if (c->ssl != NULL)
		return lc_stream_accept_tls(c, nstreams, e);
	lc_err_clear(&sub);
	memcpy(hello, "LCDS", 4);
	hello[4] = LC_HS_VERSION;
	hello[5] = 0;
	hello[6] = hello[7] = 0;
	if (RAND_bytes(hello + 8, LC_HS_NONCE_LEN) != 1)
		return lc_err_set(e, LC_ERR_INTERNAL, "RAND_bytes failed");
	if ((r = lc_conn_write_all(c, hello, sizeof(hello), &sub)) != 0 ||
	    (r = lc_conn_read_full(c, resp, sizeof(resp), &sub)) != 0)
		return lc_err_set(e, LC_ERR_STREAM, "handshake: %s", sub.msg);
	if ((r = lc_stream_hs_check_resp(key, hello + 8, resp, sizeof(resp),
	    nstreams, &idx, nonce_c, e)) != 0)
		return r;
	if (lc_stream_hs_put_fin(key, hello + 8, nonce_c, idx, fin) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "HMAC failed");
	if ((r = lc_conn_write_all(c, fin, sizeof(fin), &sub)) != 0)
		return lc_err_set(e, LC_ERR_STREAM, "handshake: %s", sub.msg);
	c->idx = idx;
	return 0;
}

int
lc_stream_connect_auth(struct lc_conn *c, const uint8_t key[LC_KEY_LEN],
    uint32_t idx, struct lc_err *e)
{
	uint8_t hello[LC_HS_HELLO_LEN];
	uint8_t resp[LC_HS_RESP_LEN];
	uint8_t fin[LC_HS_FIN_LEN];
	uint8_t nonce_s[LC_HS_NONCE_LEN], nonce_c[LC_HS_NONCE_LEN];
	struct lc_err sub;
	int r;

	lc_err_clear(&sub);
	if (c->ssl != NULL) {
		memcpy(hello, "LCDI", 4);
		lc_poke_u32(hello + 4, idx);
		if (lc_conn_write_all(c, hello, LC_HS_IDENT_LEN, &sub) != 0)
			return lc_err_set(e, LC_ERR_STREAM,
			    "data stream %u handshake: %s", idx, sub.msg);
		c->idx = idx;
		return lc_conn_go_bulk(c, 0, e);
	}
	if ((r = lc_conn_read_full(c, hello, sizeof(hello), &sub)) != 0)
		return lc_err_set(e, LC_ERR_STREAM,
		    "data stream %u handshake: %s", idx, sub.msg);
	if (lc_stream_hs_get_hello(hello, sizeof(hello), nonce_s, &sub) != 0)
		return lc_err_set(e, LC_ERR_STREAM, "data stream %u: %s: %s",
		    idx, c->peer, sub.msg);
	if (RAND_bytes(nonce_c, LC_HS_NONCE_LEN) != 1)
		return lc_err_set(e, LC_ERR_INTERNAL, "RAND_bytes failed");
	if (lc_stream_hs_put_resp(key, nonce_s, nonce_c, idx, resp) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "HMAC failed");
	if ((r = lc_conn_write_all(c, resp, sizeof(resp), &sub)) != 0 ||
	    (r = lc_conn_read_full(c, fin, sizeof(fin), &sub)) != 0)
		return lc_err_set(e, LC_ERR_STREAM,
		    "data stream %u handshake: %s", idx, sub.msg);
	if (lc_stream_hs_check_fin(key, nonce_s, nonce_c, idx, fin,
	    sizeof(fin), &sub) != 0)
		return lc_err_set(e, LC_ERR_STREAM, "data stream %u: %s %s",
		    idx, c->peer, sub.msg);
	c->idx = idx;
	return 0;
}

