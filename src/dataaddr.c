/* Where the source's data streams connect to. */
#include "controller_int.h"

#include <stdio.h>
#include <string.h>

/* Address the source connects to: the one the controller itself used. */
int
lc__ctl_data_addr(struct lc_ctl *c, char *out, size_t outsz, struct lc_err *e)
{
	const char *a;

	if (c->dst_ep.ssh != NULL)
		a = lc_ssh_peer_addr(c->dst_ep.ssh);
	else if (c->src.ssh != NULL)
		a = lc_ssh_local_addr(c->src.ssh);
	else
		a = "127.0.0.1";
	if (a == NULL || a[0] == '\0' || strlen(a) >= outsz)
		return lc_err_set(e, LC_ERR_INTERNAL, "no data address");
	snprintf(out, outsz, "%s", a);
	return 0;
}
