/*
 * Inside the data stream module (sock.c, conn.c, stream_hs.c, stream.c):
 * what one of its files uses of another beyond stream.h.
 */
#ifndef LANECP_STREAM_INT_H
#define LANECP_STREAM_INT_H

/* Options of every data stream socket, whichever side dialled (sock.c). */
void lc__sock_tune(int fd);

#endif
