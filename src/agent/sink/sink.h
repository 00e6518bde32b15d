/*
 * What the sink folder exports besides its role (lc_sink_ops, role.h):
 * its hidden setting, which the programs read at startup
 * (lc_agent_settings).
 */
#ifndef LANECP_SINK_H
#define LANECP_SINK_H

#include <stdint.h>

#include "err.h"

/*
 * Hashes per FILE_HASHES frame in *out: LC_HASHES_PER_FRAME, or the
 * hidden setting LANECP_HASH_FRAME (1 .. LC_HASHES_PER_FRAME,
 * settings.h), so a test sends a list over several frames with a file
 * of a few MiB.  0, or -LC_ERR_USAGE (e says why) for a bad setting.
 */
int lc_sink_hash_frame(uint32_t *out, struct lc_err *e);

#endif
