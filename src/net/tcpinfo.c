/*
 * What the kernel knows of a data stream's path (conn.h): its round trip
 * and whether segments arrived out of order (a loss, or reordering).
 * Its own file because it needs the kernel's struct tcp_info, whose
 * header cannot be included with glibc's <netinet/tcp.h>, which has
 * fewer fields.
 */
#include "conn.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

/* the kernel filled field f of ti (an older one fills fewer) */
#define LC_HAS(f) (len >= offsetof(struct tcp_info, f) + sizeof(ti.f))

int
lc_sock_path(int fd, struct lc_sock_path *out)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(out, 0, sizeof(*out));
	memset(&ti, 0, sizeof(ti));
	/* not TCP (a pipe or socketpair behind --via-ssh): nothing known */
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
		return -1;
	/*
	 * The least round trip seen: the SYN exchange and the handshake's
	 * answers give samples even on a stream that only receives, and a
	 * busy CPU inflates the smoothed value but not the minimum.  A
	 * kernel before 4.10 lacks it (the smoothed value then).
	 */
	if (LC_HAS(tcpi_min_rtt) && ti.tcpi_min_rtt != 0 &&
	    ti.tcpi_min_rtt != UINT32_MAX)
		out->rtt_us = ti.tcpi_min_rtt;
	else if (ti.tcpi_rtt != 0)
		out->rtt_us = ti.tcpi_rtt;
	else
		return -1;
	if (LC_HAS(tcpi_rcv_ooopack))
		out->ooo_packets = ti.tcpi_rcv_ooopack;
	if (LC_HAS(tcpi_segs_in))
		out->segs_in = ti.tcpi_segs_in;
	return 0;
}
