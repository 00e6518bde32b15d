/* Where the source's data streams connect to. */
#include "controller_int.h"

#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/*
 * A proxied sink (ProxyJump, ProxyCommand): we do not know the address
 * of the sshd we reached, so the data streams try the target's HostName
 * as resolved here (the data path through the jump host is not built
 * yet).  Returns 0 or -LC_ERR_CONNECT.
 */
static int
lc_ctl_target_addr(const char *host, char *out, size_t outsz,
    struct lc_err *e)
{
	struct addrinfo hints, *res = NULL;
	int gai;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((gai = getaddrinfo(host, NULL, &hints, &res)) != 0)
		return lc_err_set(e, LC_ERR_CONNECT, "data streams: cannot "
		    "resolve %s: %s", host, gai_strerror(gai));
	gai = getnameinfo(res->ai_addr, res->ai_addrlen, out,
	    (socklen_t)outsz, NULL, 0, NI_NUMERICHOST);
	freeaddrinfo(res);
	if (gai != 0)
		return lc_err_set(e, LC_ERR_CONNECT, "data streams: %s: %s",
		    host, gai_strerror(gai));
	return 0;
}

/* Address the source connects to: the one the controller itself used. */
int
lc__ctl_data_addr(struct lc_ctl *c, char *out, size_t outsz, struct lc_err *e)
{
	const char *a;

	if (c->dst_ep.ssh != NULL && lc_ssh_proxied(c->dst_ep.ssh))
		return lc_ctl_target_addr(lc_ssh_target_host(c->dst_ep.ssh),
		    out, outsz, e);
	if (c->dst_ep.ssh != NULL)
		a = lc_ssh_peer_addr(c->dst_ep.ssh);
	else if (c->src.ssh != NULL)
		a = lc_ssh_local_addr(c->src.ssh);
	else
		a = "127.0.0.1";
	if (a == NULL || a[0] == '\0' || strlen(a) >= outsz)
		return lc_err_set(e, LC_ERR_CONNECT, "no address for the data "
		    "streams (a pull through a ProxyCommand has none)");
	snprintf(out, outsz, "%s", a);
	return 0;
}
