/*
 * Taking over a stale agent's part file (issue 20; lockholder.h).
 *
 * A transfer id is public (it is on the agent's command line, in ps), so
 * it cannot authorize stopping an agent: the client of another restricted
 * key of the same account could name it.  The controller therefore also
 * makes a takeover key, 32 random bytes, once per invocation (the same for
 * every --retries attempt) and sends it to the sink in SINK_TARGET, over
 * the control channel only: never on a command line, in the environment,
 * in a log or in a file.
 *
 * The holder.  A standalone sink agent with a transfer id and a key keeps
 * the key in memory and answers takeover requests on a thread of its own
 * (so that a main loop stuck in a write still answers), on an abstract
 * AF_UNIX socket named "lanecp-takeover-" + the first 16 bytes, in hex, of
 * HMAC-SHA256(key, "lanecp takeover name v1" | u32 pid): only a process
 * that knows the key can find it, and nobody without the key can take the
 * name first.  A connecting process must have the holder's own uid
 * (SO_PEERCRED); it gets a fresh nonce and must answer with
 *
 *     mac = HMAC-SHA256(key, "lanecp takeover v1" | nonce | u32 pid |
 *                       root)
 *
 * (pid: the holder's, root: the asker's --restrict directory, "" for
 * none), compared with CRYPTO_memcmp.  The holder says yes only to the
 * right mac and a root equal to its own: a restricted agent stops only an
 * agent restricted to the same directory, never an unrestricted one, and
 * the other way round.
 *
 * The asker.  The sink of a later attempt that finds a part file locked by
 * an agent of its transfer (uid and command line, lockholder.c) connects
 * to the name for that pid, checks with SO_PEERCRED that the listener is
 * that very pid and of its own uid, proves the key, and signals the
 * holder (through a pidfd, as before) only after a yes.
 */
#ifndef LANECP_TAKEOVER_H
#define LANECP_TAKEOVER_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "err.h"
#include "lc_limits.h"

/* How long an asker waits for the holder's answer, and a holder for a
   request (a hang guard: both are local processes). */
#define LC_TAKEOVER_IO_MS 5000

struct lc_takeover;

/* 1 if key is set (not all zero bytes), else 0. */
int lc_takeover_key_set(const uint8_t key[LC_KEY_LEN]);

/*
 * The abstract socket address of pid's holder under key, in *sa and
 * *len (for tests; the holder and the asker use it).
 */
void lc_takeover_addr(const uint8_t key[LC_KEY_LEN], pid_t pid,
    struct sockaddr_un *sa, socklen_t *len);

/*
 * Holder: answer takeover requests for this process until
 * lc_takeover_stop().  key and root (our --restrict directory, "" for
 * none) are copied.  0 with *out set, or -LC_ERR_* with e (the name is
 * taken, no thread): the agent then runs on and cannot be taken over.
 */
int lc_takeover_serve(const uint8_t key[LC_KEY_LEN], const char *root,
    struct lc_takeover **out, struct lc_err *e);

/* Stop answering, join the thread, wipe the key.  NULL is fine. */
void lc_takeover_stop(struct lc_takeover *t);

/*
 * Asker: may we stop pid, the holder of a lock we need?  0 when it said
 * yes; -LC_ERR_LOCKED when it said no, answered nothing within
 * timeout_ms, or is not the process it should be (e says which, for the
 * debug log).  An unset key is always a no.
 */
int lc_takeover_ask(pid_t pid, const uint8_t key[LC_KEY_LEN],
    const char *root, int timeout_ms, struct lc_err *e);

#endif
