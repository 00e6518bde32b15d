/* Path strings, taken apart without touching the filesystem. */
#ifndef LANECP_PATH_H
#define LANECP_PATH_H

#include <stddef.h>

/* Last path component of p, without trailing slashes, into out. */
void lc_path_basename(const char *p, char *out, size_t outsz);
/* Directory part of p ("." if none), into out. */
void lc_path_dirname(const char *p, char *out, size_t outsz);

/*
 * Copy in to out (outsz bytes, always terminated, cut if need be) with
 * control characters replaced by '?': peer text made safe for one line.
 */
void lc_printable(const char *in, char *out, size_t outsz);

#endif
