#include <stdio.h>
#include "lanecp/version.h"
int
main(void)
{
	printf("lanecp %s\n", LC_VERSION_STRING);
	return 0;
}
