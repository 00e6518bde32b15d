/*
 * SSH connection: the host key (see ssh_int.h).  Before the handshake
 * the server is asked first for a key type known_hosts has for the host;
 * after it, the key is checked against RevokedHostKeys, then known_hosts
 * (lanecp/knownhosts.h), as StrictHostKeyChecking says.
 */
#include "err.h"
#include "knownhosts.h"
#include "log.h"
#include "revokedkeys.h"
#include "sshconf.h"
#include "ssh_int.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <libssh2.h>

/* ssh's default host key algorithms that libssh2 1.10 implements. */
static const char *const lc_ssh_hostkey_algs[] = {
	"ssh-ed25519",
	"ecdsa-sha2-nistp256",
	"ecdsa-sha2-nistp384",
	"ecdsa-sha2-nistp521",
	"rsa-sha2-512",
	"rsa-sha2-256",
};

/* Ask for a host key type known_hosts has for this host first. */
int
lc__ssh_hostkey_prefs(struct lc_ssh *s, struct lc_knownhosts *kh,
    const char *const *names, size_t nnames, struct lc_err *e)
{
	const char *algs[sizeof(lc_ssh_hostkey_algs) /
	    sizeof(lc_ssh_hostkey_algs[0])];
	const char **sup = NULL;
	char pref[512];
	size_t i, nalgs = 0;
	int nsup, j, nknown;

	nsup = libssh2_session_supported_algs(s->sess,
	    LIBSSH2_METHOD_HOSTKEY, &sup);
	for (i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		for (j = 0; j < nsup; j++) {
			if (strcmp(sup[j], lc_ssh_hostkey_algs[i]) == 0) {
				algs[nalgs++] = lc_ssh_hostkey_algs[i];
				break;
			}
		}
	}
	if (nsup > 0)
		libssh2_free(s->sess, sup);
	if (nalgs == 0)
		return lc_err_set(e, LC_ERR_INTERNAL,
		    "libssh2 supports none of the host key algorithms");
	nknown = lc_knownhosts_order_algs(kh, names, nnames, algs, nalgs,
	    pref, sizeof(pref));
	if (nknown < 0)
		return lc_err_set(e, LC_ERR_INTERNAL, "host key algorithms");
	lc_log_debug("host key algorithms (%d known): %s", nknown, pref);
	/* known_hosts vouches for the host only with keys libssh2 cannot ask
	   for (RSA without rsa-sha2 in libssh2 1.10): ssh would connect */
	for (i = 0; nknown == 0 && s->kh_only == NULL &&
	     i < sizeof(algs) / sizeof(algs[0]);
	     i++) {
		const char *alg = lc_ssh_hostkey_algs[i];
		char one[64];
		size_t k;

		for (k = 0; k < nalgs && strcmp(algs[k], alg) != 0; k++)
			;
		if (k == nalgs &&
		    lc_knownhosts_order_algs(kh, names, nnames, &alg, 1, one,
			sizeof(one)) == 1)
			s->kh_only = alg;
	}
	if (libssh2_session_method_pref(s->sess, LIBSSH2_METHOD_HOSTKEY,
	    pref) != 0)
		return lc_err_set(e, LC_ERR_INTERNAL,
		    "setting host key algorithms: %s", lc__ssh_liberr(s));
	return 0;
}

void
lc__ssh_khfiles(const struct lc_sshconf *c, const char *home,
    struct lc_ssh_khfiles *f)
{
	static const char *const global_def[] = {
		"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2",
	};
	size_t i;

	memset(f, 0, sizeof(*f));
	if (c->n_user_known_hosts > 0) {
		for (i = 0; i < c->n_user_known_hosts &&
		    i < LC_SSHCONF_MAX_FILES; i++)
			f->user[f->nuser++] = c->user_known_hosts[i];
	} else if (!c->user_known_hosts_none) {
		/* a name cut short would be another file: leave it out */
		if ((size_t)snprintf(f->defaults[0], sizeof(f->defaults[0]),
		    "%s/.ssh/known_hosts", home) < sizeof(f->defaults[0]))
			f->user[f->nuser++] = f->defaults[0];
		if ((size_t)snprintf(f->defaults[1], sizeof(f->defaults[1]),
		    "%s/.ssh/known_hosts2", home) < sizeof(f->defaults[1]))
			f->user[f->nuser++] = f->defaults[1];
	}
	for (i = 0; i < f->nuser; i++)
		f->all[f->nall++] = f->user[i];
	if (c->n_global_known_hosts > 0) {
		for (i = 0; i < c->n_global_known_hosts &&
		    i < LC_SSHCONF_MAX_FILES; i++)
			f->all[f->nall++] = c->global_known_hosts[i];
	} else if (!c->global_known_hosts_none) {
		f->all[f->nall++] = global_def[0];
		f->all[f->nall++] = global_def[1];
	}
}

/*
 * RevokedHostKeys, checked before known_hosts and whatever
 * StrictHostKeyChecking says, as ssh does; a file that cannot be used
 * refuses the host (ssh refuses every host key then).
 */
static int
lc_ssh_revoked_file(const struct lc_sshconf *c, const char *name,
    const char *label, const char *fp, const unsigned char *key, size_t len,
    struct lc_err *e)
{
	struct lc_revoked_result rr;
	struct lc_err e2;
	int r;

	lc_err_clear(&e2);
	if ((r = lc_revokedkeys_check(c->revoked_host_keys, key, len, &rr,
	    &e2)) != 0)
		return lc_err_set(e, r == -LC_ERR_NOMEM ? LC_ERR_NOMEM :
		    LC_ERR_HOSTKEY, "cannot check the host key of %s against "
		    "%.*s; refusing it, as ssh does", name,
		    (int)(LC_ERR_MSG_MAX - 128), e2.msg);
	if (!rr.revoked)
		return 0;
	if (rr.krl)
		return lc_err_set(e, LC_ERR_HOSTKEY, "REVOKED HOST KEY for %s: "
		    "server offers %s key %s, which the RevokedHostKeys KRL %s "
		    "revokes; refusing to connect", name, label, fp,
		    c->revoked_host_keys);
	return lc_err_set(e, LC_ERR_HOSTKEY, "REVOKED HOST KEY for %s: server "
	    "offers %s key %s, which RevokedHostKeys %s line %lu lists; "
	    "refusing to connect", name, label, fp, c->revoked_host_keys,
	    rr.line);
}

/*
 * known_hosts: a revoked key is refused in every mode; a known key is
 * accepted; a changed one refused.  An unknown key is refused unless
 * StrictHostKeyChecking is accept-new or no, which record it, also when a
 * @cert-authority line covers the host (as ssh does when the host offers
 * a plain key: lanecp cannot ask for its certificate), with a warning.
 */
int
lc__ssh_verify_host(struct lc_ssh *s, struct lc_knownhosts *kh,
    const struct lc_sshconf *c, const struct lc_ssh_khfiles *f,
    const char *home, const char *const *names, size_t nnames,
    struct lc_err *e)
{
	const unsigned char *key;
	struct lc_kh_result res;
	struct lc_err e2;
	char fp[64];
	const char *label;
	size_t len = 0;
	int type = 0, r;

	key = (const unsigned char *)libssh2_session_hostkey(s->sess, &len,
	    &type);
	if (key == NULL || len == 0)
		return lc_err_set(e, LC_ERR_CONNECT, "%s: no host key: %s",
		    names[0], lc__ssh_liberr(s));
	lc_knownhosts_fingerprint(key, len, fp, sizeof(fp));
	label = lc_knownhosts_type_label(type);
	if (c->revoked_host_keys != NULL && (r = lc_ssh_revoked_file(c,
	    names[0], label, fp, key, len, e)) != 0)
		return r;
	if ((r = lc_knownhosts_check(kh, names, nnames, key, len, type, &res,
	    e)) != 0)
		return r;
	switch (res.status) {
	case LC_KH_REVOKED:
		return lc_err_set(e, LC_ERR_HOSTKEY, "REVOKED HOST KEY for %s: "
		    "server offers %s key %s, which %s line %lu marks as "
		    "revoked (@revoked); refusing to connect", res.name, label,
		    fp, res.file != NULL ? res.file : "known_hosts", res.line);
	case LC_KH_MATCH:
		lc_log_debug("host key %s %s known as %s", label, fp, res.name);
		return 0;
	case LC_KH_CHANGED:
		if (res.file != NULL && res.line > 0)
			return lc_err_set(e, LC_ERR_HOSTKEY,
			    "REMOTE HOST IDENTIFICATION HAS CHANGED for %s: "
			    "server offers %s key %s, %s line %lu has a "
			    "different key; remove it with ssh-keygen -R '%s' "
			    "-f %s if the change is expected", res.name, label,
			    fp, res.file, res.line, res.name, res.file);
		return lc_err_set(e, LC_ERR_HOSTKEY,
		    "REMOTE HOST IDENTIFICATION HAS CHANGED for %s: server "
		    "offers %s key %s, known_hosts has a different key; remove "
		    "it with ssh-keygen -R '%s' if the change is expected",
		    res.name, label, fp, res.name);
	case LC_KH_CA:
		if (c->strict != LC_STRICT_ACCEPT_NEW &&
		    c->strict != LC_STRICT_NO) {
			s->limit = "known_hosts vouches for it only through "
			    "@cert-authority, and libssh2 cannot check host "
			    "certificates";
			return lc_err_set(e, LC_ERR_HOSTKEY, "host key for %s "
			    "is vouched for by a certificate authority "
			    "(@cert-authority in %s line %lu), and lanecp cannot "
			    "check host certificates yet; the host offers %s key "
			    "%s: add it to %s once you have checked it",
			    res.name, res.file, res.line, label, fp,
			    f->nuser > 0 ? f->user[0] : "a known_hosts file");
		}
		lc_log_warn("%s is vouched for by a certificate authority "
		    "(@cert-authority in %s line %lu), and lanecp cannot check "
		    "host certificates; accepting its %s key %s on first use "
		    "(StrictHostKeyChecking %s)", res.name, res.file, res.line,
		    label, fp, c->strict == LC_STRICT_NO ? "no" : "accept-new");
		break;
	case LC_KH_UNKNOWN:
		break;
	}
	if (c->strict != LC_STRICT_ACCEPT_NEW && c->strict != LC_STRICT_NO &&
	    s->kh_only != NULL) {
		s->limit = "known_hosts holds for it only host keys of a type "
			   "libssh2 cannot ask for";
		return lc_err_set(e, LC_ERR_HOSTKEY,
		    "host key for %s: "
		    "known_hosts holds only keys of a type libssh2 %s cannot "
		    "ask for (%s), and the host offers %s key %s, which is "
		    "not known; ssh (--ssh) can check the known one",
		    names[0], libssh2_version(0), s->kh_only, label, fp);
	}
	if (c->strict != LC_STRICT_ACCEPT_NEW && c->strict != LC_STRICT_NO)
		return lc_err_set(e, LC_ERR_HOSTKEY,
		    "host key for %s is not known (%s key %s); add it to %s "
		    "(e.g. with ssh-keyscan) or set StrictHostKeyChecking "
		    "accept-new", names[0], label, fp,
		    f->nuser > 0 ? f->user[0] : "a known_hosts file");
	if (f->nuser == 0) {
		lc_log_warn("accepted new %s host key %s for %s without "
		    "recording it (UserKnownHostsFile none)", label, fp,
		    names[0]);
		return 0;
	}
	lc_err_clear(&e2);
	if (lc_knownhosts_add(f->user[0], home, names[0], key, len,
	    c->hash_known_hosts == 1, &e2) != 0)
		lc_log_warn("accepted new %s host key %s for %s but could not "
		    "record it: %s", label, fp, names[0], e2.msg);
	else
		lc_log_info("permanently added '%s' (%s key %s) to %s",
		    names[0], label, fp, f->user[0]);
	return 0;
}
