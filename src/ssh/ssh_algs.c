/*
 * SSH connection: the key exchange, cipher and MAC algorithms offered (see
 * ssh_int.h).  lanecp offers what ssh offers by default, in ssh's order,
 * less what the linked libssh2 does not implement: built against libssh2
 * 1.11, chacha20-poly1305, AES-GCM and the encrypt-then-MAC MACs come in
 * by themselves; what ssh no longer offers (SHA-1 key exchange, CBC
 * ciphers, MD5 MACs), lanecp does not offer either, though libssh2 has it.
 * The host key algorithms are ssh_hostkey.c's (known_hosts decides their
 * order).
 */
#include "err.h"
#include "log.h"
#include "ssh_int.h"

#include <stdio.h>
#include <string.h>

#include <libssh2.h>

/* OpenSSH 9's defaults (ssh_config(5)), in its order. */
static const char *const lc_ssh_kex[] = {
	"sntrup761x25519-sha512@openssh.com",
	"curve25519-sha256",
	"curve25519-sha256@libssh.org",
	"ecdh-sha2-nistp256",
	"ecdh-sha2-nistp384",
	"ecdh-sha2-nistp521",
	"diffie-hellman-group-exchange-sha256",
	"diffie-hellman-group16-sha512",
	"diffie-hellman-group18-sha512",
	"diffie-hellman-group14-sha256",
	NULL,
};

static const char *const lc_ssh_ciphers[] = {
	"chacha20-poly1305@openssh.com",
	"aes128-ctr",
	"aes192-ctr",
	"aes256-ctr",
	"aes128-gcm@openssh.com",
	"aes256-gcm@openssh.com",
	NULL,
};

static const char *const lc_ssh_macs[] = {
	"umac-64-etm@openssh.com",
	"umac-128-etm@openssh.com",
	"hmac-sha2-256-etm@openssh.com",
	"hmac-sha2-512-etm@openssh.com",
	"hmac-sha1-etm@openssh.com",
	"umac-64@openssh.com",
	"umac-128@openssh.com",
	"hmac-sha2-256",
	"hmac-sha2-512",
	"hmac-sha1",
	NULL,
};

static const struct {
	int method;
	const char *what;
	const char *const *want;
} lc_ssh_methods[] = {
	{ LIBSSH2_METHOD_KEX, "key exchange", lc_ssh_kex },
	{ LIBSSH2_METHOD_CRYPT_CS, "cipher", lc_ssh_ciphers },
	{ LIBSSH2_METHOD_CRYPT_SC, "cipher", lc_ssh_ciphers },
	{ LIBSSH2_METHOD_MAC_CS, "MAC", lc_ssh_macs },
	{ LIBSSH2_METHOD_MAC_SC, "MAC", lc_ssh_macs },
};

int
lc__ssh_algs_list(const char *const *sup, int nsup, const char *const *want,
    char *out, size_t outsz)
{
	size_t len = 0;
	int n = 0;

	out[0] = '\0';
	for (size_t i = 0; want[i] != NULL; i++) {
		int have = 0;

		for (int j = 0; j < nsup && !have; j++)
			have = strcmp(sup[j], want[i]) == 0;
		if (!have)
			continue;
		int w = snprintf(out + len, outsz - len, "%s%s",
		    n > 0 ? "," : "", want[i]);
		if (w < 0 || (size_t)w >= outsz - len)
			return -LC_ERR_TOOBIG;
		len += (size_t)w;
		n++;
	}
	return n;
}

int
lc__ssh_algo_prefs(struct lc_ssh *s, struct lc_err *e)
{
	size_t nmethods = sizeof(lc_ssh_methods) / sizeof(lc_ssh_methods[0]);

	for (size_t i = 0; i < nmethods; i++) {
		const char **sup = NULL;
		char pref[512];
		int nsup, n;

		nsup = libssh2_session_supported_algs(s->sess,
		    lc_ssh_methods[i].method, &sup);
		n = lc__ssh_algs_list(sup, nsup, lc_ssh_methods[i].want, pref,
		    sizeof(pref));
		if (nsup > 0)
			libssh2_free(s->sess, sup);
		if (n <= 0)
			return lc_err_set(e, LC_ERR_INTERNAL,
			    "libssh2 implements no %s algorithm ssh offers",
			    lc_ssh_methods[i].what);
		lc_log_debug("%s algorithms: %s", lc_ssh_methods[i].what, pref);
		n = libssh2_session_method_pref(s->sess,
		    lc_ssh_methods[i].method, pref);
		if (n != 0)
			return lc_err_set(e, LC_ERR_INTERNAL,
			    "setting %s algorithms: %s", lc_ssh_methods[i].what,
			    lc__ssh_liberr(s));
	}
	return 0;
}
