/*
 * gw.h - the gateway's internals, shared by http.c, routes.c, static.c
 * and hub.c only
 */
#ifndef HW_SERVE_GW_H
#define HW_SERVE_GW_H

#include <pthread.h>
#include <microhttpd.h>

#include "serve/serve.h"

#define BODY_MAX (1u << 20)		/* a request body */
#define URI_MAX 16384			/* a request line's target */
#define PATH_MAX_GW 4096

struct hub;

struct gateway {
	struct MHD_Daemon *d;
	struct ingress g;
	char csp[600];
	char *web_root;			/* the static UI */
	char *lib_root;			/* Debian's browser libraries */
	struct hub *hub;
	char url[600];
};

/* one request, from its first line to its completion */
struct req {
	struct gateway *gw;
	struct MHD_Connection *c;
	char *uri;			/* the raw target, as sent */
	const char *query;		/* in uri, after '?', or NULL */
	char path[PATH_MAX_GW];		/* internal: after the ingress */
	const char *method;
	struct buf body;
	int started, too_big, done;
	const char *allow;		/* a 405's Allow: the route's methods */
};

/*
 * reply queues a response of status with body (copied) and every
 * security header; reply_json the canonical text of v; reply_error
 * {"error": msg} (with "code" when code is not NULL).
 */
enum MHD_Result reply(struct req *r, unsigned status, const char *ctype,
    const void *body, size_t n);
enum MHD_Result reply_json(struct req *r, unsigned status,
    const struct jval *v);
enum MHD_Result reply_buf(struct req *r, unsigned status, struct buf *b);
enum MHD_Result reply_error(struct req *r, unsigned status, const char *code,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* reply_405: method not allowed, with the methods the route allows */
enum MHD_Result reply_405(struct req *r, const char *allow);
/* error_json appends reply_error's body, {"code"?, "error": msg}, to b */
void error_json(struct buf *b, const char *code, const char *msg);
/* reply_hw answers the current hw_err with the status its code means */
enum MHD_Result reply_hw(struct req *r);
/* headers_secure adds the security headers to resp */
void headers_secure(struct gateway *gw, struct MHD_Response *resp,
    const char *ctype);
/*
 * query_get copies the percent-decoded value of key in r's query to out
 * (size n): 1 when present, 0 when absent, -1 when badly encoded, not
 * UTF-8 or too long.
 */
int query_get(const struct req *r, const char *key, char *out, size_t n);

/*
 * session_pair (pair.c) appends {"events": [the events after after],
 * "projection": {...}} of session s (exists: 1 or 0), both from one read
 * of its verified logs.
 */
int session_pair(struct session *s, int exists, int64_t after,
    struct buf *out);

/*
 * project.c: the routes under /project/ and /settings/ (rest is the path
 * after them); routes.c: every route; static.c: the UI's files
 */
enum MHD_Result project_route(struct req *r, const char *rest, int get,
    int post);
enum MHD_Result settings_route(struct req *r, const char *rest, int get,
    int put);
/* skills.c: /settings/skills and below (rest after "skills") */
/*
 * subscription_route: POST /settings/models/subscription/device and
 * .../device/poll (rest is "/device" or "/device/poll"), the ChatGPT
 * sign-in run by a child 'hw-model subscription sign-in', and DELETE
 * .../device, which stops that child (subscription.c)
 */
enum MHD_Result subscription_route(struct req *r, const char *rest,
    const char *method);
/*
 * subscription_sign_out: DELETE /settings/credentials/openai-subscription,
 * the ChatGPT sign-out (sub_sign_out; a sign-in in progress ends too)
 */
enum MHD_Result subscription_sign_out(struct req *r, const char *method);
/* subscription_end stops a sign-in in progress, when the gateway stops */
void subscription_end(void);
/*
 * subscription_status: GET /settings/credentials, the non-secret record of
 * a child 'hw-model subscription status' as {"credentials": [record]}; a
 * child that fails is 500 with its message.  One such child runs at a
 * time; requests that come meanwhile wait and share the next one's answer
 * (subscription.c)
 */
enum MHD_Result subscription_status(struct req *r, const char *method);
enum MHD_Result skills_route(struct req *r, const char *rest,
    const char *method);
enum MHD_Result route(struct req *r);
enum MHD_Result serve_static(struct req *r);

/* hub.c: the live transports */
struct hub *hub_new(struct gateway *gw);
/* hub_close ends every stream, before the daemon stops; hub_free after */
void hub_close(struct hub *h);
void hub_free(struct hub *h);
/*
 * hub_project appends session sid's projection to out: from the hub's
 * watch of it, its logs read up to now (and verified as they are read),
 * the emitted text kept until they change.  -1 with the error when the
 * logs fail to verify.
 */
int hub_project(struct hub *h, const char *sid, struct buf *out);
/* hub_sse answers r with the event stream of session sid after after */
enum MHD_Result hub_sse(struct req *r, const char *sid, int64_t after);
/* hub_ws answers r's upgrade to a WebSocket of session sid after after */
enum MHD_Result hub_ws(struct req *r, const char *sid, int64_t after);
/*
 * hub_continue runs "hw-agent run SID --stream" unless this gateway's
 * agent runs sid already (then it runs once more when that one ends),
 * its transient records going to the session's streams.
 */
void hub_continue(struct hub *h, const char *sid);

#endif
