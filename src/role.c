/*
 * The role port's posting helpers (see role.h).
 */
#include "role.h"

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
