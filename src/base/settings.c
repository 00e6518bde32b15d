/* Hidden settings from the environment (settings.h). */
#include "settings.h"
#include "parse.h"
#include "path.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define LC_SETTING_SHOWN 40 /* of a refused value, escaped */

/* getenv("LANECP_" name) in *var (for messages too); NULL if unset or "". */
static const char *
lc_setting_env(const char *name, char *var, size_t varsz)
{
	const char *s;

	snprintf(var, varsz, "LANECP_%s", name);
	s = getenv(var);
	return s != NULL && *s != '\0' ? s : NULL;
}

int
lc_setting_uint(const char *name, uint64_t lo, uint64_t hi, uint64_t dflt,
    uint64_t *out, struct lc_err *e)
{
	char var[LC_SETTING_NAME_MAX], shown[LC_SETTING_SHOWN];
	const char *s = lc_setting_env(name, var, sizeof(var));

	*out = dflt;
	if (s == NULL)
		return 0;
	if (lc_parse_uint(s, lo, hi, out) == 0)
		return 0;
	*out = dflt;
	lc_printable(s, shown, sizeof(shown));
	return lc_err_set(e, LC_ERR_USAGE,
	    "%s=%s: must be a number from %" PRIu64 " to %" PRIu64
	    " (a hidden setting: man lanecp, ENVIRONMENT)",
	    var, shown, lo, hi);
}

int
lc_setting_str(const char *name, int (*valid)(const char *), const char *what,
    const char *dflt, const char **out, struct lc_err *e)
{
	char var[LC_SETTING_NAME_MAX], shown[LC_SETTING_SHOWN];
	const char *s = lc_setting_env(name, var, sizeof(var));

	*out = dflt;
	if (s == NULL)
		return 0;
	if (valid(s)) {
		*out = s;
		return 0;
	}
	lc_printable(s, shown, sizeof(shown));
	return lc_err_set(e, LC_ERR_USAGE,
	    "%s=%s: must be %s (a hidden setting: man lanecp, ENVIRONMENT)",
	    var, shown, what);
}
