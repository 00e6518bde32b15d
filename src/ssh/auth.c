/*
 * Public key authentication (see lanecp/ssh.h for the order): the agent's
 * keys, then the identity files, asking for passphrases through askpass.c.
 * Every call that waits for the server is bounded by lc__ssh_deadline().
 */
#include "log.h"
#include "sshconf.h"
#include "ssh_int.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libssh2.h>
#include <openssl/crypto.h>

#define LC_SSH_MAX_IDS (LC_SSHCONF_MAX_FILES + 4)
#define LC_SSH_PASS_MAX 1024
#define LC_SSH_PASS_TRIES 3
#define LC_SSH_TRIED_MAX 400

struct lc_ssh_auth {
	struct lc_ssh_id ids[LC_SSH_MAX_IDS];
	size_t nids;
	char tried[LC_SSH_TRIED_MAX];
	const char *user;
	int batch;
	int ids_only;
	/* the method list ("none"), asked for lazily (lc_ssh_auth_gate) */
	struct lc_err *e;
	int tries;	/* publickey attempts made */
	int listed;	/* the list was asked for */
	int none_ok;	/* the server took "none" */
	int err;	/* set: stop with this error (in e) */
};

static void
lc_ssh_id_add(struct lc_ssh_auth *a, const char *path)
{
	size_t i;

	if (path == NULL || *path == '\0' || a->nids >= LC_SSH_MAX_IDS)
		return;
	for (i = 0; i < a->nids; i++)
		if (strcmp(a->ids[i].path, path) == 0)
			return;
	if (strlen(path) >= sizeof(a->ids[0].path)) {
		lc_log_verbose("identity file name too long, ignored");
		return;
	}
	memcpy(a->ids[a->nids].path, path, strlen(path) + 1);
	lc__ssh_id_probe(&a->ids[a->nids]);
	a->nids++;
}

static void
lc_ssh_ids_free(struct lc_ssh_auth *a)
{
	size_t i;

	for (i = 0; i < a->nids; i++)
		free(a->ids[i].blob);
	a->nids = 0;
}

static void
lc_ssh_tried(struct lc_ssh_auth *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
lc_ssh_tried(struct lc_ssh_auth *a, const char *fmt, ...)
{
	size_t o = strlen(a->tried);
	va_list ap;

	if (o > 0 && o + 2 < sizeof(a->tried)) {
		memcpy(a->tried + o, ", ", 3);
		o += 2;
	}
	va_start(ap, fmt);
	vsnprintf(a->tried + o, sizeof(a->tried) - o, fmt, ap);
	va_end(ap);
}

/* Is word an entry of the comma-separated list?  1/0. */
static int
lc_ssh_list_has(const char *list, const char *word)
{
	size_t wl = strlen(word);
	const char *p = list;

	while (p != NULL && *p != '\0') {
		size_t l = strcspn(p, ",");

		if (l == wl && strncmp(p, word, wl) == 0)
			return 1;
		p += l;
		if (*p == ',')
			p++;
	}
	return 0;
}

/*
 * Whether the server refuses RSA signatures made with SHA-1 ("ssh-rsa"),
 * the only ones libssh2 before 1.11 makes: OpenSSH 8.8 and later do by
 * default.  Other servers: not known (0).
 */
static int
lc_ssh_server_refuses_sha1(struct lc_ssh *s)
{
	const char *b = libssh2_session_banner_get(s->sess);
	unsigned major = 0, minor = 0;

	if (b == NULL || sscanf(b, "SSH-2.0-OpenSSH_%u.%u", &major, &minor) != 2)
		return 0;
	return major > 8 || (major == 8 && minor >= 8);
}

/*
 * A key libssh2 cannot use with this server, by its public key's type
 * (blob: the SSH wire encoding): why, or NULL.  *hopeless is set when
 * trying it cannot work at all (the caller then skips it: no passphrase
 * asked for a key that cannot be used).
 */
static const char *
lc_ssh_key_limit(struct lc_ssh *s, const unsigned char *blob, size_t len,
    int *hopeless)
{
	static const char cert[] = "-cert-v01@openssh.com";
	const char *t;
	uint32_t n;

	*hopeless = 0;
	if (blob == NULL || len < 4)
		return NULL;
	n = (uint32_t)blob[0] << 24 | (uint32_t)blob[1] << 16 |
	    (uint32_t)blob[2] << 8 | blob[3];
	if (n > len - 4)
		return NULL;
	t = (const char *)blob + 4;
	if (n > 3 && memcmp(t, "sk-", 3) == 0) {
		*hopeless = 1;
		return "a security key, which libssh2 cannot use";
	}
	if (n > sizeof(cert) - 1 &&
	    memcmp(t + n - (sizeof(cert) - 1), cert, sizeof(cert) - 1) == 0) {
		*hopeless = 1;
		return "a certificate, which libssh2 cannot present";
	}
#if LIBSSH2_VERSION_NUM < 0x010b00
	if (n == 7 && memcmp(t, "ssh-rsa", 7) == 0) {
		*hopeless = lc_ssh_server_refuses_sha1(s);
		return "an RSA key, which libssh2 " LIBSSH2_VERSION
		       " signs only with SHA-1 (ssh-rsa)";
	}
#else
	(void)s;
#endif
	return NULL;
}

static struct lc_ssh_id *
lc_ssh_id_by_blob(struct lc_ssh_auth *a, const unsigned char *blob,
    size_t len)
{
	size_t i;

	for (i = 0; i < a->nids; i++)
		if (a->ids[i].blob != NULL && a->ids[i].bloblen == len &&
		    memcmp(a->ids[i].blob, blob, len) == 0)
			return &a->ids[i];
	return NULL;
}

static char *lc_ssh_auth_list(struct lc_ssh *s, const char *user,
    int *fatal);

/*
 * May the next publickey attempt go?  The first goes without asking the
 * server for its method list ("none", a round trip): when the key is
 * taken, the list was never needed.  Before any later attempt, and
 * before a passphrase prompt, the list is asked for, so that a server
 * that does not take public keys is said at once, as before, without a
 * prompt or more refused attempts.  1: go on; 0: stop (a->err set, or
 * a->none_ok: authenticated by "none").
 */
static int
lc_ssh_auth_gate(struct lc_ssh *s, struct lc_ssh_auth *a, int prompt)
{
	const char *list;
	int fatal = 0;

	if (a->err != 0 || a->none_ok)
		return 0;
	if (a->listed || (a->tries == 0 && !prompt))
		return 1;
	a->listed = 1;
	list = lc_ssh_auth_list(s, a->user, &fatal);
	if (list == NULL && !fatal) {
		a->none_ok = 1;
		return 0;
	}
	if (list == NULL) {
		a->err = lc_err_set(a->e, LC_ERR_CONNECT, "%s: %s", s->name,
		    lc__ssh_liberr(s));
		return 0;
	}
	if (!lc_ssh_list_has(list, "publickey")) {
		a->err = lc_err_set(a->e, LC_ERR_AUTH, "%s: authentication "
		    "failed (the server does not accept public keys; it "
		    "offers %s)", s->name, list);
		return 0;
	}
	return 1;
}

/*
 * Offer the agent's keys.  Returns 0, with *done set when authenticated
 * (else go on with the next method), or -LC_ERR_CONNECT when the
 * connection broke.
 */
static int
lc_ssh_auth_agent(struct lc_ssh *s, struct lc_ssh_auth *a, int *done)
{
	struct libssh2_agent_publickey *id = NULL, *prev = NULL;
	LIBSSH2_AGENT *agent = NULL;
	const char *sock = getenv("SSH_AUTH_SOCK");
	struct lc_ssh_id *match;
	uint64_t deadline;
	int rc, r = 0, nkeys = 0;

	*done = 0;
	if (sock == NULL || *sock == '\0')
		return 0;
	if ((agent = libssh2_agent_init(s->sess)) == NULL)
		return 0;
	if (libssh2_agent_connect(agent) != 0 ||
	    libssh2_agent_list_identities(agent) != 0) {
		lc_log_verbose("ssh-agent at %s: %s", sock, lc__ssh_liberr(s));
		libssh2_agent_free(agent);
		return 0;
	}
	while (libssh2_agent_get_identity(agent, &id, prev) == 0) {
		prev = id;
		match = lc_ssh_id_by_blob(a, id->blob, id->blob_len);
		if (a->ids_only && match == NULL) {
			lc_log_debug("agent key %s: not a configured identity "
			    "(IdentitiesOnly)", id->comment);
			continue;
		}
		if (!lc_ssh_auth_gate(s, a, 0))
			break;
		if (match != NULL)
			match->offered = 1;
		nkeys++;
		a->tries++;
		deadline = lc__ssh_deadline(s);
		while ((rc = libssh2_agent_userauth(agent, a->user, id)) ==
		    LIBSSH2_ERROR_EAGAIN) {
			if (lc__ssh_waitsock(s, deadline) != 0) {
				rc = LIBSSH2_ERROR_TIMEOUT;
				break;
			}
		}
		if (rc == 0) {
			lc_log_verbose("authenticated with agent key %s",
			    id->comment);
			*done = 1;
			break;
		}
		lc_log_debug("agent key %s refused: %s", id->comment,
		    lc__ssh_liberr(s));
		{
			int hopeless;
			const char *why = lc_ssh_key_limit(s, id->blob,
			    id->blob_len, &hopeless);

			if (why != NULL)
				s->limit = why;
		}
		if (lc__ssh_fatal(rc)) {
			r = -LC_ERR_CONNECT;
			break;
		}
	}
	lc_ssh_tried(a, "agent (%d key%s)", nkeys, nkeys == 1 ? "" : "s");
	libssh2_agent_disconnect(agent);
	libssh2_agent_free(agent);
	return r;
}

/*
 * One publickey attempt with the file.  Returns 0 (authenticated),
 * -LC_ERR_IO (libssh2 could not use the key file: for an encrypted key, a
 * wrong passphrase), -LC_ERR_CONNECT (the connection broke or timed out)
 * or -LC_ERR_AUTH (the server refused the key).
 */
static int
lc_ssh_try_file(struct lc_ssh *s, struct lc_ssh_auth *a,
    const struct lc_ssh_id *id, const char *pass)
{
	uint64_t deadline = lc__ssh_deadline(s);
	const char *pub;
	int rc;

	/*
	 * For an encrypted key libssh2 derives the public key from the
	 * private one, so that a wrong passphrase shows as
	 * LIBSSH2_ERROR_FILE rather than as a refused key.
	 */
	pub = id->has_pub && !id->encrypted ? id->pub : NULL;
	while ((rc = libssh2_userauth_publickey_fromfile_ex(s->sess, a->user,
	    (unsigned)strlen(a->user), pub, id->path, pass)) ==
	    LIBSSH2_ERROR_EAGAIN) {
		if (lc__ssh_waitsock(s, deadline) != 0)
			return -LC_ERR_CONNECT;	/* LIBSSH2_ERROR_TIMEOUT */
	}
	if (rc == 0)
		return 0;
	if (rc == LIBSSH2_ERROR_FILE)
		return -LC_ERR_IO;
	return lc__ssh_fatal(rc) ? -LC_ERR_CONNECT : -LC_ERR_AUTH;
}

/* As lc_ssh_auth_agent, for one identity file. */
static int
lc_ssh_auth_file(struct lc_ssh *s, struct lc_ssh_auth *a,
    const struct lc_ssh_id *id, int *done)
{
	char prompt[PATH_MAX + 64], pass[LC_SSH_PASS_MAX];
	int rc = -LC_ERR_IO, tries;

	*done = 0;
	if (!lc_ssh_auth_gate(s, a, id->encrypted && !a->batch))
		return 0;
	if (!id->encrypted) {
		a->tries++;
		rc = lc_ssh_try_file(s, a, id, NULL);
	} else if (a->batch) {
		lc_log_verbose("%s: skipping encrypted key in batch mode",
		    id->path);
		lc_ssh_tried(a, "%s (encrypted, skipped in batch mode)",
		    id->path);
		return 0;
	} else {
		snprintf(prompt, sizeof(prompt),
		    "Enter passphrase for key '%s': ", id->path);
		for (tries = 0; tries < LC_SSH_PASS_TRIES; tries++) {
			s->prompted = 1;
			if (lc__ssh_askpass(prompt, pass, sizeof(pass)) != 0 ||
			    pass[0] == '\0') {
				lc_ssh_tried(a, "%s (encrypted, no passphrase)",
				    id->path);
				OPENSSL_cleanse(pass, sizeof(pass));
				return 0;
			}
			a->tries++;
			rc = lc_ssh_try_file(s, a, id, pass);
			OPENSSL_cleanse(pass, sizeof(pass));
			if (rc != -LC_ERR_IO)
				break;
			lc_log_warn("%s: bad passphrase", id->path);
		}
	}
	lc_ssh_tried(a, "%s", id->path);
	if (rc == 0) {
		lc_log_verbose("authenticated with %s", id->path);
		*done = 1;
		return 0;
	}
	lc_log_debug("%s refused: %s", id->path, lc__ssh_liberr(s));
	return rc == -LC_ERR_CONNECT ? rc : 0;
}

/*
 * lc_ssh_auth_file(), unless the key cannot work with libssh2 and this
 * server (then skipped, and said, without asking for its passphrase);
 * a refused key libssh2 is limited with, or one with a certificate
 * beside it (ssh would present that), leaves why in s->limit.
 */
static int
lc_ssh_auth_file_checked(struct lc_ssh *s, struct lc_ssh_auth *a,
    const struct lc_ssh_id *id, int *done)
{
	char cert[PATH_MAX + 16];
	const char *why;
	int hopeless, r;

	why = lc_ssh_key_limit(s, id->blob, id->bloblen, &hopeless);
	if (why != NULL && hopeless) {
		lc_log_verbose("%s: skipped: %s", id->path, why);
		lc_ssh_tried(a, "%s (skipped: libssh2 cannot use it here)",
		    id->path);
		s->limit = why;
		*done = 0;
		return 0;
	}
	r = lc_ssh_auth_file(s, a, id, done);
	if (r == 0 && !*done) {
		if (why != NULL)
			s->limit = why;
		else if ((size_t)snprintf(cert, sizeof(cert), "%s-cert.pub",
		    id->path) < sizeof(cert) && access(cert, R_OK) == 0)
			s->limit = "a certificate beside the key, which "
			    "libssh2 cannot present";
	}
	return r;
}

static char *
lc_ssh_auth_list(struct lc_ssh *s, const char *user, int *fatal)
{
	uint64_t deadline = lc__ssh_deadline(s);
	char *list;

	*fatal = 0;
	for (;;) {
		list = libssh2_userauth_list(s->sess, user,
		    (unsigned)strlen(user));
		if (list != NULL || libssh2_userauth_authenticated(s->sess))
			return list;
		if (libssh2_session_last_errno(s->sess) !=
		    LIBSSH2_ERROR_EAGAIN || lc__ssh_waitsock(s, deadline) != 0) {
			*fatal = 1;
			return NULL;
		}
	}
}

/* See ssh_int.h. */
int
lc__ssh_authenticate(struct lc_ssh *s, const struct lc_sshconf *c,
    const char *user, const char *identity_file, int batch,
    const char *home, struct lc_err *e)
{
	static const char *const defaults[] = {
		"id_ed25519", "id_ecdsa", "id_rsa",
	};
	struct lc_ssh_auth *a = NULL;
	char path[PATH_MAX];
	size_t i;
	int r, done = 0;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return lc_err_set(e, LC_ERR_NOMEM, "out of memory");
	a->e = e;
	a->user = user;
	a->batch = batch;
	a->ids_only = c->identities_only == 1;
	lc_ssh_id_add(a, identity_file);
	for (i = 0; i < c->n_identity_files; i++)
		lc_ssh_id_add(a, c->identity_files[i]);
	if (a->nids == 0 && !c->identity_files_none) {
		for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
			if ((size_t)snprintf(path, sizeof(path), "%s/.ssh/%s",
			    home, defaults[i]) < sizeof(path))
				lc_ssh_id_add(a, path);
		}
	}
	r = lc_ssh_auth_agent(s, a, &done);
	for (i = 0; r == 0 && !done && i < a->nids; i++) {
		if (!a->ids[i].exists)
			continue;
		if (a->ids[i].offered) {
			lc_log_debug("%s: already offered by the agent",
			    a->ids[i].path);
			continue;
		}
		r = lc_ssh_auth_file_checked(s, a, &a->ids[i], &done);
	}
	/* nothing taken: what the server offers says why (the list, unless
	   asked already) */
	if (r == 0 && !done)
		(void)lc_ssh_auth_gate(s, a, 1);
	if (a->none_ok)
		done = 1;	/* "none" was accepted */
	if (r == 0 && !done && a->err != 0) {
		r = a->err;
		goto out;
	}
	/* ssh would present the CertificateFile with the key */
	if (r == 0 && !done && s->limit == NULL && c->certificate_file)
		s->limit = "a CertificateFile, which libssh2 cannot present";
	if (r == 0 && !done)
		r = lc_err_set(e, LC_ERR_AUTH,
		    "%s: authentication failed (tried: %s)", s->name,
		    a->tried[0] != '\0' ? a->tried :
		    "nothing; no agent and no identity file");
	else if (r != 0)
		r = lc_err_set(e, LC_ERR_AUTH,
		    "%s: authentication failed (tried: %s): %s", s->name,
		    a->tried, lc__ssh_liberr(s));
 out:
	lc_ssh_ids_free(a);
	free(a);
	return r;
}
