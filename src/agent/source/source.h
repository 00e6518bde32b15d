/*
 * What the source folder exports besides its role (lc_source_ops,
 * role.h): its hidden setting, which the programs read at startup
 * (lc_agent_settings).
 */
#ifndef LANECP_SOURCE_H
#define LANECP_SOURCE_H

#include <stdint.h>

#include "err.h"

/*
 * The most runs of differing chunks a resume check keeps in *out before
 * it cuts the partial file at the next one: LC_PREFIX_MAX_RUNS, or the
 * hidden setting LANECP_MAX_RUNS (1 .. LC_PREFIX_MAX_RUNS, settings.h),
 * so a test reaches that cut with a few.  0, or -LC_ERR_USAGE (e says
 * why) for a bad setting.
 */
int lc_source_max_runs(uint32_t *out, struct lc_err *e);

#endif
