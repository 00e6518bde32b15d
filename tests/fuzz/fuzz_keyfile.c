/*
 * Identity file text through the openssh-key-v1 probe (any identity file
 * reaches it, issue #9 item 11).  The decoded key material must be wiped
 * from the scratch buffer whatever the outcome.
 */
#include "err.h"
#include "ssh.h"
#include "ssh_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *blob = NULL;
	uint8_t *scratch;
	char *text;
	size_t i, len = 0;
	int enc = -1, r;

	if (size > 64 * 1024 || (text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if ((scratch = malloc(size + 1)) == NULL) {
		free(text);
		return 0;
	}
	memset(scratch, 0, size + 1);
	r = lc__ssh_openssh_key(text, scratch, size + 1, &enc, &blob, &len);
	if (r == 0 && (blob == NULL || len == 0 || (enc != 0 && enc != 1)))
		abort();
	if (r != 0 && (blob != NULL ||
	    (r != -LC_ERR_PROTO && r != -LC_ERR_NOMEM)))
		abort();
	for (i = 0; i < size + 1; i++)
		if (scratch[i] != 0)
			abort();
	free(blob);
	free(scratch);
	free(text);
	return 0;
}
