/*
 * Base64 on OpenSSL's EVP encoder (see lanecp/base64.h).
 */
#include "base64.h"
#include "err.h"

#include <limits.h>
#include <string.h>

#include <openssl/evp.h>

int
lc_base64_encode(const unsigned char *in, size_t len, char *out,
    size_t outsz)
{
	size_t need;

	if (len > (size_t)INT_MAX / 2)
		return -LC_ERR_TOOBIG;
	need = 4 * ((len + 2) / 3) + 1;
	if (outsz < need)
		return -LC_ERR_TOOBIG;
	return EVP_EncodeBlock((unsigned char *)out, in, (int)len);
}

/*
 * EVP_DecodeUpdate() skips space, tab, CR and LF anywhere, takes lines of
 * any length and checks the padding; but it takes a '-' for the start of
 * a PEM END line and stops there, so anything outside the alphabet is
 * refused here first.
 */
int
lc_base64_decode(const char *in, size_t len, unsigned char *out,
    size_t outsz)
{
	static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/= \t\r\n";
	EVP_ENCODE_CTX *ctx = NULL;
	int n = 0, m = 0, r;
	size_t i;

	if (len > INT_MAX || outsz < len / 4 * 3)
		return -LC_ERR_TOOBIG;
	for (i = 0; i < len; i++)
		if (in[i] == '\0' || strchr(ok, in[i]) == NULL)
			return -LC_ERR_PROTO;
	if ((ctx = EVP_ENCODE_CTX_new()) == NULL)
		return -LC_ERR_NOMEM;
	EVP_DecodeInit(ctx);
	/* both write 3 bytes per 4 characters at most: fits in outsz */
	if (EVP_DecodeUpdate(ctx, out, &n, (const unsigned char *)in,
	    (int)len) < 0 || EVP_DecodeFinal(ctx, out + n, &m) < 0)
		r = -LC_ERR_PROTO;
	else
		r = n + m;
	EVP_ENCODE_CTX_free(ctx);
	return r;
}

/*
 * EVP_DecodeBlock() wants whole quantums, skips leading and trailing
 * whitespace and counts the padding's zero bytes in what it returns:
 * check the text first, then take the padding off.
 */
int
lc_base64_decode_strict(const char *in, size_t len, unsigned char *out,
    size_t outsz)
{
	static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t data, pad = 0;
	int n;

	if (len == 0 || len % 4 != 0 || len > INT_MAX ||
	    outsz < len / 4 * 3)
		return -LC_ERR_PROTO;
	while (pad < 2 && in[len - 1 - pad] == '=')
		pad++;
	data = len - pad;
	/* no whitespace, no '=' inside, nothing EVP would skip */
	for (size_t i = 0; i < data; i++)
		if (in[i] == '\0' || strchr(alpha, in[i]) == NULL)
			return -LC_ERR_PROTO;
	n = EVP_DecodeBlock(out, (const unsigned char *)in, (int)len);
	if (n < 0 || (size_t)n < pad)
		return -LC_ERR_PROTO;
	return n - (int)pad;
}
