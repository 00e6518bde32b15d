/*
 * The OpenSSH transport (sshprog.c): which failure a line of ssh's
 * stderr names, by the words OpenSSH prints, so that a failed ssh exits
 * as lanecp's own transport would (host key 4, authentication 3, a bad
 * -o or config 2, connect 3).
 */
#include "err.h"
#include "ssh_int.h"

#include <stddef.h>
#include <string.h>

int
lc__sshprog_classify(const char *line)
{
	static const struct {
		const char *words;
		int code;
	} t[] = {
		{ "Host key verification failed", LC_ERR_HOSTKEY },
		{ "REMOTE HOST IDENTIFICATION HAS CHANGED", LC_ERR_HOSTKEY },
		{ "host key is known for", LC_ERR_HOSTKEY },
		{ "has changed and you have requested strict", LC_ERR_HOSTKEY },
		{ "Host key for", LC_ERR_HOSTKEY },
		{ "Permission denied", LC_ERR_AUTH },
		{ "Too many authentication failures", LC_ERR_AUTH },
		{ "No more authentication methods", LC_ERR_AUTH },
		{ "Bad configuration option", LC_ERR_CONFIG },
		{ "bad configuration options", LC_ERR_CONFIG },
		{ "Can't open user config file", LC_ERR_CONFIG },
		{ "Could not resolve hostname", LC_ERR_CONNECT },
		{ "Connection refused", LC_ERR_CONNECT },
		{ "Connection timed out", LC_ERR_CONNECT },
		{ "No route to host", LC_ERR_CONNECT },
		{ "Unable to negotiate", LC_ERR_CONNECT },
		{ "kex_exchange_identification", LC_ERR_CONNECT },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strstr(line, t[i].words) != NULL)
			return t[i].code;
	return 0;
}
