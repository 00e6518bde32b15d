/*
 * known_hosts: one line of a file (see knownhosts_int.h).  Plain host
 * lists go to libssh2 lowercased, wildcard lists are matched here against
 * the lookup names, hashed names are checked before libssh2 sees them;
 * @revoked and @cert-authority lines never reach libssh2.
 */
#include "knownhosts.h"
#include "base64.h"
#include "err.h"
#include "log.h"
#include "sshconf.h"
#include "knownhosts_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

/* Give every entry libssh2 added since the last call its file and line. */
static int
lc_kh_note_new(struct lc_knownhosts *kh, size_t file, unsigned long line)
{
	struct libssh2_knownhost *n;

	while (libssh2_knownhost_get(kh->h, &n, kh->last) == 0) {
		if (kh->norig == kh->aorig) {
			size_t na = kh->aorig ? kh->aorig * 2 : 64;
			struct lc_kh_origin *o;

			if ((o = realloc(kh->orig, na * sizeof(*o))) == NULL)
				return -LC_ERR_NOMEM;
			kh->orig = o;
			kh->aorig = na;
		}
		kh->orig[kh->norig].node = n->node;
		kh->orig[kh->norig].file = file;
		kh->orig[kh->norig].line = line;
		kh->norig++;
		kh->last = n;
	}
	return 0;
}

static void
lc_kh_readline(struct lc_knownhosts *kh, const char *line, size_t len,
    size_t file, unsigned long lineno)
{
	if (libssh2_knownhost_readline(kh->h, line, len,
	    LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0)
		lc_log_debug("%s:%lu: cannot parse, ignored", kh->files[file],
		    lineno);
}

/*
 * A hashed host field, "|1|salt|hash" (the first hlen bytes of f): both
 * base64 of 20 bytes (SHA-1 size), as ssh's extract_salt() wants.
 * libssh2 1.10 leaks an HMAC context on every lookup for a hash of another
 * length, so such lines never reach it.  Well formed?  1/0.
 */
static int
lc_kh_hashed_ok(const char *f, size_t hlen)
{
	unsigned char buf[64];
	const char *salt = f + 3, *bar, *hash;
	size_t slen;

	if (hlen < 3 || (bar = memchr(salt, '|', hlen - 3)) == NULL)
		return 0;
	slen = (size_t)(bar - salt);
	hash = bar + 1;
	return lc_base64_decode_strict(salt, slen, buf, sizeof(buf)) ==
	    LC_KH_SALT_LEN &&
	    lc_base64_decode_strict(hash, hlen - 3 - slen - 1, buf,
	    sizeof(buf)) == LC_KH_SALT_LEN;
}

/* Next blank-separated field of *pp (advanced past it), or NULL. */
static char *
lc_kh_field(char **pp, size_t *len)
{
	char *p = *pp, *f;

	p += strspn(p, " \t");
	if (*p == '\0')
		return NULL;
	f = p;
	*len = strcspn(p, " \t");
	*pp = p + *len;
	return f;
}

/*
 * Does the hashed host field "|1|salt|hash" (first hlen bytes of f,
 * checked by lc_kh_hashed_ok) stand for name?  1/0.
 */
static int
lc_kh_hashed_match(const char *f, size_t hlen, const char *name)
{
	unsigned char salt[64], hash[64], mac[EVP_MAX_MD_SIZE];
	const char *bar = memchr(f + 3, '|', hlen - 3);
	unsigned int maclen = 0;
	size_t slen;

	if (bar == NULL)
		return 0;
	slen = (size_t)(bar - (f + 3));
	if (lc_base64_decode_strict(f + 3, slen, salt, sizeof(salt)) !=
	    LC_KH_SALT_LEN ||
	    lc_base64_decode_strict(bar + 1, hlen - 3 - slen - 1, hash,
	    sizeof(hash)) != LC_KH_SALT_LEN ||
	    HMAC(EVP_sha1(), salt, LC_KH_SALT_LEN,
	    (const unsigned char *)name, strlen(name), mac, &maclen) == NULL ||
	    maclen != LC_KH_SALT_LEN)
		return 0;
	return CRYPTO_memcmp(mac, hash, LC_KH_SALT_LEN) == 0;
}

/*
 * Does the host field hosts (hlen bytes: a hashed name, or a pattern list
 * as ssh's match_hostname takes it) cover names[i]?  The index, or -1.
 */
static long
lc_kh_hosts_cover(char *hosts, size_t hlen, const char *const *names,
    size_t nnames)
{
	size_t i;
	char save = hosts[hlen];
	long r = -1;

	if (strncmp(hosts, "|1|", 3) == 0) {
		if (!lc_kh_hashed_ok(hosts, hlen))
			return -1;
		for (i = 0; i < nnames && r < 0; i++)
			if (lc_kh_hashed_match(hosts, hlen, names[i]))
				r = (long)i;
		return r;
	}
	hosts[hlen] = '\0';
	for (i = 0; i < nnames && r < 0; i++)
		if (lc_sshconf_match_list(names[i], hosts) == 1)
			r = (long)i;
	hosts[hlen] = save;
	return r;
}

/* The key (base64 field b, blen bytes) as an SSH blob: SHA-256 into md. */
static int
lc_kh_key_digest(const char *b, size_t blen, unsigned char md[32])
{
	unsigned char *blob = NULL;
	char type[64];
	unsigned int mdlen = 0;
	int n, r = -LC_ERR_PROTO;

	if (blen > LC_KH_LINE_MAX)
		return -LC_ERR_PROTO;
	if ((blob = malloc(blen / 4 * 3 + 3)) == NULL)
		return -LC_ERR_NOMEM;
	n = lc_base64_decode(b, blen, blob, blen / 4 * 3 + 3);
	if (n == -LC_ERR_NOMEM)
		r = n;
	if (n > 0 && lc_knownhosts_blob_type(blob, (size_t)n, type,
	    sizeof(type)) == 0 &&
	    EVP_Digest(blob, (size_t)n, md, &mdlen, EVP_sha256(),
	    NULL) == 1 && mdlen == 32)
		r = 0;
	free(blob);
	return r;
}

static int
lc_kh_add_revoked(struct lc_knownhosts *kh, const unsigned char md[32],
    size_t file, unsigned long line)
{
	if (kh->nrev == kh->arev) {
		size_t na = kh->arev ? kh->arev * 2 : 8;
		struct lc_kh_revoked *v;

		if ((v = realloc(kh->rev, na * sizeof(*v))) == NULL)
			return -LC_ERR_NOMEM;
		kh->rev = v;
		kh->arev = na;
	}
	memcpy(kh->rev[kh->nrev].sha256, md, 32);
	kh->rev[kh->nrev].file = file;
	kh->rev[kh->nrev].line = line;
	kh->nrev++;
	return 0;
}

/*
 * A marker line ("@revoked HOSTS TYPE KEY", "@cert-authority HOSTS TYPE
 * KEY").  A revoked key is kept whatever its host patterns say: a key
 * that is known to be stolen must never be trusted, for any name (ssh
 * itself only applies the lines whose patterns match).  A CA line only
 * notes that it covers one of the names: lanecp cannot check host
 * certificates, so the check can say why the key is not known.
 */
static int
lc_kh_marker_line(struct lc_knownhosts *kh, char *p, size_t file,
    unsigned long lineno, const char *const *names, size_t nnames)
{
	unsigned char md[32];
	char *rest, *hosts, *type, *key;
	size_t ml, hlen = 0, tlen = 0, klen = 0, i;
	int revoked, r;
	long which;

	ml = strcspn(p, " \t");
	revoked = ml == 8 && strncmp(p, "@revoked", 8) == 0;
	if (!revoked && !(ml == 15 && strncmp(p, "@cert-authority", 15) == 0)) {
		lc_log_debug("%s:%lu: unknown marker, line ignored",
		    kh->files[file], lineno);
		return 0;
	}
	rest = p + ml;
	hosts = lc_kh_field(&rest, &hlen);
	type = hosts != NULL ? lc_kh_field(&rest, &tlen) : NULL;
	key = type != NULL ? lc_kh_field(&rest, &klen) : NULL;
	r = key != NULL ? lc_kh_key_digest(key, klen, md) : -LC_ERR_PROTO;
	if (r == -LC_ERR_NOMEM)
		return r;
	if (r != 0) {
		if (revoked)
			lc_log_warn("%s line %lu: cannot read the key of this "
			    "@revoked line, ignored", kh->files[file], lineno);
		else
			lc_log_debug("%s:%lu: malformed @cert-authority line, "
			    "ignored", kh->files[file], lineno);
		return 0;
	}
	if (revoked)
		return lc_kh_add_revoked(kh, md, file, lineno);
	if (kh->ca_line != 0)
		return 0;
	if (strncmp(hosts, "|1|", 3) != 0) {
		for (i = 0; i < hlen; i++)
			hosts[i] = (char)tolower((unsigned char)hosts[i]);
	}
	if ((which = lc_kh_hosts_cover(hosts, hlen, names, nnames)) >= 0) {
		kh->ca_file = file;
		kh->ca_line = lineno;
		kh->ca_name = (size_t)which;
	}
	return 0;
}

/*
 * One line.  Plain host lists are lowercased (ssh compares host names
 * without case); a list with wildcards is matched here and, where it
 * matches, the entry is added under the lookup name itself.
 */
int
lc__knownhosts_add_line(struct lc_knownhosts *kh, char *line, size_t file,
    unsigned long lineno, const char *const *names, size_t nnames)
{
	char *p = line, *hosts, *rest, *buf = NULL;
	size_t hlen, i;
	int r = 0;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0' || *p == '#')
		return 0;
	if (*p == '@')
		return lc_kh_marker_line(kh, p, file, lineno, names, nnames);
	hosts = p;
	hlen = strcspn(hosts, " \t");
	rest = hosts + hlen;
	if (strncmp(hosts, "|1|", 3) != 0) {
		for (i = 0; i < hlen; i++)
			hosts[i] = (char)tolower((unsigned char)hosts[i]);
	}
	if (strncmp(hosts, "|1|", 3) == 0 && !lc_kh_hashed_ok(hosts, hlen)) {
		lc_log_warn("%s:%lu: malformed hashed host name, line ignored",
		    kh->files[file], lineno);
		return 0;
	}
	if (strncmp(hosts, "|1|", 3) == 0 || strcspn(hosts, "*?!") >= hlen) {
		lc_kh_readline(kh, hosts, strlen(hosts), file, lineno);
		return lc_kh_note_new(kh, file, lineno);
	}
	/* wildcard list */
	if (*rest == '\0')
		return 0;
	*rest++ = '\0';
	if ((buf = malloc(LC_KH_NAME_MAX + 2 + strlen(rest))) == NULL)
		return -LC_ERR_NOMEM;
	for (i = 0; i < nnames && r == 0; i++) {
		if (lc_sshconf_match_list(names[i], hosts) != 1)
			continue;
		snprintf(buf, LC_KH_NAME_MAX + 2 + strlen(rest), "%s %s",
		    names[i], rest);
		lc_kh_readline(kh, buf, strlen(buf), file, lineno);
		r = lc_kh_note_new(kh, file, lineno);
	}
	free(buf);
	return r;
}
