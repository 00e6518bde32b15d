/*
 * TLS 1.3 for the data streams, keyed by an external pre-shared key.
 *
 * The PSK is derived from the per-transfer key with HKDF-SHA256 (label
 * "lanecp tls psk v1"), so there are no certificates to manage and only a
 * peer that received the key over SSH can complete a handshake.  Cipher:
 * TLS_AES_128_GCM_SHA256 (AES-NI), key exchange psk_dhe_ke (X25519), no
 * session tickets, no early data: every handshake is fresh, so a recorded
 * one cannot be replayed.  Any change to a record (a flipped byte, a
 * replayed, dropped or reordered record) fails its AEAD tag and ends the
 * stream with -LC_ERR_INTEGRITY; no byte of a bad record is ever returned.
 */
#ifndef LANECP_TLS_H
#define LANECP_TLS_H

#include <stdint.h>

#include "aead.h"
#include "err.h"
#include "conn.h"
#include "lc_limits.h"

struct lc_tls;

/*
 * Initialise OpenSSL for an agent process, before any other OpenSSL call:
 * no configuration file is read (OPENSSL_CONF and openssl.cnf are not
 * looked at), so no provider, engine or other module is loaded; the
 * built-in default provider has all the agent uses.  A pushed agent is
 * thereby the same program on every host, whatever its OpenSSL setup,
 * and loads no shared object (see cmd/agent_nodl.c).  0, or
 * -LC_ERR_INTERNAL when OpenSSL cannot be initialised.
 */
int lc_tls_init_agent(void);

/* One context per transfer and role. */
int lc_tls_new(int server, const uint8_t key[LC_KEY_LEN],
    struct lc_tls **out, struct lc_err *e);
void lc_tls_free(struct lc_tls *t);

/*
 * Run the handshake on c->fd (a blocking socket; the caller sets the
 * timeouts).  On success c->ssl is set and lc_conn_* I/O goes through TLS.
 * Failure: -LC_ERR_STREAM (handshake failed, e.g. wrong key) or
 * -LC_ERR_TIMEOUT.
 */
int lc_tls_accept(struct lc_tls *t, struct lc_conn *c, struct lc_err *e);
int lc_tls_connect(struct lc_tls *t, struct lc_conn *c, struct lc_err *e);

/*
 * The bulk secret of one stream and direction from a finished handshake
 * (RFC 8446 7.5 exporter; label "lanecp bulk v1", context "LCBK" u32 idx
 * u8 dir; aead.h).  Both ends get the same 32 bytes; every handshake (and
 * so every connection, first or reconnect) gives new ones, as the
 * exporter secret comes from that handshake's fresh ephemeral DH.  The
 * caller cleanses out.  0, or -LC_ERR_INTERNAL.
 */
int lc_tls_export_bulk(struct ssl_st *ssl, uint32_t idx, unsigned dir,
    uint8_t out[LC_AEAD_SECRET_LEN]);

#endif
