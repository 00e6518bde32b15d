/*
 * User and group names and ids: one interface, two implementations, and
 * the program picks one when it is linked (src/CMakeLists.txt):
 *
 *   idname_nss.c    lanecp (its local copies, `lanecp --agent` on a host
 *                   where lanecp is installed, the controller): the C
 *                   library's getpwnam_r and friends, so every name
 *                   service the host uses (sssd, LDAP) applies, as for
 *                   cp and rsync.
 *   idname_files.c  lanecp-agent, the program lanecp pushes to a host
 *                   without lanecp: /etc/passwd and /etc/group read by
 *                   idfile.c.  A static program that called getpwnam_r
 *                   would load the NSS modules of the host's glibc, which
 *                   only the build's glibc version is sure to work with;
 *                   this one loads none.  A name only a network service
 *                   knows is not found: --owner then keeps numeric ids.
 *
 * Both are safe to call from any thread.  lc_id_source() says which one
 * the program has.
 */
#ifndef LANECP_IDNAME_H
#define LANECP_IDNAME_H

#include <stddef.h>
#include <stdint.h>

/* A user's entry: name, ids and home directory ("" when none). */
struct lc_idpw {
	uint32_t uid;
	uint32_t gid;
	char name[256];
	char home[4096];
};

/*
 * The user called name, or with uid, into *pw.  1 when found, 0 when
 * there is no such user (or the entry does not fit *pw), -LC_ERR_IO
 * when the lookup itself failed.
 */
int lc_id_user_byname(const char *name, struct lc_idpw *pw);
int lc_id_user_byuid(uint32_t uid, struct lc_idpw *pw);

/*
 * The gid of the group called name into *gid; the name of the group gid
 * into name (namesz bytes).  1, 0 or -LC_ERR_IO as above (0 also when
 * the name does not fit in namesz).
 */
int lc_id_group_byname(const char *name, uint32_t *gid);
int lc_id_group_bygid(uint32_t gid, char *name, size_t namesz);

/* "nss" or "files": which implementation this program was linked with. */
const char *lc_id_source(void);

#endif
