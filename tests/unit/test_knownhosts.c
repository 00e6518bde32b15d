#include "harness.h"

#include "err.h"
#include "base64.h"
#include "knownhosts.h"
#include "knownhosts_int.h"
#include "log.h"
#include "revokedkeys.h"
#include "revokedkeys_int.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libssh2.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

/* --- marker lines: @revoked and @cert-authority --- */

/* Two throwaway ssh-ed25519 key blobs (only their bytes matter here). */
static unsigned char t_key_a[51], t_key_b[51];
static char t_b64_a[80], t_b64_b[80], t_b64_ca[80];

static void
t_mkblob(unsigned char *b, unsigned char fill)
{
	static const unsigned char head[] = {
		0, 0, 0, 11, 's', 's', 'h', '-', 'e', 'd', '2', '5', '5', '1',
		'9', 0, 0, 0, 32,
	};

	memcpy(b, head, sizeof(head));
	memset(b + sizeof(head), fill, 32);
	b[sizeof(head)] = (unsigned char)(fill ^ 0x5a);
}

static LIBSSH2_SESSION *
t_session(void)
{
	static LIBSSH2_SESSION *sess;
	unsigned char ca[51];

	if (sess != NULL)
		return sess;
	lc_log_init("test", LC_LOG_ERROR, 2);
	LC_CHECK(libssh2_init(0) == 0);
	LC_CHECK((sess = libssh2_session_init()) != NULL);
	t_mkblob(t_key_a, 0x11);
	t_mkblob(t_key_b, 0x22);
	t_mkblob(ca, 0x33);
	LC_CHECK(lc_base64_encode(t_key_a, sizeof(t_key_a), t_b64_a,
	    sizeof(t_b64_a)) > 0);
	LC_CHECK(lc_base64_encode(t_key_b, sizeof(t_key_b), t_b64_b,
	    sizeof(t_b64_b)) > 0);
	LC_CHECK(lc_base64_encode(ca, sizeof(ca), t_b64_ca,
	    sizeof(t_b64_ca)) > 0);
	return sess;
}

/* "%A" in fmt: key A's base64, "%B": key B's, "%C": the CA key's. */
static const char *
t_kh(const char *fmt)
{
	static char out[4096];
	size_t n = 0;
	const char *v;

	for (; *fmt != '\0' && n + 100 < sizeof(out); fmt++) {
		if (fmt[0] == '%' && (v = fmt[1] == 'A' ? t_b64_a :
		    fmt[1] == 'B' ? t_b64_b : fmt[1] == 'C' ? t_b64_ca :
		    NULL) != NULL) {
			n += (size_t)snprintf(out + n, sizeof(out) - n, "%s", v);
			fmt++;
		} else {
			out[n++] = *fmt;
		}
	}
	out[n] = '\0';
	return out;
}

static const char *const t_names[] = { "[web.example.org]:2222",
    "[web]:2222" };

/* Load text (with %A/%B/%C) as file "kh" and look key up. */
static void
t_check(const char *fmt, const unsigned char *key, struct lc_kh_result *res)
{
	LIBSSH2_SESSION *sess = t_session();
	struct lc_knownhosts *kh = NULL;
	struct lc_err e;
	const char *text = t_kh(fmt);

	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc__knownhosts_load_mem(sess, text, strlen(text), "kh",
	    t_names, 2, &kh, &e), 0);
	LC_CHECK_EQ_I(lc_knownhosts_check(kh, t_names, 2, key, 51,
	    LIBSSH2_HOSTKEY_TYPE_ED25519, res, &e), 0);
	/* res->file belongs to kh: keep only what the tests compare */
	if (res->file != NULL)
		LC_CHECK_STR(res->file, "kh");
	res->file = NULL;
	res->name = res->name == t_names[0] ? "0" :
	    res->name == t_names[1] ? "1" : res->name;
	lc_knownhosts_free(kh);
}

/*
 * The case: an admin revokes a key that a plain line still lists.
 * ssh refuses it; the plain line must not win (written against the API
 * that predates LC_KH_REVOKED, so it also shows the old behaviour).
 */
LC_TEST(revoked_beats_plain_line)
{
	struct lc_kh_result res;

	t_check("[web.example.org]:2222 ssh-ed25519 %A\n"
	    "@revoked [web.example.org]:2222 ssh-ed25519 %A\n", t_key_a,
	    &res);
	LC_CHECK(res.status != LC_KH_MATCH);
	LC_CHECK_EQ_U(res.line, 2);
	t_check("@revoked * ssh-ed25519 %A\n"
	    "[web.example.org]:2222 ssh-ed25519 %A\n", t_key_a, &res);
	LC_CHECK(res.status != LC_KH_MATCH);
	LC_CHECK_EQ_U(res.line, 1);
}

/* A @revoked line is matched by key, whatever its host field. */
LC_TEST(revoked_by_key_any_pattern)
{
	static const char *const lines[] = {
		"@revoked [web.example.org]:2222 ssh-ed25519 %A",
		"@revoked * ssh-ed25519 %A comment",
		"@revoked other.example.org ssh-ed25519 %A",
		"@revoked *.example.org,![web.example.org]:2222 ssh-ed25519 %A",
		"@revoked |1|cnJycnJycnJycnJycnJycnJycnI=|"
		    "c3Nzc3Nzc3Nzc3Nzc3Nzc3Nzc3M= ssh-ed25519 %A",
		"\t@revoked\tweb\tssh-ed25519\t%A\r",
		/* the label does not matter: the key bytes do */
		"@revoked * ssh-rsa %A",
	};
	struct lc_kh_result res;
	char text[512];
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		snprintf(text, sizeof(text), "# c\n%s\n"
		    "[web.example.org]:2222 ssh-ed25519 %%A\n", lines[i]);
		t_check(text, t_key_a, &res);
		if (res.status != LC_KH_REVOKED)
			fprintf(stderr, "case %zu: status %d\n", i,
			    (int)res.status);
		LC_CHECK_EQ_I(res.status, LC_KH_REVOKED);
		LC_CHECK_EQ_U(res.line, 2);
		LC_CHECK_STR(res.name, "0");
	}
}

/* Other keys revoked, malformed @revoked lines: no effect. */
LC_TEST(revoked_other_or_malformed)
{
	struct lc_kh_result res;

	t_check("@revoked * ssh-ed25519 %B\n"
	    "@revoked\n"
	    "@revoked *\n"
	    "@revoked * ssh-ed25519\n"
	    "@revoked * ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA\n"
	    "@revoked * ssh-ed25519 AAAA\n"
	    "@revoked * ssh-ed25519 ****\n"
	    "@revokedx * ssh-ed25519 %A\n"
	    "@unknown * ssh-ed25519 %A\n"
	    "[web]:2222 ssh-ed25519 %A\n", t_key_a, &res);
	LC_CHECK_EQ_I(res.status, LC_KH_MATCH);
	LC_CHECK_STR(res.name, "1");
	t_check("@revoked * ssh-ed25519 %A\n", t_key_b, &res);
	LC_CHECK_EQ_I(res.status, LC_KH_UNKNOWN);
	t_check("@revoked * ssh-ed25519 %A\n"
	    "[web]:2222 ssh-ed25519 %A\n", t_key_b, &res);
	LC_CHECK_EQ_I(res.status, LC_KH_CHANGED);
}

/* The user's file lists the key, the system file revokes it. */
LC_TEST(revoked_in_another_file)
{
	LIBSSH2_SESSION *sess = t_session();
	struct lc_knownhosts *kh = NULL;
	struct lc_kh_result res;
	struct lc_err e;
	char dir[] = "/tmp/lc-kh-XXXXXX", user[64], sys[64];
	const char *files[2] = { user, sys };
	FILE *f;

	LC_CHECK(mkdtemp(dir) != NULL);
	snprintf(user, sizeof(user), "%s/known_hosts", dir);
	snprintf(sys, sizeof(sys), "%s/ssh_known_hosts", dir);
	LC_CHECK((f = fopen(user, "w")) != NULL);
	fputs(t_kh("[web]:2222 ssh-ed25519 %A\n"), f);
	fclose(f);
	LC_CHECK((f = fopen(sys, "w")) != NULL);
	fputs(t_kh("# admin\n\n@revoked * ssh-ed25519 %A\n"), f);
	fclose(f);
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_knownhosts_load(sess, files, 2, t_names, 2, &kh, &e),
	    0);
	LC_CHECK_EQ_I(lc_knownhosts_check(kh, t_names, 2, t_key_a, 51,
	    LIBSSH2_HOSTKEY_TYPE_ED25519, &res, &e), 0);
	LC_CHECK_EQ_I(res.status, LC_KH_REVOKED);
	LC_CHECK_STR(res.file, sys);
	LC_CHECK_EQ_U(res.line, 3);
	/* a type known_hosts cannot hold is still checked for revocation */
	LC_CHECK_EQ_I(lc_knownhosts_check(kh, t_names, 2, t_key_a, 51, 0,
	    &res, &e), 0);
	LC_CHECK_EQ_I(res.status, LC_KH_REVOKED);
	lc_knownhosts_free(kh);
	lc_test_rm_tree(dir);
}

/* "|1|salt|hash" for name, as ssh-keygen -H writes it. */
static void
t_hashed(const char *name, char *out, size_t outsz)
{
	unsigned char salt[20], mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0;
	char bs[32], bm[32];	/* base64 of 20 bytes: 28 characters */

	memset(salt, 0x42, sizeof(salt));
	LC_CHECK(HMAC(EVP_sha1(), salt, (int)sizeof(salt),
	    (const unsigned char *)name, strlen(name), mac, &maclen) != NULL);
	LC_CHECK(lc_base64_encode(salt, sizeof(salt), bs, sizeof(bs)) > 0);
	LC_CHECK(lc_base64_encode(mac, maclen, bm, sizeof(bm)) > 0);
	snprintf(out, outsz, "|1|%s|%s", bs, bm);
}

/* A @cert-authority line covering the host is reported, not "unknown". */
LC_TEST(cert_authority_covers)
{
	static const struct {
		const char *hosts;
		int covers;
		const char *name;
	} cases[] = {
		{ "[web.example.org]:2222", 1, "0" },
		{ "[WEB.example.org]:2222", 1, "0" },
		{ "[*.example.org]:*", 1, "0" },
		{ "other,[web]:2222", 1, "1" },
		{ "[web?example.org]:2222", 1, "0" },
		{ "*.example.org", 0, NULL },	/* port 22 only */
		{ "[*]:*,![web.example.org]:2222", 1, "1" },
		{ "![web.example.org]:2222,![web]:2222,*", 0, NULL },
		{ "HASHED", 1, "1" },
	};
	struct lc_kh_result res;
	char text[512], hosts[128];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(cases[i].hosts, "HASHED") == 0)
			t_hashed("[web]:2222", hosts, sizeof(hosts));
		else
			snprintf(hosts, sizeof(hosts), "%s", cases[i].hosts);
		snprintf(text, sizeof(text), "other ssh-ed25519 %%B\n"
		    "@cert-authority %s ssh-ed25519 %%C\n", hosts);
		t_check(text, t_key_a, &res);
		if ((res.status == LC_KH_CA) != cases[i].covers)
			fprintf(stderr, "case %zu (%s): status %d\n", i, hosts,
			    (int)res.status);
		LC_CHECK_EQ_I(res.status, cases[i].covers ? LC_KH_CA :
		    LC_KH_UNKNOWN);
		if (cases[i].covers) {
			LC_CHECK_EQ_U(res.line, 2);
			LC_CHECK_STR(res.name, cases[i].name);
		}
	}
	/* a malformed CA line covers nothing */
	t_check("@cert-authority * ssh-ed25519\n"
	    "@cert-authority * ssh-ed25519 !!!!\n", t_key_a, &res);
	LC_CHECK_EQ_I(res.status, LC_KH_UNKNOWN);
	/* the first covering line is named */
	t_check("@cert-authority nope ssh-ed25519 %C\n"
	    "@cert-authority * ssh-ed25519 %C\n"
	    "@cert-authority [web]:* ssh-ed25519 %C\n", t_key_a, &res);
	LC_CHECK_EQ_I(res.status, LC_KH_CA);
	LC_CHECK_EQ_U(res.line, 2);
}

/* A plain entry decides before the CA; a revoked key before both. */
LC_TEST(cert_authority_with_plain_entries)
{
	struct lc_kh_result res;

	t_check("@cert-authority * ssh-ed25519 %C\n"
	    "[web]:2222 ssh-ed25519 %A\n", t_key_a, &res);
	LC_CHECK_EQ_I(res.status, LC_KH_MATCH);
	t_check("@cert-authority * ssh-ed25519 %C\n"
	    "[web]:2222 ssh-ed25519 %A\n", t_key_b, &res);
	LC_CHECK_EQ_I(res.status, LC_KH_CHANGED);
	t_check("@cert-authority * ssh-ed25519 %C\n"
	    "@revoked * ssh-ed25519 %B\n", t_key_b, &res);
	LC_CHECK_EQ_I(res.status, LC_KH_REVOKED);
}

/* --- RevokedHostKeys: key lists and KRLs --- */

static int
t_rk(const void *data, size_t size, const unsigned char *key,
    struct lc_revoked_result *res, struct lc_err *e)
{
	lc_err_clear(e);
	return lc__revokedkeys_check_mem(data, size, "rk", key, 51, res, e);
}

static int
t_rk_text(const char *fmt, const unsigned char *key,
    struct lc_revoked_result *res, struct lc_err *e)
{
	const char *text = t_kh(fmt);

	return t_rk(text, strlen(text), key, res, e);
}

LC_TEST(revoked_list)
{
	struct lc_revoked_result res;
	struct lc_err e;

	(void)t_session();
	LC_CHECK_EQ_I(t_rk_text("# list\n\n  ssh-ed25519 %B old\r\n"
	    "\tssh-ed25519 %A  this one \r\n", t_key_a, &res, &e), 0);
	LC_CHECK_EQ_I(res.revoked, 1);
	LC_CHECK_EQ_I(res.krl, 0);
	LC_CHECK_EQ_U(res.line, 4);
	LC_CHECK_EQ_I(t_rk_text("ssh-ed25519 %B\n# ssh-ed25519 %A\n", t_key_a,
	    &res, &e), 0);
	LC_CHECK_EQ_I(res.revoked, 0);
	LC_CHECK_EQ_I(t_rk_text("", t_key_a, &res, &e), 0);
	LC_CHECK_EQ_I(res.revoked, 0);
	/* no newline at the end */
	LC_CHECK_EQ_I(t_rk_text("ssh-ed25519 %A", t_key_a, &res, &e), 0);
	LC_CHECK_EQ_I(res.revoked, 1);
	/* as ssh: the first line that names the key decides */
	LC_CHECK_EQ_I(t_rk_text("ssh-ed25519 %A\ngarbage\n", t_key_a, &res,
	    &e), 0);
	LC_CHECK_EQ_I(res.revoked, 1);
}

/* Anything that is not a public key refuses the file (as ssh). */
LC_TEST(revoked_list_malformed)
{
	static const struct {
		const char *text;
		const char *want;
	} cases[] = {
		{ "ssh-ed25519 %B\ngarbage\n", "rk line 2: not a public key" },
		{ "ssh-ed25519\n", "rk line 1: not a public key" },
		{ "ssh-rsa %A\n", "rk line 1: not a public key" },
		{ "from=\"x\" ssh-ed25519 %A\n", "line 1: not a public key" },
		{ "[web]:2222 ssh-ed25519 %A\n", "line 1: not a public key" },
		{ "ssh-ed25519 %A=\n", "line 1: not a public key" },
		{ "ssh-ed25519 AAAA\n", "line 1: not a public key" },
		{ "ssh-ed25519-cert-v01@openssh.com %A\n",
		    "rk line 1: a certificate, which lanecp cannot check" },
	};
	struct lc_revoked_result res;
	struct lc_err e;
	size_t i;

	(void)t_session();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (t_rk_text(cases[i].text, t_key_a, &res, &e) !=
		    -LC_ERR_HOSTKEY)
			fprintf(stderr, "case %zu accepted\n", i);
		LC_CHECK_EQ_I(t_rk_text(cases[i].text, t_key_a, &res, &e),
		    -LC_ERR_HOSTKEY);
		if (strstr(e.msg, cases[i].want) == NULL)
			fprintf(stderr, "case %zu: %s\n", i, e.msg);
		LC_CHECK(strstr(e.msg, cases[i].want) != NULL);
		LC_CHECK(strncmp(e.msg, "RevokedHostKeys rk", 18) == 0);
	}
	/* a NUL byte, an overlong line */
	LC_CHECK_EQ_I(t_rk("ssh-ed25519 A\0AA\n", 17, t_key_a, &res, &e),
	    -LC_ERR_HOSTKEY);
	{
		static char big[20000];

		memset(big, ' ', sizeof(big));
		big[sizeof(big) - 1] = 'x';
		LC_CHECK_EQ_I(t_rk(big, sizeof(big), t_key_a, &res, &e),
		    -LC_ERR_HOSTKEY);
		LC_CHECK(strstr(e.msg, "line 1: longer than") != NULL);
	}
}

/* A tiny KRL writer for the tests. */
struct t_krl {
	unsigned char b[4096];
	size_t n;
};

static void
t_put(struct t_krl *k, const void *p, size_t n)
{
	LC_CHECK(k->n + n <= sizeof(k->b));
	memcpy(k->b + k->n, p, n);
	k->n += n;
}

static void
t_u32(struct t_krl *k, uint32_t v)
{
	unsigned char b[4] = { (unsigned char)(v >> 24),
	    (unsigned char)(v >> 16), (unsigned char)(v >> 8),
	    (unsigned char)v };

	t_put(k, b, 4);
}

static void
t_str(struct t_krl *k, const void *p, size_t n)
{
	t_u32(k, (uint32_t)n);
	t_put(k, p, n);
}

static void
t_header(struct t_krl *k, uint32_t version)
{
	static const unsigned char zero[24];

	k->n = 0;
	t_put(k, "SSHKRL\n\0", 8);
	t_u32(k, version);
	t_put(k, zero, 24);
	t_str(k, "", 0);
	t_str(k, "a comment", 9);
}

/* A section: type byte, then its body (another t_krl) as a string. */
static void
t_section(struct t_krl *k, unsigned type, const struct t_krl *body)
{
	unsigned char t = (unsigned char)type;

	t_put(k, &t, 1);
	t_str(k, body->b, body->n);
}

static void
t_digest(const EVP_MD *md, const unsigned char *key, unsigned char *out)
{
	unsigned int n = 0;

	LC_CHECK(EVP_Digest(key, 51, out, &n, md, NULL) == 1);
}

LC_TEST(revoked_krl_sections)
{
	struct t_krl k, body, cert, sub;
	struct lc_revoked_result res;
	struct lc_err e;
	unsigned char h1[20], h256[32], crit = 1, zero8[8] = { 0 };
	int i;

	(void)t_session();
	t_digest(EVP_sha1(), t_key_a, h1);
	t_digest(EVP_sha256(), t_key_a, h256);
	for (i = 0; i < 3; i++) {
		/* a certificate section and a harmless extension first */
		t_header(&k, 1);
		cert.n = 0;
		t_str(&cert, t_key_b, 51);	/* CA key */
		t_str(&cert, "", 0);
		sub.n = 0;
		t_put(&sub, zero8, 8);
		t_put(&sub, zero8, 8);
		{
			unsigned char t = 0x20;

			t_put(&cert, &t, 1);
			t_str(&cert, sub.b, sub.n);
			t = 0x21;
			t_put(&cert, &t, 1);
			t_str(&cert, sub.b, sub.n);
			t = 0x23;
			sub.n = 0;
			t_str(&sub, "host-id", 7);
			t_put(&cert, &t, 1);
			t_str(&cert, sub.b, sub.n);
		}
		t_section(&k, 1, &cert);
		body.n = 0;
		t_str(&body, "bloom@example.org", 17);
		t_put(&body, zero8, 1);
		t_str(&body, "x", 1);
		t_section(&k, 255, &body);
		/* key B by key, then key A one way or another */
		body.n = 0;
		t_str(&body, t_key_b, 51);
		t_section(&k, 2, &body);
		body.n = 0;
		if (i == 0)
			t_str(&body, t_key_a, 51);
		else if (i == 1)
			t_str(&body, h1, 20);
		else
			t_str(&body, h256, 32);
		t_section(&k, i == 0 ? 2 : i == 1 ? 3 : 5, &body);
		LC_CHECK_EQ_I(t_rk(k.b, k.n, t_key_a, &res, &e), 0);
		LC_CHECK_EQ_I(res.krl, 1);
		LC_CHECK_EQ_I(res.revoked, 1);
		LC_CHECK_EQ_I(t_rk(k.b, k.n, t_key_b, &res, &e), 0);
		LC_CHECK_EQ_I(res.revoked, 1);
		/* every cut is malformed, never a crash or a pass */
		{
			size_t cut;
			int ok = 0;

			for (cut = 0; cut < k.n; cut++) {
				if (t_rk(k.b, cut, t_key_a, &res, &e) == 0 &&
				    res.revoked)
					ok++;
			}
			LC_CHECK_EQ_I(ok, 0);
		}
	}
	/* nothing for key A in an empty KRL */
	t_header(&k, 1);
	LC_CHECK_EQ_I(t_rk(k.b, k.n, t_key_a, &res, &e), 0);
	LC_CHECK_EQ_I(res.revoked, 0);
	/* unusable: another version, a signature, a critical extension */
	t_header(&k, 2);
	LC_CHECK_EQ_I(t_rk(k.b, k.n, t_key_a, &res, &e), -LC_ERR_HOSTKEY);
	LC_CHECK(strstr(e.msg, "rk: unusable KRL (an unknown format "
	    "version)") != NULL);
	t_header(&k, 1);
	body.n = 0;
	t_str(&body, t_key_b, 51);
	t_section(&k, 4, &body);
	LC_CHECK_EQ_I(t_rk(k.b, k.n, t_key_a, &res, &e), -LC_ERR_HOSTKEY);
	LC_CHECK(strstr(e.msg, "unusable KRL (signed") != NULL);
	t_header(&k, 1);
	body.n = 0;
	t_str(&body, "must-know@example.org", 21);
	t_put(&body, &crit, 1);
	t_str(&body, "", 0);
	t_section(&k, 255, &body);
	LC_CHECK_EQ_I(t_rk(k.b, k.n, t_key_a, &res, &e), -LC_ERR_HOSTKEY);
	LC_CHECK(strstr(e.msg, "critical extension") != NULL);
	t_header(&k, 1);
	body.n = 0;
	t_section(&k, 9, &body);
	LC_CHECK_EQ_I(t_rk(k.b, k.n, t_key_a, &res, &e), -LC_ERR_HOSTKEY);
	LC_CHECK(strstr(e.msg, "unknown section type") != NULL);
	/* malformed: a hash of the wrong size, an empty key, a bad string */
	t_header(&k, 1);
	body.n = 0;
	t_str(&body, h256, 20);
	t_section(&k, 5, &body);
	LC_CHECK_EQ_I(t_rk(k.b, k.n, t_key_a, &res, &e), -LC_ERR_HOSTKEY);
	LC_CHECK(strstr(e.msg, "rk: malformed KRL (bad key hash)") != NULL);
	t_header(&k, 1);
	body.n = 0;
	t_str(&body, "", 0);
	t_section(&k, 2, &body);
	LC_CHECK_EQ_I(t_rk(k.b, k.n, t_key_a, &res, &e), -LC_ERR_HOSTKEY);
	t_header(&k, 1);
	t_u32(&body, 0xffffffffu);
	t_section(&k, 2, &body);
	LC_CHECK_EQ_I(t_rk(k.b, k.n, t_key_a, &res, &e), -LC_ERR_HOSTKEY);
}

/* Reading the file: missing, a directory, a FIFO, too large, /dev/null. */
LC_TEST(revoked_file_read)
{
	struct lc_revoked_result res;
	struct lc_err e;
	char dir[] = "/tmp/lc-rk-XXXXXX", p[64];
	int fd;

	(void)t_session();
	LC_CHECK(mkdtemp(dir) != NULL);
	snprintf(p, sizeof(p), "%s/missing", dir);
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc_revokedkeys_check(p, t_key_a, 51, &res, &e),
	    -LC_ERR_HOSTKEY);
	LC_CHECK(strstr(e.msg, "No such file or directory") != NULL);
	LC_CHECK_EQ_I(lc_revokedkeys_check(dir, t_key_a, 51, &res, &e),
	    -LC_ERR_HOSTKEY);
	LC_CHECK(strstr(e.msg, "Is a directory") != NULL);
	snprintf(p, sizeof(p), "%s/fifo", dir);
	LC_CHECK(mkfifo(p, 0600) == 0);
	LC_CHECK_EQ_I(lc_revokedkeys_check(p, t_key_a, 51, &res, &e),
	    -LC_ERR_HOSTKEY);
	LC_CHECK(strstr(e.msg, "not a regular file") != NULL);
	snprintf(p, sizeof(p), "%s/big", dir);
	LC_CHECK((fd = open(p, O_WRONLY | O_CREAT, 0600)) >= 0);
	LC_CHECK(ftruncate(fd, (off_t)LC_REVOKED_FILE_MAX + 1) == 0);
	close(fd);
	LC_CHECK_EQ_I(lc_revokedkeys_check(p, t_key_a, 51, &res, &e),
	    -LC_ERR_HOSTKEY);
	LC_CHECK(strstr(e.msg, "larger than") != NULL);
	LC_CHECK_EQ_I(lc_revokedkeys_check("/dev/null", t_key_a, 51, &res,
	    &e), 0);
	LC_CHECK_EQ_I(res.revoked, 0);
	snprintf(p, sizeof(p), "%s/list", dir);
	LC_CHECK((fd = open(p, O_WRONLY | O_CREAT, 0600)) >= 0);
	{
		const char *text = t_kh("ssh-ed25519 %B\nssh-ed25519 %A\n");

		LC_CHECK(write(fd, text, strlen(text)) ==
		    (ssize_t)strlen(text));
	}
	close(fd);
	LC_CHECK_EQ_I(lc_revokedkeys_check(p, t_key_a, 51, &res, &e), 0);
	LC_CHECK_EQ_I(res.revoked, 1);
	LC_CHECK_EQ_U(res.line, 2);
	lc_test_rm_tree(dir);
}

LC_TEST_MAIN()
