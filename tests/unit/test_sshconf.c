#include "harness.h"

#include "err.h"
#include "log.h"
#include "sshconf.h"
#include "sshconf_int.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <sys/stat.h>

/*
 * Each test gets a fresh mkdtemp directory that doubles as the home
 * directory (ctx.home), with .ssh/ inside and a system config path that
 * does not exist unless the test writes it.
 */
static char t_root[128];

static void
t_cleanup(void)
{
	if (t_root[0] != '\0')
		lc_test_rm_tree(t_root);
}

/* A path under the test root; rotating static buffers. */
static const char *
t_path(const char *rel)
{
	static char ring[8][512];
	static unsigned idx;
	char *p = ring[idx++ % 8];

	snprintf(p, sizeof(ring[0]), "%s/%s", t_root, rel);
	return p;
}

static void
t_mkdir(const char *rel)
{
	LC_CHECK(mkdir(t_path(rel), 0755) == 0);
}

static void
t_write_mode(const char *rel, const char *text, mode_t mode)
{
	const char *p = t_path(rel);
	FILE *f = fopen(p, "w");

	LC_CHECK(f != NULL);
	LC_CHECK(fputs(text, f) >= 0);
	LC_CHECK(fclose(f) == 0);
	LC_CHECK(chmod(p, mode) == 0);
}

static void
t_write(const char *rel, const char *text)
{
	t_write_mode(rel, text, 0644);
}

static void
t_setup(struct lc_sshconf_ctx *ctx)
{
	snprintf(t_root, sizeof(t_root), "/tmp/lc-sshconf-XXXXXX");
	LC_CHECK(mkdtemp(t_root) != NULL);
	atexit(t_cleanup);
	t_mkdir(".ssh");
	memset(ctx, 0, sizeof(*ctx));
	ctx->home = t_root;
	ctx->local_user = "alice";
	ctx->system_config = strdup(t_path("system_config"));
	LC_CHECK(ctx->system_config != NULL);
}

static void
t_done(struct lc_sshconf_ctx *ctx)
{
	free((void *)(uintptr_t)ctx->system_config);
	t_cleanup();
	t_root[0] = '\0';
}

static int
t_resolve(const struct lc_sshconf_ctx *ctx, const char *host,
    struct lc_sshconf *c, struct lc_err *e)
{
	lc_err_clear(e);
	return lc_sshconf_resolve(ctx, host, c, e);
}

/* Resolve and expect an error whose message contains want. */
static void
t_expect_err(const struct lc_sshconf_ctx *ctx, const char *host,
    const char *want)
{
	struct lc_sshconf c;
	struct lc_err e;
	int r = t_resolve(ctx, host, &c, &e);

	if (r != -LC_ERR_CONFIG || strstr(e.msg, want) == NULL)
		fprintf(stderr, "want error containing \"%s\", got %d \"%s\"\n",
		    want, r, e.msg);
	LC_CHECK_EQ_I(r, -LC_ERR_CONFIG);
	LC_CHECK_EQ_I(e.code, LC_ERR_CONFIG);
	LC_CHECK(strstr(e.msg, want) != NULL);
	/* a failed resolve leaves only defaults behind */
	LC_CHECK_EQ_U(c.n_identity_files, 0);
	LC_CHECK_EQ_U(c.n_user_known_hosts, 0);
	LC_CHECK_EQ_U(c.port, 0);
	LC_CHECK_EQ_I(c.connect_timeout, -1);
	lc_sshconf_free(&c);
}

static const char *
t_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static const char *
t_fmt(const char *fmt, ...)
{
	static char ring[4][1024];
	static unsigned idx;
	char *p = ring[idx++ % 4];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p, sizeof(ring[0]), fmt, ap);
	va_end(ap);
	return p;
}

/* --- pattern lists --- */

LC_TEST(match_list_wildcards)
{
	LC_CHECK_EQ_I(lc_sshconf_match_list("foo.example.com",
	    "*.example.com"), 1);
	LC_CHECK_EQ_I(lc_sshconf_match_list("example.com", "*.example.com"),
	    0);
	LC_CHECK_EQ_I(lc_sshconf_match_list("a.b", "?.b"), 1);
	LC_CHECK_EQ_I(lc_sshconf_match_list("ab.b", "?.b"), 0);
	LC_CHECK_EQ_I(lc_sshconf_match_list("abc", "a*c"), 1);
	LC_CHECK_EQ_I(lc_sshconf_match_list("abcbc", "a*bc"), 1);
	LC_CHECK_EQ_I(lc_sshconf_match_list("abcbd", "a*bc"), 0);
	LC_CHECK_EQ_I(lc_sshconf_match_list("ab", "a*b*"), 1);
	LC_CHECK_EQ_I(lc_sshconf_match_list("a", "a**"), 1);
	LC_CHECK_EQ_I(lc_sshconf_match_list("ab", "a?c"), 0);
	LC_CHECK_EQ_I(lc_sshconf_match_list("", "*"), 1);
	LC_CHECK_EQ_I(lc_sshconf_match_list("x", ""), 0);
	LC_CHECK_EQ_I(lc_sshconf_match_list("x", "y,x"), 1);
	LC_CHECK_EQ_I(lc_sshconf_match_list("x", "y,z"), 0);
	/* host names and patterns are compared without case */
	LC_CHECK_EQ_I(lc_sshconf_match_list("FOO.Example.com",
	    "*.EXAMPLE.com"), 1);
	/* a space is not a separator in a pattern list */
	LC_CHECK_EQ_I(lc_sshconf_match_list("b", "a b"), 0);
	LC_CHECK_EQ_I(lc_sshconf_match_list(NULL, "*"), 0);
	LC_CHECK_EQ_I(lc_sshconf_match_list("x", NULL), 0);
}

LC_TEST(match_list_negation)
{
	const char *pl = "*.example.com,!bad.*";

	/* a negated match wins even though a positive one came first */
	LC_CHECK_EQ_I(lc_sshconf_match_list("bad.example.com", pl), -1);
	LC_CHECK_EQ_I(lc_sshconf_match_list("good.example.com", pl), 1);
	LC_CHECK_EQ_I(lc_sshconf_match_list("bad.other.org", pl), -1);
	LC_CHECK_EQ_I(lc_sshconf_match_list("x.other.org", pl), 0);
	/* negation alone never gives a positive match */
	LC_CHECK_EQ_I(lc_sshconf_match_list("other", "!bad"), 0);
	LC_CHECK_EQ_I(lc_sshconf_match_list("bad", "!bad"), -1);
	LC_CHECK_EQ_I(lc_sshconf_match_list("BAD", "!bad,*"), -1);
}

LC_TEST(match_list_limits)
{
	char name[1100], pat[1100];

	/* sub-patterns of 1023 bytes or more never match, as in ssh */
	memset(name, 'a', 1022);
	name[1022] = '\0';
	pat[0] = '*';
	memset(pat + 1, 'a', 1021);
	pat[1022] = '\0';			/* 1022 bytes: fine */
	LC_CHECK_EQ_I(lc_sshconf_match_list(name, pat), 1);
	pat[1022] = 'a';
	pat[1023] = '\0';			/* 1023 bytes: too long */
	LC_CHECK_EQ_I(lc_sshconf_match_list(name, pat), 0);
	/* backtracking stays linear (an exponential matcher times out) */
	memset(name, 'a', 1000);
	name[1000] = '\0';
	LC_CHECK_EQ_I(lc_sshconf_match_list(name,
	    "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"), 0);
}

/* --- resolving --- */

LC_TEST(defaults_without_files)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_STR(c.host, "web");
	LC_CHECK_STR(c.hostname, "web");
	LC_CHECK_STR(c.user, "");
	LC_CHECK_EQ_U(c.port, 0);
	LC_CHECK_EQ_U(c.n_identity_files, 0);
	LC_CHECK_EQ_U(c.n_user_known_hosts, 0);
	LC_CHECK_EQ_U(c.n_global_known_hosts, 0);
	LC_CHECK_EQ_I(c.identities_only, -1);
	LC_CHECK_EQ_I(c.strict, LC_STRICT_UNSET);
	LC_CHECK_EQ_I(c.connect_timeout, -1);
	LC_CHECK_EQ_I(c.server_alive_interval, -1);
	LC_CHECK_EQ_I(c.server_alive_count_max, -1);
	LC_CHECK_EQ_I(c.hash_known_hosts, -1);
	LC_CHECK_EQ_I(c.batch_mode, -1);
	LC_CHECK_EQ_I(c.identity_files_none, 0);
	LC_CHECK_EQ_I(c.user_known_hosts_none, 0);
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(bad_host_argument)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;
	char big[300];

	t_setup(&ctx);
	LC_CHECK_EQ_I(t_resolve(&ctx, "", &c, &e), -LC_ERR_USAGE);
	LC_CHECK_EQ_I(t_resolve(&ctx, NULL, &c, &e), -LC_ERR_USAGE);
	memset(big, 'h', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	LC_CHECK_EQ_I(t_resolve(&ctx, big, &c, &e), -LC_ERR_USAGE);
	LC_CHECK_EQ_I(t_resolve(NULL, "web", &c, &e), -LC_ERR_USAGE);
	t_done(&ctx);
}

LC_TEST(host_patterns_and_negation)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "Host *.example.com !bad.example.com\n"
	    "  User web\n"
	    "Host bad.example.com\n"
	    "  User bad\n"
	    "Host !nothing\n"
	    "  Port 3333\n"
	    "Host a,b\n"
	    "  Port 1111\n"
	    "Host zz a b?\n"
	    "  Port 2222\n"
	    "Host Upper\n"
	    "  Port 4444\n"
	    "Host *\n"
	    "  User default\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "x.example.com", &c, &e), 0);
	LC_CHECK_STR(c.user, "web");
	LC_CHECK_EQ_U(c.port, 0);	/* "Host !nothing" alone never applies */
	lc_sshconf_free(&c);
	/* the negated pattern excludes the block even though * matched */
	LC_CHECK_EQ_I(t_resolve(&ctx, "bad.example.com", &c, &e), 0);
	LC_CHECK_STR(c.user, "bad");
	lc_sshconf_free(&c);
	/* as ssh: Host takes blank-separated patterns, a comma is literal */
	LC_CHECK_EQ_I(t_resolve(&ctx, "a", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 2222);
	LC_CHECK_STR(c.user, "default");
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(t_resolve(&ctx, "a,b", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 1111);
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(t_resolve(&ctx, "bx", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 2222);
	lc_sshconf_free(&c);
	/* as ssh: Host patterns are compared with the name as typed */
	LC_CHECK_EQ_I(t_resolve(&ctx, "upper", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 0);
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(t_resolve(&ctx, "Upper", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 4444);
	LC_CHECK_STR(c.hostname, "upper");	/* lowercased, as ssh */
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(first_value_wins)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "Port 1000\n"
	    "Host web\n"
	    "  Port 2000\n"
	    "  ConnectTimeout 5\n"
	    "  StrictHostKeyChecking accept-new\n"
	    "  User first\n"
	    "Host *\n"
	    "  ConnectTimeout 10\n"
	    "  ServerAliveInterval 15\n"
	    "  StrictHostKeyChecking no\n"
	    "  User second\n");
	t_write("system_config",
	    "Host *\n"
	    "  Port 3000\n"
	    "  ServerAliveInterval 99\n"
	    "  ServerAliveCountMax 4\n"
	    "  BatchMode yes\n"
	    "  User system\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 1000);
	LC_CHECK_EQ_I(c.connect_timeout, 5);
	LC_CHECK_EQ_I(c.strict, LC_STRICT_ACCEPT_NEW);
	LC_CHECK_STR(c.user, "first");
	LC_CHECK_EQ_I(c.server_alive_interval, 15);
	/* the system file fills in what the user file left unset */
	LC_CHECK_EQ_I(c.server_alive_count_max, 4);
	LC_CHECK_EQ_I(c.batch_mode, 1);
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(t_resolve(&ctx, "db", &c, &e), 0);
	LC_CHECK_EQ_I(c.connect_timeout, 10);
	LC_CHECK_EQ_I(c.strict, LC_STRICT_NO);
	LC_CHECK_STR(c.user, "second");
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(identity_files_accumulate)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "Host web\n"
	    "  IdentityFile ~/.ssh/web\n"
	    "  IdentityFile ~/.ssh/shared\n"
	    "Host db\n"
	    "  IdentityFile ~/.ssh/db\n"
	    "Host *\n"
	    "  IdentityFile ~/.ssh/shared\n"	/* duplicate: dropped */
	    "  IdentityFile ~/.ssh/all\n"
	    "  IdentitiesOnly yes\n");
	t_write("system_config",
	    "IdentityFile /etc/ssh/sys_key\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.n_identity_files, 4);
	LC_CHECK_STR(c.identity_files[0], t_path(".ssh/web"));
	LC_CHECK_STR(c.identity_files[1], t_path(".ssh/shared"));
	LC_CHECK_STR(c.identity_files[2], t_path(".ssh/all"));
	LC_CHECK_STR(c.identity_files[3], "/etc/ssh/sys_key");
	LC_CHECK_EQ_I(c.identities_only, 1);
	LC_CHECK_EQ_I(c.identity_files_none, 0);
	lc_sshconf_free(&c);
	LC_CHECK_EQ_U(c.n_identity_files, 0);	/* free resets */
	lc_sshconf_free(&c);			/* and is repeatable */
	lc_sshconf_free(NULL);
	t_done(&ctx);
}

LC_TEST(certificate_file_applies)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "Host web\n"
	    "  CertificateFile ~/.ssh/id_ed25519-cert.pub\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_I(c.certificate_file, 1);
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(t_resolve(&ctx, "db", &c, &e), 0);
	LC_CHECK_EQ_I(c.certificate_file, 0);
	lc_sshconf_free(&c);
	/* a bad line is an error even where it does not apply, as ssh */
	t_write(".ssh/config",
	    "Host bad\n"
	    "  CertificateFile\n");
	t_expect_err(&ctx, "db", "missing argument for CertificateFile");
	t_done(&ctx);
}

LC_TEST(identity_file_none)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "Host web\n"
	    "  IdentityFile none\n"
	    "Host *\n"
	    "  IdentityFile /k/all\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_I(c.identity_files_none, 1);
	LC_CHECK_EQ_U(c.n_identity_files, 1);
	LC_CHECK_STR(c.identity_files[0], "/k/all");
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(t_resolve(&ctx, "db", &c, &e), 0);
	LC_CHECK_EQ_I(c.identity_files_none, 0);
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(identity_file_limit)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;
	char text[2048];
	size_t n = 0;
	int i;

	t_setup(&ctx);
	for (i = 0; i < LC_SSHCONF_MAX_FILES; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
		    "IdentityFile /k/%d\n", i);
	t_write(".ssh/config", text);
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.n_identity_files, LC_SSHCONF_MAX_FILES);
	LC_CHECK_STR(c.identity_files[LC_SSHCONF_MAX_FILES - 1],
	    t_fmt("/k/%d", LC_SSHCONF_MAX_FILES - 1));
	lc_sshconf_free(&c);
	snprintf(text + n, sizeof(text) - n, "IdentityFile /k/extra\n");
	t_write(".ssh/config", text);
	t_expect_err(&ctx, "web", t_fmt("line %d: too many IdentityFile",
	    LC_SSHCONF_MAX_FILES + 1));
	t_done(&ctx);
}

LC_TEST(tokens_expand)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;
	struct passwd *pw;
	char thishost[256], shorthost[256];

	LC_CHECK(gethostname(thishost, sizeof(thishost)) == 0);
	snprintf(shorthost, sizeof(shorthost), "%.*s",
	    (int)strcspn(thishost, "."), thishost);
	t_setup(&ctx);
	t_write(".ssh/config",
	    "Host web\n"
	    "  HostName Web.Example.COM\n"
	    "  Port 2222\n"
	    "  User bob\n"
	    "  HostKeyAlias webalias\n"
	    "  IdentityFile ~/.ssh/id_%h_%p\n"
	    "  IdentityFile %d/k/%u-%r-%n\n"
	    "  IdentityFile /k/%l/%L/%i/%k/100%%\n"
	    "  IdentityFile ~\n"
	    "  IdentityFile ~root/x\n"
	    "  UserKnownHostsFile ~/kh/%n %d/kh2\n"
	    "  GlobalKnownHostsFile /etc/kh/%h:%p\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_STR(c.hostname, "web.example.com");
	LC_CHECK_EQ_U(c.n_identity_files, 5);
	LC_CHECK_STR(c.identity_files[0],
	    t_path(".ssh/id_web.example.com_2222"));
	LC_CHECK_STR(c.identity_files[1], t_path("k/alice-bob-web"));
	LC_CHECK_STR(c.identity_files[2], t_fmt("/k/%s/%s/%llu/webalias/100%%",
	    thishost, shorthost, (unsigned long long)getuid()));
	LC_CHECK_STR(c.identity_files[3], t_path(""));	/* "~" is "~/" */
	pw = getpwnam("root");
	LC_CHECK(pw != NULL);
	LC_CHECK_STR(c.identity_files[4], t_fmt("%s%sx", pw->pw_dir,
	    strcmp(pw->pw_dir, "/") == 0 ? "" : "/"));
	LC_CHECK_EQ_U(c.n_user_known_hosts, 2);
	LC_CHECK_STR(c.user_known_hosts[0], t_path("kh/web"));
	LC_CHECK_STR(c.user_known_hosts[1], t_path("kh2"));
	LC_CHECK_EQ_U(c.n_global_known_hosts, 1);
	LC_CHECK_STR(c.global_known_hosts[0],
	    "/etc/kh/web.example.com:2222");
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(tokens_defaults)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	/* no Port: %p is 22; no User: %r is the local user; %k is %n */
	t_setup(&ctx);
	t_write(".ssh/config", "IdentityFile /k/%r@%h:%p/%k\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "DB", &c, &e), 0);
	LC_CHECK_STR(c.identity_files[0], "/k/alice@db:22/DB");
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(tokens_environment)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	LC_CHECK(setenv("LC_TEST_KEYDIR", "/keys/%h", 1) == 0);
	unsetenv("LC_TEST_UNSET_VAR");
	t_write(".ssh/config", "IdentityFile ${LC_TEST_KEYDIR}/id_%h\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	/* the variable's value is taken literally */
	LC_CHECK_STR(c.identity_files[0], "/keys/%h/id_web");
	lc_sshconf_free(&c);
	t_write(".ssh/config", "Host other\n"
	    "IdentityFile ${LC_TEST_UNSET_VAR}/id\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);	/* not used */
	lc_sshconf_free(&c);
	t_expect_err(&ctx, "other", "environment variable LC_TEST_UNSET_VAR "
	    "is not set");
	t_write(".ssh/config", "IdentityFile ${BAD-NAME}/id\n");
	t_expect_err(&ctx, "web", "line 1: bad value for IdentityFile: "
	    "'${BAD-NAME}/id' (bad ${} reference)");
	t_done(&ctx);
}

LC_TEST(tokens_refused)
{
	struct lc_sshconf_ctx ctx;

	t_setup(&ctx);
	t_write(".ssh/config", "# keys\n\nIdentityFile ~/.ssh/id_%x\n");
	t_expect_err(&ctx, "web", t_fmt("%s line 3: bad value for "
	    "IdentityFile: '~/.ssh/id_%%x' (unknown token %%x)",
	    t_path(".ssh/config")));
	t_write(".ssh/config", "UserKnownHostsFile /kh/50%\n");
	t_expect_err(&ctx, "web", "line 1: bad value for UserKnownHostsFile: "
	    "'/kh/50%' (unknown token");
	t_write(".ssh/config", "Host nomatch\n  HostName %d.example.com\n");
	t_expect_err(&ctx, "web", "line 2: bad value for HostName: "
	    "'%d.example.com' (unknown token %d)");
	/* %C is a valid ssh token lanecp does not produce: refused on use */
	t_write(".ssh/config", "IdentityFile ~/.ssh/%C\n");
	t_expect_err(&ctx, "web", "IdentityFile '~/.ssh/%C': token %C is not "
	    "supported");
	t_done(&ctx);
}

LC_TEST(hostname_expansion)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "Host db\n"
	    "  HostName %h.internal\n"
	    "Host pct\n"
	    "  HostName 100%%.%h\n"
	    "Host v6\n"
	    "  HostName FE80::1\n"
	    "Host Mixed\n"
	    "  HostName Mixed.%h.Example\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "db", &c, &e), 0);
	LC_CHECK_STR(c.hostname, "db.internal");
	LC_CHECK_STR(c.host, "db");
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(t_resolve(&ctx, "pct", &c, &e), 0);
	LC_CHECK_STR(c.hostname, "100%.pct");
	lc_sshconf_free(&c);
	/* addresses are not lowercased, names are (as ssh) */
	LC_CHECK_EQ_I(t_resolve(&ctx, "v6", &c, &e), 0);
	LC_CHECK_STR(c.hostname, "FE80::1");
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(t_resolve(&ctx, "Mixed", &c, &e), 0);
	LC_CHECK_STR(c.hostname, "mixed.mixed.example");
	LC_CHECK_STR(c.host, "Mixed");
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(known_hosts_first_line_wins)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "Host web\n"
	    "  UserKnownHostsFile ~/.ssh/kh1 \"/tmp/kh 2\"\n"
	    "Host *\n"
	    "  UserKnownHostsFile ~/.ssh/kh3\n"
	    "  GlobalKnownHostsFile /etc/g1 /etc/g2\n"
	    "  GlobalKnownHostsFile /etc/g3\n"
	    "Host quiet\n"
	    "  UserKnownHostsFile none\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.n_user_known_hosts, 2);
	LC_CHECK_STR(c.user_known_hosts[0], t_path(".ssh/kh1"));
	LC_CHECK_STR(c.user_known_hosts[1], "/tmp/kh 2");
	LC_CHECK_EQ_U(c.n_global_known_hosts, 2);
	LC_CHECK_STR(c.global_known_hosts[0], "/etc/g1");
	LC_CHECK_STR(c.global_known_hosts[1], "/etc/g2");
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(t_resolve(&ctx, "db", &c, &e), 0);
	LC_CHECK_EQ_U(c.n_user_known_hosts, 1);
	LC_CHECK_STR(c.user_known_hosts[0], t_path(".ssh/kh3"));
	LC_CHECK_EQ_I(c.user_known_hosts_none, 0);
	lc_sshconf_free(&c);
	t_write(".ssh/config",
	    "Host quiet\n"
	    "  UserKnownHostsFile none\n"
	    "  GlobalKnownHostsFile none\n"
	    "Host *\n"
	    "  UserKnownHostsFile ~/.ssh/kh3\n"
	    "  GlobalKnownHostsFile /etc/g3\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "quiet", &c, &e), 0);
	LC_CHECK_EQ_I(c.user_known_hosts_none, 1);
	LC_CHECK_EQ_U(c.n_user_known_hosts, 0);
	LC_CHECK_EQ_I(c.global_known_hosts_none, 1);
	LC_CHECK_EQ_U(c.n_global_known_hosts, 0);
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(quotes_equals_and_comments)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "# a comment\n"
	    "\n"
	    "   \t\n"
	    "Port=2200\n"
	    "User = \"bob smith\"\n"
	    "HOSTNAME   =  \"h.example.com\"   # trailing comment\n"
	    "IdentityFile \"~/.ssh/my key\"\n"
	    "IdentityFile ~/.ssh/esc\\ aped\n"
	    "identityfile '~/.ssh/single # not a comment'\n"
	    "ConnectTimeout\t=7\n"
	    "  BatchMode no  \r\n"
	    "ServerAliveCountMax \"3\"\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 2200);
	LC_CHECK_STR(c.user, "bob smith");
	LC_CHECK_STR(c.hostname, "h.example.com");
	LC_CHECK_EQ_U(c.n_identity_files, 3);
	LC_CHECK_STR(c.identity_files[0], t_path(".ssh/my key"));
	LC_CHECK_STR(c.identity_files[1], t_path(".ssh/esc aped"));
	LC_CHECK_STR(c.identity_files[2],
	    t_path(".ssh/single # not a comment"));
	LC_CHECK_EQ_I(c.connect_timeout, 7);
	LC_CHECK_EQ_I(c.batch_mode, 0);
	LC_CHECK_EQ_I(c.server_alive_count_max, 3);
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(unknown_keywords_ignored)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "LocalCommand echo %h \"unbalanced\n"
	    "SendEnv LANG LC_*\n"
	    "Ciphers +aes256-ctr\n"
	    "NoSuchOption\n"
	    "GSSAPIAuthentication yes\n"
	    "Port 2022\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 2022);
	lc_sshconf_free(&c);
	t_done(&ctx);
}

struct t_bad {
	const char *line;
	const char *msg;	/* after "FILE line 3: " */
};

LC_TEST(bad_values_name_file_and_line)
{
	static const struct t_bad cases[] = {
		{ "Port 0", "bad value for Port: '0'" },
		{ "Port abc", "bad value for Port: 'abc'" },
		{ "Port 65536", "bad value for Port: '65536'" },
		{ "Port -1", "bad value for Port: '-1'" },
		{ "port=22x", "bad value for Port: '22x'" },
		{ "StrictHostKeyChecking maybe",
		    "bad value for StrictHostKeyChecking: 'maybe'" },
		{ "ConnectTimeout -1", "bad value for ConnectTimeout: '-1'" },
		{ "ConnectTimeout 10x", "bad value for ConnectTimeout: '10x'" },
		{ "ConnectTimeout 99999999999",
		    "bad value for ConnectTimeout: '99999999999'" },
		{ "ConnectTimeout 4000000w",
		    "bad value for ConnectTimeout: '4000000w'" },
		{ "ServerAliveInterval 1.5",
		    "bad value for ServerAliveInterval: '1.5'" },
		{ "ServerAliveCountMax -3",
		    "bad value for ServerAliveCountMax: '-3'" },
		{ "ServerAliveCountMax 3s",
		    "bad value for ServerAliveCountMax: '3s'" },
		{ "IdentitiesOnly maybe",
		    "bad value for IdentitiesOnly: 'maybe'" },
		{ "HashKnownHosts 1", "bad value for HashKnownHosts: '1'" },
		{ "BatchMode y", "bad value for BatchMode: 'y'" },
		{ "Port", "missing argument for Port" },
		{ "Port \"\"", "missing argument for Port" },
		{ "Port 22 23", "extra arguments for Port: '23'" },
		{ "IdentityFile a b", "extra arguments for IdentityFile: 'b'" },
		{ "User \"bob", "unterminated quote" },
		{ "Host \"\"", "empty argument for Host" },
		{ "Match", "missing argument for Match" },
		{ "Match host", "missing Match criteria for 'host'" },
		{ "Match exec", "missing Match criteria for 'exec'" },
		{ "Match all host foo",
		    "'all' cannot be combined with other Match attributes" },
		{ "UserKnownHostsFile none /kh",
		    "UserKnownHostsFile: \"none\" must appear alone" },
		{ "GlobalKnownHostsFile /kh \"\"",
		    "empty argument for GlobalKnownHostsFile" },
		{ "Include \"\"", "empty argument for Include" },
	};
	struct lc_sshconf_ctx ctx;
	char text[512];
	size_t i;

	t_setup(&ctx);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* bad values fail even where the block does not apply */
		snprintf(text, sizeof(text), "Host nomatch\n# pad\n%s\n",
		    cases[i].line);
		t_write(".ssh/config", text);
		t_expect_err(&ctx, "web", t_fmt("%s line 3: %s",
		    t_path(".ssh/config"), cases[i].msg));
	}
	t_done(&ctx);
}

LC_TEST(strict_and_flag_spellings)
{
	static const struct {
		const char *v;
		enum lc_strict want;
	} cases[] = {
		{ "yes", LC_STRICT_YES }, { "True", LC_STRICT_YES },
		{ "no", LC_STRICT_NO }, { "FALSE", LC_STRICT_NO },
		{ "off", LC_STRICT_NO }, { "ask", LC_STRICT_ASK },
		{ "accept-new", LC_STRICT_ACCEPT_NEW },
		{ "Accept-New", LC_STRICT_ACCEPT_NEW },
	};
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;
	char text[256];
	size_t i;

	t_setup(&ctx);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "StrictHostKeyChecking %s\n"
		    "StrictHostKeyChecking yes\n", cases[i].v);
		t_write(".ssh/config", text);
		LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
		LC_CHECK_EQ_I(c.strict, cases[i].want);
		lc_sshconf_free(&c);
	}
	t_write(".ssh/config",
	    "BatchMode true\nIdentitiesOnly FALSE\nHashKnownHosts Yes\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_I(c.batch_mode, 1);
	LC_CHECK_EQ_I(c.identities_only, 0);
	LC_CHECK_EQ_I(c.hash_known_hosts, 1);
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(time_values)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "ConnectTimeout none\n"	/* as ssh: leaves it unset */
	    "ConnectTimeout 1m30s\n"
	    "ServerAliveInterval 2H\n"
	    "ServerAliveCountMax 0\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_I(c.connect_timeout, 90);
	LC_CHECK_EQ_I(c.server_alive_interval, 7200);
	LC_CHECK_EQ_I(c.server_alive_count_max, 0);
	lc_sshconf_free(&c);
	t_write(".ssh/config", "ConnectTimeout 0\nServerAliveInterval 1w1d\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_I(c.connect_timeout, 0);
	LC_CHECK_EQ_I(c.server_alive_interval, 8 * 86400);
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(include_glob_and_relative)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_mkdir(".ssh/conf.d");
	t_mkdir(".ssh/conf.d/subdir.conf");	/* directories are skipped */
	t_mkdir("abs");
	t_write(".ssh/conf.d/20-b.conf",
	    "Host web\n  Port 2020\n  User fromb\n");
	t_write(".ssh/conf.d/10-a.conf", "Host web\n  Port 1010\n");
	t_write(".ssh/conf.d/x.txt", "User fromtxt\n");
	t_write(".ssh/tilde.inc", "ConnectTimeout 42\n");
	t_write("abs/abs.inc", "ServerAliveInterval 43\n");
	t_write(".ssh/config", t_fmt(
	    "Include conf.d/*.conf nothing/*.conf\n"
	    "Include ~/.ssh/tilde.inc\n"
	    "Include %s/abs/*.inc\n", t_root));
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 1010);	/* sorted: 10-a.conf first */
	LC_CHECK_STR(c.user, "fromb");
	LC_CHECK_EQ_I(c.connect_timeout, 42);
	LC_CHECK_EQ_I(c.server_alive_interval, 43);
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(t_resolve(&ctx, "db", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 0);
	LC_CHECK_STR(c.user, "");
	lc_sshconf_free(&c);
	/* an error in an included file names that file and its line */
	t_write(".ssh/conf.d/20-b.conf", "Host web\n  Port 2020x\n");
	t_expect_err(&ctx, "db", t_fmt("%s line 2: bad value for Port: "
	    "'2020x'", t_path(".ssh/conf.d/20-b.conf")));
	t_done(&ctx);
}

LC_TEST(include_inside_host_block)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/web.inc",
	    "IdentityFile ~/.ssh/web_key\n"
	    "Port 1234\n"
	    "Host nomatch\n"		/* ends with the included file */
	    "  Port 9\n");
	t_write(".ssh/other.inc",
	    "IdentityFile ~/.ssh/other_key\n"
	    "User other\n"
	    "Host *\n"			/* never matches from a skipped block */
	    "  ServerAliveCountMax 7\n");
	t_write(".ssh/config",
	    "Host other\n"
	    "  Include other.inc\n"
	    "Host web\n"
	    "  Include web.inc\n"
	    "  User afterinclude\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.n_identity_files, 1);
	LC_CHECK_STR(c.identity_files[0], t_path(".ssh/web_key"));
	LC_CHECK_EQ_U(c.port, 1234);
	LC_CHECK_STR(c.user, "afterinclude");
	LC_CHECK_EQ_I(c.server_alive_count_max, -1);
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(t_resolve(&ctx, "other", &c, &e), 0);
	LC_CHECK_STR(c.user, "other");
	LC_CHECK_EQ_I(c.server_alive_count_max, 7);
	LC_CHECK_STR(c.identity_files[0], t_path(".ssh/other_key"));
	lc_sshconf_free(&c);
	/* a skipped include is still checked, as ssh does */
	t_write(".ssh/other.inc", "Port abc\n");
	t_expect_err(&ctx, "web", t_fmt("%s line 1: bad value for Port: "
	    "'abc'", t_path(".ssh/other.inc")));
	t_done(&ctx);
}

LC_TEST(include_depth_limit)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;
	char name[32], text[64];
	int i;

	t_setup(&ctx);
	t_write(".ssh/config", "Include config\n");
	t_expect_err(&ctx, "web", "line 1: Include nested too deeply (max 16)");
	/* 16 levels below the top file are fine */
	t_write(".ssh/config", "Include inc1\n");
	for (i = 1; i <= 16; i++) {
		snprintf(name, sizeof(name), ".ssh/inc%d", i);
		if (i < 16)
			snprintf(text, sizeof(text), "Include inc%d\n", i + 1);
		else
			snprintf(text, sizeof(text), "Port 1616\n");
		t_write(name, text);
	}
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 1616);
	lc_sshconf_free(&c);
	t_write(".ssh/inc16", "Include inc17\n");
	t_write(".ssh/inc17", "Port 1717\n");
	t_expect_err(&ctx, "web", t_fmt("%s line 1: Include nested too deeply",
	    t_path(".ssh/inc16")));
	t_done(&ctx);
}

LC_TEST(include_system_rules)
{
	struct lc_sshconf_ctx ctx;

	t_setup(&ctx);
	t_write("system_config", "Include ~/x.conf\n");
	t_expect_err(&ctx, "web", "line 1: bad Include path '~/x.conf'");
	t_done(&ctx);
}

LC_TEST(include_file_permissions)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write_mode(".ssh/config", "Port 1\n", 0666);
	t_expect_err(&ctx, "web", t_fmt("bad owner or permissions on %s",
	    t_path(".ssh/config")));
	t_write_mode(".ssh/config", "Include inc\n", 0600);
	t_write_mode(".ssh/inc", "Port 1\n", 0664);
	t_expect_err(&ctx, "web", t_fmt("bad owner or permissions on %s",
	    t_path(".ssh/inc")));
	/* as ssh, the system file and -F files are not checked */
	t_write_mode(".ssh/inc", "Port 1\n", 0644);
	t_write_mode("system_config", "User sys\n", 0666);
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 1);
	LC_CHECK_STR(c.user, "sys");
	lc_sshconf_free(&c);
	ctx.config_file = t_path("system_config");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_STR(c.user, "sys");
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(match_criteria)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "Host web\n"
	    "  HostName web.internal\n"
	    "Match host nomatch\n"
	    "  Port 1\n"
	    "Match exec true\n"
	    "  IdentityFile ~/.ssh/two\n"
	    "Match !exec false\n"
	    "  IdentityFile ~/.ssh/three\n"
	    "Match canonical\n"
	    "  IdentityFile ~/.ssh/four\n"
	    "Match final\n"
	    "  IdentityFile ~/.ssh/five\n"
	    "Match host web\n"			/* HostName is what counts */
	    "  Port 6\n"
	    "Match originalhost web !user bob\n"
	    "  ConnectTimeout 11\n"
	    "Match host WEB.INTERNAL user alice localuser al*\n"
	    "  Port 7\n"
	    "Match !final\n"
	    "  ServerAliveCountMax 8\n"
	    "Match tagged x\n"
	    "  BatchMode yes\n"
	    "Match !all\n"
	    "  User never\n"
	    "Match all\n"
	    "  User everyone\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 7);
	LC_CHECK_EQ_U(c.n_identity_files, 0);
	LC_CHECK_EQ_I(c.connect_timeout, 11);
	LC_CHECK_EQ_I(c.server_alive_count_max, 8);
	LC_CHECK_EQ_I(c.batch_mode, -1);
	LC_CHECK_STR(c.user, "everyone");
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(t_resolve(&ctx, "db", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 0);
	LC_CHECK_EQ_I(c.connect_timeout, -1);
	LC_CHECK_STR(c.user, "everyone");
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(match_unsupported_logs_once)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;
	char buf[4096];
	const char *p;
	ssize_t n;
	int fd, count = 0;

	t_setup(&ctx);
	fd = open(t_path("log"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	LC_CHECK(fd >= 0);
	lc_log_init("test", LC_LOG_VERBOSE, fd);
	t_write(".ssh/config",
	    "Match host nomatch exec true\n"	/* fails anyway: no log */
	    "  Port 1\n"
	    "Match exec \"test -e /\" exec true\n"
	    "  IdentityFile ~/.ssh/two\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 0);
	LC_CHECK_EQ_U(c.n_identity_files, 0);
	lc_sshconf_free(&c);
	LC_CHECK(lseek(fd, 0, SEEK_SET) == 0);
	n = read(fd, buf, sizeof(buf) - 1);
	LC_CHECK(n > 0);
	buf[n] = '\0';
	for (p = buf; (p = strstr(p, "not supported")) != NULL; p++)
		count++;
	LC_CHECK_EQ_I(count, 1);
	LC_CHECK(strstr(buf, "line 3: Match exec is not supported") != NULL);
	close(fd);
	lc_log_init("test", LC_LOG_INFO, 2);
	t_done(&ctx);
}

LC_TEST(cmdline_user_precedence)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "Match user carol\n"
	    "  Port 3003\n"
	    "Match user bob\n"
	    "  Port 2002\n"
	    "Host *\n"
	    "  User bob\n"
	    "  IdentityFile /k/%r\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_STR(c.user, "bob");
	LC_CHECK_EQ_U(c.port, 0);	/* User bob came after the Match */
	LC_CHECK_STR(c.identity_files[0], "/k/bob");
	lc_sshconf_free(&c);
	ctx.cmdline_user = "carol";
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_STR(c.user, "carol");
	LC_CHECK_EQ_U(c.port, 3003);
	LC_CHECK_STR(c.identity_files[0], "/k/carol");
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(config_file_option)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config", "Port 1\n");
	t_write("system_config", "User sys\n");
	t_write("alt.conf", "Port 3000\nInclude rel.inc\n");
	t_write(".ssh/rel.inc", "ConnectTimeout 4\n");
	/* -F alone: neither default file is read; relative to ~/.ssh */
	ctx.config_file = t_path("alt.conf");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 3000);
	LC_CHECK_STR(c.user, "");
	LC_CHECK_EQ_I(c.connect_timeout, 4);
	lc_sshconf_free(&c);
	/* -F none: no file at all */
	ctx.config_file = "none";
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 0);
	LC_CHECK_STR(c.user, "");
	lc_sshconf_free(&c);
	/* a missing -F file is an error naming it */
	ctx.config_file = t_path("missing.conf");
	t_expect_err(&ctx, "web", t_fmt("cannot open ssh config %s",
	    t_path("missing.conf")));
	ctx.config_file = t_path(".ssh");
	t_expect_err(&ctx, "web", "is a directory");
	t_done(&ctx);
}

LC_TEST(line_limits)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;
	static char text[8192];
	size_t n;

	t_setup(&ctx);
	/* exactly 4096 bytes is fine */
	strcpy(text, "Port 2\n#");
	n = strlen(text);
	memset(text + n, 'x', 4095);
	n += 4095;
	memcpy(text + n, "\nUser u\n", 9);
	t_write(".ssh/config", text);
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_STR(c.user, "u");
	lc_sshconf_free(&c);
	/* 4097 is not */
	text[n] = 'x';
	memcpy(text + n + 1, "\nUser u\n", 9);
	t_write(".ssh/config", text);
	t_expect_err(&ctx, "web", "line 2: line longer than 4096 bytes");
	/* nor is a NUL byte */
	{
		FILE *f = fopen(t_path(".ssh/config"), "w");
		LC_CHECK(f != NULL);
		LC_CHECK(fwrite("Port 2\nUser a\0b\n", 1, 16, f) == 16);
		LC_CHECK(fclose(f) == 0);
	}
	t_expect_err(&ctx, "web", "line 2: NUL byte");
	/* no newline at the end of the file is fine */
	t_write(".ssh/config", "Port 5");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 5);
	lc_sshconf_free(&c);
	t_done(&ctx);
}

/* Debian 12's /etc/ssh/ssh_config, with the Include aimed at our dir. */
static const char t_debian_config[] =
    "\n"
    "# This is the ssh client system-wide configuration file.  See\n"
    "# ssh_config(5) for more information.  This file provides defaults for\n"
    "# users, and the values can be changed in per-user configuration files\n"
    "# or on the command line.\n"
    "\n"
    "# Configuration data is parsed as follows:\n"
    "#  1. command line options\n"
    "#  2. user-specific file\n"
    "#  3. system-wide file\n"
    "# Any configuration value is only changed the first time it is set.\n"
    "# Thus, host-specific definitions should be at the beginning of the\n"
    "# configuration file, and defaults at the end.\n"
    "\n"
    "# Site-wide defaults for some commonly used options.  For a comprehensive\n"
    "# list of available options, their meanings and defaults, please see the\n"
    "# ssh_config(5) man page.\n"
    "\n"
    "Include %s/ssh_config.d/*.conf\n"
    "\n"
    "Host *\n"
    "#   ForwardAgent no\n"
    "#   ForwardX11 no\n"
    "#   ForwardX11Trusted yes\n"
    "#   PasswordAuthentication yes\n"
    "#   HostbasedAuthentication no\n"
    "#   GSSAPIAuthentication no\n"
    "#   GSSAPIDelegateCredentials no\n"
    "#   GSSAPIKeyExchange no\n"
    "#   GSSAPITrustDNS no\n"
    "#   BatchMode no\n"
    "#   CheckHostIP yes\n"
    "#   AddressFamily any\n"
    "#   ConnectTimeout 0\n"
    "#   StrictHostKeyChecking ask\n"
    "#   IdentityFile ~/.ssh/id_rsa\n"
    "#   IdentityFile ~/.ssh/id_dsa\n"
    "#   IdentityFile ~/.ssh/id_ecdsa\n"
    "#   IdentityFile ~/.ssh/id_ed25519\n"
    "#   Port 22\n"
    "#   Ciphers aes128-ctr,aes192-ctr,aes256-ctr,aes128-cbc,3des-cbc\n"
    "#   MACs hmac-md5,hmac-sha1,umac-64@openssh.com\n"
    "#   EscapeChar ~\n"
    "#   Tunnel no\n"
    "#   TunnelDevice any:any\n"
    "#   PermitLocalCommand no\n"
    "#   VisualHostKey no\n"
    "#   ProxyCommand ssh -q -W %%h:%%p gateway.example.com\n"
    "#   RekeyLimit 1G 1h\n"
    "#   UserKnownHostsFile ~/.ssh/known_hosts.d/%%k\n"
    "    SendEnv LANG LC_*\n"
    "    HashKnownHosts yes\n"
    "    GSSAPIAuthentication yes\n";

LC_TEST(debian_default_config)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;
	char text[4096];

	t_setup(&ctx);
	t_mkdir("ssh_config.d");
	t_write("ssh_config.d/20-site.conf", "Host *.corp\n  Port 2222\n");
	LC_CHECK((size_t)snprintf(text, sizeof(text), t_debian_config,
	    t_root) < sizeof(text));
	t_write("system_config", text);
	LC_CHECK_EQ_I(t_resolve(&ctx, "web.corp", &c, &e), 0);
	LC_CHECK_EQ_I(c.hash_known_hosts, 1);
	LC_CHECK_EQ_U(c.port, 2222);
	LC_CHECK_EQ_I(c.strict, LC_STRICT_UNSET);
	LC_CHECK_EQ_I(c.connect_timeout, -1);
	LC_CHECK_EQ_I(c.batch_mode, -1);
	LC_CHECK_EQ_U(c.n_identity_files, 0);
	LC_CHECK_EQ_U(c.n_user_known_hosts, 0);
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(real_system_config)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;
	int r;

	if (access("/etc/ssh/ssh_config", R_OK) != 0)
		LC_SKIP("no readable /etc/ssh/ssh_config");
	t_setup(&ctx);
	free((void *)(uintptr_t)ctx.system_config);
	ctx.system_config = NULL;	/* the default path */
	r = t_resolve(&ctx, "example.org", &c, &e);
	if (r != 0)
		fprintf(stderr, "resolve: %s\n", e.msg);
	LC_CHECK_EQ_I(r, 0);
	LC_CHECK_STR(c.hostname, "example.org");
	lc_sshconf_free(&c);
	/* the same through -F, which also requires the file to exist */
	ctx.config_file = "/etc/ssh/ssh_config";
	r = t_resolve(&ctx, "example.org", &c, &e);
	if (r != 0)
		fprintf(stderr, "resolve -F: %s\n", e.msg);
	LC_CHECK_EQ_I(r, 0);
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(defaults_from_password_database)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;
	struct passwd *pw = getpwuid(getuid());

	LC_CHECK(pw != NULL);
	t_setup(&ctx);
	ctx.home = NULL;
	ctx.local_user = NULL;
	ctx.config_file = t_path("alt.conf");
	t_write("alt.conf", "IdentityFile %d/%u\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_STR(c.identity_files[0], t_fmt("%s/%s", pw->pw_dir,
	    pw->pw_name));
	lc_sshconf_free(&c);
	t_done(&ctx);
}

/* --- keywords that change where or how ssh connects (issue #9) --- */

LC_TEST(proxy_jump_and_command)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "Host web\n"
	    "  HostName web.internal\n"
	    "  ProxyJump alice@gw1:2222,gw2\n"
	    "Host other\n"
	    "  ProxyCommand ssh -W %h:%p gw \"unbalanced\n"
	    "Host bad\n"
	    "  ProxyCommand nc %h %C\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_STR(c.proxy_jump, "alice@gw1:2222,gw2");
	LC_CHECK(c.proxy_command == NULL);
	lc_sshconf_free(&c);
	/* shell text is taken raw: no "unterminated quote" */
	LC_CHECK_EQ_I(t_resolve(&ctx, "other", &c, &e), 0);
	LC_CHECK_STR(c.proxy_command, "ssh -W %h:%p gw \"unbalanced");
	LC_CHECK(c.proxy_jump == NULL);
	lc_sshconf_free(&c);
	/* a token lanecp cannot expand, where it takes effect */
	t_expect_err(&ctx, "bad", "line 7: bad value for ProxyCommand: "
	    "'nc %h %C' (unknown token %C)");
	/* a host the lines do not apply to has neither */
	LC_CHECK_EQ_I(t_resolve(&ctx, "db", &c, &e), 0);
	LC_CHECK(c.proxy_jump == NULL && c.proxy_command == NULL);
	lc_sshconf_free(&c);
	/* one ProxyJump list, no spaces: an error wherever it is (as ssh) */
	t_write(".ssh/config", "Host spaced\n  ProxyJump gw1 gw2\n");
	t_expect_err(&ctx, "web", "line 2: bad value for ProxyJump");
	t_done(&ctx);
}

LC_TEST(proxy_none_and_first_value)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "Host bastion\n"
	    "  ProxyJump NONE\n"
	    "Host direct\n"
	    "  ProxyCommand none\n"
	    "Host *\n"
	    "  ProxyJump bastion\n"
	    "  ProxyCommand nc %h %p\n");
	/* "none" first: disabled, and the later value does not apply */
	LC_CHECK_EQ_I(t_resolve(&ctx, "bastion", &c, &e), 0);
	LC_CHECK(c.proxy_jump == NULL && c.proxy_command == NULL);
	lc_sshconf_free(&c);
	/* the pair shares one first value, as in ssh */
	LC_CHECK_EQ_I(t_resolve(&ctx, "direct", &c, &e), 0);
	LC_CHECK(c.proxy_jump == NULL && c.proxy_command == NULL);
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_STR(c.proxy_jump, "bastion");
	LC_CHECK(c.proxy_command == NULL);
	lc_sshconf_free(&c);
	/* ProxyCommand's "none" is exact, as in ssh */
	t_write(".ssh/config", "ProxyCommand None\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_STR(c.proxy_command, "None");
	lc_sshconf_free(&c);
	t_done(&ctx);
}

/*
 * RevokedHostKeys: first value wins, "none" (any case) turns it off, the
 * name is kept as written (ssh 9.2 expands nothing in it); inside a Match
 * block lanecp cannot evaluate it is refused, never ignored.
 */
LC_TEST(revoked_host_keys)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "Host off\n"
	    "  RevokedHostKeys NONE\n"
	    "Host *\n"
	    "  RevokedHostKeys ~/revoked_%h\n"
	    "  RevokedHostKeys /etc/ssh/later\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_STR(c.revoked_host_keys, "~/revoked_%h");
	lc_sshconf_free(&c);
	LC_CHECK(c.revoked_host_keys == NULL);
	LC_CHECK_EQ_I(t_resolve(&ctx, "off", &c, &e), 0);
	LC_CHECK(c.revoked_host_keys == NULL);
	lc_sshconf_free(&c);
	t_write(".ssh/config", "Host nomatch\n  RevokedHostKeys a b\n");
	t_expect_err(&ctx, "web", "line 2: extra arguments for "
	    "RevokedHostKeys");
	t_write(".ssh/config", "Match exec true\n  RevokedHostKeys /x\n");
	t_expect_err(&ctx, "web", "line 2: RevokedHostKeys inside 'Match "
	    "exec'");
	t_write(".ssh/config", "Match exec true\n  RevokedHostKeys none\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK(c.revoked_host_keys == NULL);
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(source_and_canonicalize_refused)
{
	static const struct {
		const char *line;
		const char *want;	/* NULL: accepted */
	} cases[] = {
		{ "BindAddress 10.0.0.1", "BindAddress is not supported by "
		    "lanecp (it sets the source address)" },
		{ "BindInterface eth1", "BindInterface is not supported" },
		{ "CanonicalizeHostname yes", "CanonicalizeHostname is not "
		    "supported by lanecp (it rewrites the host name)" },
		{ "CanonicalizeHostname always", "CanonicalizeHostname is not "
		    "supported" },
		{ "CanonicalizeHostname no", NULL },
		{ "CanonicalizeHostname false", NULL },
		{ "CanonicalizeHostname maybe", "bad value for "
		    "CanonicalizeHostname: 'maybe'" },
		{ "ProxyUseFdpass yes", NULL },
		{ "PermitLocalCommand yes", NULL },
		{ "RemoteCommand ls", NULL },
		{ "Tunnel yes", NULL },
	};
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;
	size_t i;

	t_setup(&ctx);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t_write(".ssh/config", t_fmt("Host web\n  %s\n",
		    cases[i].line));
		if (cases[i].want != NULL) {
			t_expect_err(&ctx, "web", cases[i].want);
			continue;
		}
		LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
		lc_sshconf_free(&c);
	}
	/* a bad value fails for every host, a refusal only where it applies */
	t_write(".ssh/config", "Host other\n  CanonicalizeHostname maybe\n");
	t_expect_err(&ctx, "web", "bad value for CanonicalizeHostname");
	t_write(".ssh/config", "Host other\n  BindAddress 10.0.0.1\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	lc_sshconf_free(&c);
	t_done(&ctx);
}

LC_TEST(address_family)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write(".ssh/config",
	    "Host v4\n  AddressFamily inet\n"
	    "Host v6\n  AddressFamily INET6\n"
	    "Host *\n  AddressFamily any\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "v4", &c, &e), 0);
	LC_CHECK_EQ_I(c.address_family, 4);
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(t_resolve(&ctx, "v6", &c, &e), 0);
	LC_CHECK_EQ_I(c.address_family, 6);
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_I(c.address_family, 0);
	lc_sshconf_free(&c);
	t_write(".ssh/config", "Host x\n  AddressFamily ipx\n");
	t_expect_err(&ctx, "web", "line 2: bad value for AddressFamily");
	t_done(&ctx);
}

/*
 * A Match block lanecp cannot evaluate may apply in ssh: a keyword in it
 * that would change where ssh connects (and still take effect) refuses
 * the host; other keywords in it stay ignored.
 */
LC_TEST(match_unevaluable_blocks)
{
	static const struct {
		const char *text;
		const char *want;	/* NULL: accepted */
	} cases[] = {
		{ "Match exec \"on-vpn\"\n  ProxyJump gw\n",
		    "line 2: ProxyJump inside 'Match exec' (" },
		{ "Match final\n  HostName elsewhere\n",
		    "line 2: HostName inside 'Match final'" },
		{ "Match canonical host web\n  Port 2222\n",
		    "Port inside 'Match canonical'" },
		{ "Match tagged x\n  User root\n", "User inside 'Match tagged'" },
		{ "Match localnetwork 10.0.0.0/8\n  AddressFamily inet\n",
		    "AddressFamily inside 'Match localnetwork'" },
		{ "Match exec true\n  ProxyJump none\n"
		    "  Compression yes\n  IdentityFile ~/.ssh/x\n", NULL },
		/* the rest of the line does not match: not a maybe */
		{ "Match host nomatch exec true\n  ProxyJump gw\n", NULL },
		/* already decided by an earlier block: no effect in ssh */
		{ "Host web\n  Port 2022\n  ProxyJump none\n"
		    "Match exec true\n  Port 22\n  ProxyCommand nc %h %p\n",
		    NULL },
		/* the block ends at the next Host */
		{ "Match exec true\n  Compression yes\nHost *\n  Port 2\n",
		    NULL },
	};
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;
	size_t i;

	t_setup(&ctx);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t_write(".ssh/config", cases[i].text);
		if (cases[i].want != NULL) {
			t_expect_err(&ctx, "web", cases[i].want);
			continue;
		}
		if (t_resolve(&ctx, "web", &c, &e) != 0)
			fprintf(stderr, "case %zu: %s\n", i, e.msg);
		LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
		lc_sshconf_free(&c);
	}
	t_done(&ctx);
}

LC_TEST(match_unevaluable_include)
{
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	t_write_mode(".ssh/jump.conf", "Host *\n  ProxyJump gw\n", 0644);
	t_write_mode(".ssh/exec.conf", "Match exec true\n  Compression no\n",
	    0644);
	/* a file included from the block may apply as a whole */
	t_write(".ssh/config", "Match exec true\n  Include jump.conf\n");
	t_expect_err(&ctx, "web", t_fmt("jump.conf line 2: ProxyJump inside "
	    "'Match exec' (%s line 1)", t_path(".ssh/config")));
	/* a Match in an included file ends with that file */
	t_write(".ssh/config", "Include exec.conf\nPort 2\n");
	LC_CHECK_EQ_I(t_resolve(&ctx, "web", &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 2);
	lc_sshconf_free(&c);
	t_done(&ctx);
}

/* The in-memory parser the fuzzer uses: same rules, no Include read. */
LC_TEST(resolve_from_memory)
{
	static const char text[] = "Host web\n  Port 2022\n"
	    "  Include /etc/ssh/ssh_config\n  ProxyJump gw\n";
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	lc_err_clear(&e);
	LC_CHECK_EQ_I(lc__sshconf_resolve_mem(&ctx, "db", text,
	    sizeof(text) - 1, &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 0);
	lc_sshconf_free(&c);
	LC_CHECK_EQ_I(lc__sshconf_resolve_mem(&ctx, "web", text,
	    sizeof(text) - 1, &c, &e), 0);
	LC_CHECK_STR(c.proxy_jump, "gw");
	lc_sshconf_free(&c);
	/* not NUL terminated, no final newline */
	LC_CHECK_EQ_I(lc__sshconf_resolve_mem(&ctx, "web", "Port 7x", 6, &c,
	    &e), 0);
	LC_CHECK_EQ_U(c.port, 7);
	lc_sshconf_free(&c);
	t_done(&ctx);
}

/*
 * -o on the command line (issue 24 item 4): read before the files, so it
 * wins; the ssh:// port wins over both; bad ones refused naming them.
 */
LC_TEST(cmdline_options)
{
	static const char text[] = "Host web\n  Port 2022\n  User fileuser\n"
	    "  ConnectTimeout 7\n";
	const char *const opts[] = { "Port=2501", "User  optuser",
		"ConnectTimeout=3", "Port 2600" };
	struct lc_sshconf_ctx ctx;
	struct lc_sshconf c;
	struct lc_err e;

	t_setup(&ctx);
	lc_err_clear(&e);
	ctx.cmdline_options = opts;
	ctx.n_cmdline_options = 4;
	LC_CHECK_EQ_I(lc__sshconf_resolve_mem(&ctx, "web", text,
	    sizeof(text) - 1, &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 2501);	/* the first -o, not the file */
	LC_CHECK_STR(c.user, "optuser");
	LC_CHECK_EQ_I(c.connect_timeout, 3);
	lc_sshconf_free(&c);
	ctx.cmdline_port = 2700;
	LC_CHECK_EQ_I(lc__sshconf_resolve_mem(&ctx, "web", text,
	    sizeof(text) - 1, &c, &e), 0);
	LC_CHECK_EQ_U(c.port, 2700);	/* ssh://host:PORT/ wins, as ssh -p */
	lc_sshconf_free(&c);
	t_done(&ctx);

	LC_CHECK_EQ_I(lc_sshconf_check_option("Port=2501", &e), 0);
	LC_CHECK_EQ_I(lc_sshconf_check_option("port 2501", &e), 0);
	LC_CHECK_EQ_I(lc_sshconf_check_option("StrictHostKeyChecking=no", &e),
	    0);
	LC_CHECK_EQ_I(lc_sshconf_check_option("IdentityFile=~/.ssh/k", &e), 0);
	LC_CHECK_EQ_I(lc_sshconf_check_option("Port=0", &e), -LC_ERR_USAGE);
	LC_CHECK(strstr(e.msg, "-o Port: bad value") != NULL);
	LC_CHECK_EQ_I(lc_sshconf_check_option("Ciphers=aes128-ctr", &e),
	    -LC_ERR_USAGE);
	LC_CHECK(strstr(e.msg, "-o Ciphers: not an ssh_config keyword") !=
	    NULL);
	LC_CHECK_EQ_I(lc_sshconf_check_option("BindAddress=1.2.3.4", &e),
	    -LC_ERR_USAGE);
	LC_CHECK(strstr(e.msg, "BindAddress is not supported") != NULL);
	LC_CHECK_EQ_I(lc_sshconf_check_option("Host x", &e), -LC_ERR_USAGE);
	LC_CHECK_EQ_I(lc_sshconf_check_option("Match all", &e),
	    -LC_ERR_USAGE);
	LC_CHECK_EQ_I(lc_sshconf_check_option("Include /etc/passwd", &e),
	    -LC_ERR_USAGE);
	LC_CHECK_EQ_I(lc_sshconf_check_option("Port", &e), -LC_ERR_USAGE);
	LC_CHECK_EQ_I(lc_sshconf_check_option("", &e), -LC_ERR_USAGE);
	LC_CHECK_EQ_I(lc_sshconf_check_option("ProxyCommand=nc %C", &e),
	    -LC_ERR_USAGE);
}

LC_TEST_MAIN()
