/*
 * sse_fuzz - the model's event stream: any body gives the same reply fed
 * whole and fed in two pieces split where the first byte says.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

static void
feed(const char *p, size_t n, size_t cut, struct buf *out, int *rc)
{
	struct model_reply r;
	struct model_stream st;

	model_reply_init(&r);
	model_stream_init(&st, &r, NULL, NULL);
	*rc = model_stream_feed(&st, p, cut);
	if (*rc == 0)
		*rc = model_stream_feed(&st, p + cut, n - cut);
	if (*rc == 0)
		*rc = model_stream_end(&st);
	if (*rc == 0)
		model_reply_json(out, &r);
	model_stream_release(&st);
	model_reply_release(&r);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	struct buf a, b;
	size_t cut;
	int ra, rb;

	if (n < 1)
		return 0;
	cut = data[0] % n;
	buf_init(&a);
	buf_init(&b);
	feed((const char *)data + 1, n - 1, 0, &a, &ra);
	feed((const char *)data + 1, n - 1, cut > n - 1 ? n - 1 : cut, &b,
	    &rb);
	if (ra != rb || a.len != b.len || (a.len && memcmp(a.p, b.p, a.len)))
		abort();
	buf_release(&a);
	buf_release(&b);
	return 0;
}
