/*
 * The role port's posting helpers (see role.h).
 */
#include "role.h"
#include "stream.h"

#include <stdio.h>
#include <string.h>

void
lc_role_post(const struct lc_role_port *p, int type, uint32_t a, uint64_t b,
    const struct lc_err *err)
{
	struct lc_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.a = a;
	ev.b = b;
	if (err != NULL)
		ev.err = *err;
	p->post(p->host, &ev);
}

void
lc_role_post_text(const struct lc_role_port *p, int type, uint32_t a,
    uint64_t b, const char *text)
{
	struct lc_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.a = a;
	ev.b = b;
	snprintf(ev.text, sizeof(ev.text), "%s", text);
	p->post(p->host, &ev);
}

int
lc_role_dial_check(const struct lc_role_port *p, char *addr, size_t addrsz,
    struct lc_err *e)
{
	if (!p->set.dial_restricted)
		return 0;
	if (p->set.dial_only[0] == '\0' ||
	    !lc_addr_same(addr, p->set.dial_only) ||
	    strlen(p->set.dial_only) >= addrsz)
		return lc_err_set(e, LC_ERR_NOPATH, "data streams: refused by "
		    "the restricted agent (it dials only the address its SSH "
		    "client connects from)");
	snprintf(addr, addrsz, "%s", p->set.dial_only);
	return 0;
}
