/*
 * Umbrella for the small system helpers, kept so that files which include
 * it need not change.  New code includes the one header it uses.
 */
#ifndef LANECP_UTIL_H
#define LANECP_UTIL_H

#include "lanecp/clock.h"
#include "lanecp/fdio.h"
#include "lanecp/path.h"
#include "lanecp/sysinfo.h"
#include "lanecp/thread.h"
#include "lanecp/wake.h"

#endif
