/*
 * The static lanecp-agent loads no shared object (README.md, "No remote
 * install"; SECURITY.md).  Its own code never calls dlopen nor a name
 * lookup (idname.h, lc_sock_connect), but libcrypto.a has references to
 * them: DSO (dso_dlfcn.o), which only provider and engine loading and
 * the configuration file use (lc_tls_init_agent turns all three off),
 * and BIO_gethostbyname (bio_sock.o), which nothing in the agent calls.
 * These definitions stand in for the C library's in this program only
 * (objects are linked before libc.a, whose members then never come in):
 * each fails as the real one does when it cannot help, so a call that
 * is not supposed to happen loads nothing and cannot succeed, and glibc's
 * static dlopen and NSS code, which would load the host's libraries, is
 * not in the program at all (glibc's link-time warnings about them are
 * gone).  Linked only into the static agent (cmd/CMakeLists.txt): in a
 * dynamic program they would replace the C library's for every library.
 */
#include <dlfcn.h>
#include <netdb.h>
#include <stddef.h>

/* what dlerror says after any of the calls below */
static char lc_nodl_msg[] = "lanecp-agent loads no shared object";

void *
dlopen(const char *file, int mode)
{
	(void)file;
	(void)mode;
	return NULL;
}

void *
dlsym(void *restrict handle, const char *restrict name)
{
	(void)handle;
	(void)name;
	return NULL;
}

int
dlclose(void *handle)
{
	(void)handle;
	return -1;
}

char *
dlerror(void)
{
	return lc_nodl_msg;
}

int
dladdr(const void *addr, Dl_info *info)
{
	(void)addr;
	(void)info;
	return 0;
}

struct hostent *
gethostbyname(const char *name)
{
	(void)name;
	h_errno = NO_RECOVERY;
	return NULL;
}

int
getaddrinfo(const char *restrict node, const char *restrict service,
    const struct addrinfo *restrict hints, struct addrinfo **restrict res)
{
	(void)node;
	(void)service;
	(void)hints;
	*res = NULL;
	return EAI_FAIL;
}

void
freeaddrinfo(struct addrinfo *res)
{
	(void)res; /* getaddrinfo above never makes one */
}

int
getnameinfo(const struct sockaddr *restrict sa, socklen_t salen,
    char *restrict host, socklen_t hostlen, char *restrict serv,
    socklen_t servlen, int flags)
{
	(void)sa;
	(void)salen;
	(void)host;
	(void)hostlen;
	(void)serv;
	(void)servlen;
	(void)flags;
	return EAI_FAIL;
}
