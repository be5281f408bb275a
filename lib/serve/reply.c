/*
 * reply.c - answering a request: every response with the security
 * headers, JSON and error bodies, the statuses of the library's codes,
 * and the query's values
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/gw.h"

void
headers_secure(struct gateway *gw, struct MHD_Response *resp,
    const char *ctype)
{
	if (ctype)
		MHD_add_response_header(resp, "Content-Type", ctype);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "Permissions-Policy",
	    "camera=(), geolocation=(), microphone=()");
	MHD_add_response_header(resp, "Content-Security-Policy", gw->csp);
	MHD_add_response_header(resp, "X-Frame-Options", "SAMEORIGIN");
}

enum MHD_Result
reply(struct req *r, unsigned status, const char *ctype, const void *body,
    size_t n)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	r->done = 1;
	resp = MHD_create_response_from_buffer(n, (void *)body,
	    MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	headers_secure(r->gw, resp, ctype);
	if (status == 405)
		MHD_add_response_header(resp, "Allow", r->allow ? r->allow :
		    "GET, HEAD");
	ret = MHD_queue_response(r->c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

enum MHD_Result
reply_405(struct req *r, const char *allow)
{
	r->allow = allow;
	return reply_error(r, 405, NULL, "method not allowed");
}

enum MHD_Result
reply_buf(struct req *r, unsigned status, struct buf *b)
{
	return reply(r, status, "application/json", b->p ? b->p : "", b->len);
}

enum MHD_Result
reply_json(struct req *r, unsigned status, const struct jval *v)
{
	struct buf b;
	enum MHD_Result ret;

	buf_init(&b);
	json_canon(&b, v);
	ret = reply_buf(r, status, &b);
	buf_release(&b);
	return ret;
}

void
error_json(struct buf *b, const char *code, const char *msg)
{
	if (code) {
		buf_adds(b, "{\"code\":");
		json_canon_str(b, code, strlen(code));
		buf_adds(b, ",\"error\":");
	} else {
		buf_adds(b, "{\"error\":");
	}
	json_canon_str(b, msg, strlen(msg));
	buf_addc(b, '}');
}

enum MHD_Result
reply_error(struct req *r, unsigned status, const char *code,
    const char *fmt, ...)
{
	char msg[1024];
	struct buf b;
	va_list ap;
	enum MHD_Result ret;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	buf_init(&b);
	error_json(&b, code, msg);
	ret = reply_buf(r, status, &b);
	buf_release(&b);
	return ret;
}

enum MHD_Result
reply_hw(struct req *r)
{
	unsigned st;

	switch (hw_err_code()) {
	case HW_EXIT_BUSY: st = 409; break;
	case HW_EXIT_NOINPUT: st = 404; break;
	case HW_EXIT_USAGE: case HW_EXIT_FAIL: case HW_EXIT_DATA: st = 422;
		break;
	default: st = 500; break;
	}
	return reply_error(r, st, NULL, "%s", hw_err_msg());
}

static int
hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ?
	    c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int
query_get(const struct req *r, const char *key, char *out, size_t n)
{
	const char *q = r->query, *v, *e;
	size_t kl = strlen(key), o = 0;
	int h, l;

	while (q && *q) {
		e = q + strcspn(q, "&");
		if ((size_t)(e - q) > kl && !strncmp(q, key, kl) && q[kl] == '=') {
			for (v = q + kl + 1; v < e; v++) {
				if (o + 1 >= n)
					return -1;
				if (*v == '+')
					out[o++] = ' ';
				else if (*v != '%')
					out[o++] = *v;
				else if (v + 2 < e + 0 + 1 && (h = hexval(v[1]))
				    >= 0 && (l = hexval(v[2])) >= 0) {
					out[o++] = (char)(h << 4 | l);
					v += 2;
				} else
					return -1;
			}
			out[o] = '\0';
			return valid_utf8(out, o) && !memchr(out, 0, o) ? 1 : -1;
		}
		q = *e ? e + 1 : e;
	}
	return 0;
}

