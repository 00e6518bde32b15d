/*
 * What partfile.c shares with tree.c (the part files and the tree entries
 * of the target) and no one else.
 */
#ifndef LANECP_PARTFILE_INT_H
#define LANECP_PARTFILE_INT_H

#include "partfile.h"

#include <stdint.h>
#include <sys/types.h>

/*
 * Set the mtime (access time untouched) of fd itself (name NULL) or of
 * name in directory fd, not following a symlink.  0, or -1 with errno.
 */
int lc__part_set_mtime(int fd, const char *name, int64_t sec, uint32_t nsec);

/*
 * The mode bits a sink sets: permission bits, and set-id and sticky bits
 * only when the controller said so (-p, as root, from a local source),
 * this sink runs as root too, and it is not a restricted agent (a cron
 * key's holder may not make set-id files).
 */
mode_t lc__part_modes(const struct lc_target *t);

#endif
