/*
 * ws.c - the RFC 6455 framing the gateway speaks after libmicrohttpd has
 * handed it the upgraded connection: server frames out, client frames in
 * (see hw-serve(1), WEBSOCKET, for why it is written here)
 */
#include <string.h>

#include <openssl/evp.h>

#include "serve/serve.h"

void
ws_accept(const char *key, char out[29])
{
	static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdn = 0;
	struct buf in, b64;

	buf_init(&in);
	buf_init(&b64);
	buf_adds(&in, key);
	buf_adds(&in, guid);
	EVP_Digest(in.p, in.len, md, &mdn, EVP_sha1(), NULL);
	b64_encode(&b64, md, mdn);
	memcpy(out, b64.p, 28);
	out[28] = '\0';
	buf_release(&in);
	buf_release(&b64);
}

void
ws_frame(struct buf *out, int opcode, const void *p, size_t n)
{
	unsigned char h[10];
	size_t hn = 2;
	int i;

	h[0] = (unsigned char)(0x80 | (opcode & 0x0f));
	if (n < 126) {
		h[1] = (unsigned char)n;
	} else if (n <= 0xffff) {
		h[1] = 126;
		h[2] = (unsigned char)(n >> 8);
		h[3] = (unsigned char)n;
		hn = 4;
	} else {
		h[1] = 127;
		for (i = 0; i < 8; i++)
			h[2 + i] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
		hn = 10;
	}
	buf_add(out, h, hn);
	if (n)
		buf_add(out, p, n);
}

long
ws_parse(const unsigned char *p, size_t n, int *opcode, int *fin,
    struct buf *pl)
{
	uint64_t len;
	size_t hn = 2, i;
	const unsigned char *mask;

	if (n < 2)
		return 0;
	*fin = p[0] >> 7;
	*opcode = p[0] & 0x0f;
	if (p[0] & 0x70)
		return -1;	/* a reserved bit, with no extension agreed */
	if ((*opcode > 2 && *opcode < 8) || *opcode > 10)
		return -1;
	if (!(p[1] & 0x80))
		return -1;	/* a client's frames are masked */
	len = p[1] & 0x7f;
	if (len == 126) {
		if (n < 4)
			return 0;
		len = (uint64_t)p[2] << 8 | p[3];
		hn = 4;
	} else if (len == 127) {
		if (n < 10)
			return 0;
		for (len = 0, i = 0; i < 8; i++)
			len = len << 8 | p[2 + i];
		hn = 10;
	}
	if (*opcode >= 8 && (len > 125 || !*fin))
		return -1;
	if (len > WS_FRAME_MAX)
		return -1;
	if (n < hn + 4 || n - hn - 4 < len)
		return 0;
	mask = p + hn;
	buf_clear(pl);
	buf_reserve(pl, (size_t)len + 1);
	for (i = 0; i < len; i++)
		pl->p[i] = (char)(p[hn + 4 + i] ^ mask[i & 3]);
	pl->len = (size_t)len;
	return (long)(hn + 4 + len);
}
