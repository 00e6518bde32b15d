/* A file of the fs layer may include the protocol's header (tests/layers). */
#include "wire.h"

int lc_probe_down(void);

int
lc_probe_down(void)
{
	return LC_MAX_STREAMS > 0;
}
