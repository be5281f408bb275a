/*
 * snap.c - the agent's snapshot: its state (the conversation, the action
 * sets, the projection) at a position in the logs, so that a run reads
 * only the events after it (hw-store(5), "Verified head")
 */
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/loop.h"

#define AG_SNAP_FILE ".agent-snapshot"
/*
 * The version changes with struct agent's history fields and with
 * anything ag_ingest does differently: a snapshot of another version is
 * not read.  The projection inside it also carries SNAP_SCHEMA.
 */
#define AG_SNAP_SCHEMA "heartwood.agent-snapshot.v1"
#define AG_SNAP_MAX (512u << 20)
#define MAC_HEX 64

static const char *const statuses[] = { "idle", "running", "paused",
	"finished", "error" };

/* ---- saving ---- */

static int
by_id(const void *x, const void *y)
{
	const struct member *a = *(struct member *const *)x;
	const struct member *b = *(struct member *const *)y;

	return strcmp(a->id, b->id);
}

static struct jval *
flags(struct arena *a, int w, int x, int y, int z)
{
	struct jval *v = json_new(a, J_ARRAY);

	json_push(a, v, json_bool(a, w));
	json_push(a, v, json_bool(a, x));
	json_push(a, v, json_bool(a, y));
	json_push(a, v, json_bool(a, z));
	return v;
}

/* members, sorted by id so that equal states save equal bytes */
static struct jval *
members_save(struct arena *a, const struct agent *ag)
{
	struct member **m = xcalloc(ag->members.used + 1, sizeof *m), *x;
	struct jval *list = json_new(a, J_ARRAY), *o;
	size_t i, n = 0;

	for (i = 0; i < ag->members.cap; i++)
		if (ag->members.e[i].k)
			m[n++] = ag->members.e[i].v;
	qsort(m, n, sizeof *m, by_id);
	for (i = 0; i < n; i++) {
		x = m[i];
		o = json_obj(a);
		json_add(a, o, "id", json_str(a, x->id));
		json_add(a, o, "name", json_str(a, x->name));
		json_add(a, o, "action", json_str(a, x->action));
		json_add(a, o, "args", x->args);
		json_add(a, o, "flags", flags(a, x->decided, x->approved,
		    x->started, x->done));
		json_push(a, list, o);
	}
	free(m);
	return list;
}

static struct jval *
sets_save(struct arena *a, const struct agent *ag)
{
	struct jval *list = json_new(a, J_ARRAY), *o, *ids;
	const struct set *s;
	size_t i, j;

	for (i = 0; i < ag->nsets; i++) {
		s = ag->sets[i];
		o = json_obj(a);
		json_add(a, o, "group", json_str(a, s->group));
		ids = json_new(a, J_ARRAY);
		for (j = 0; j < s->n; j++)
			json_push(a, ids, json_str(a, s->m[j]->id));
		json_add(a, o, "members", ids);
		json_add(a, o, "flags", flags(a, s->decided, s->approved,
		    s->elsewhere, 0));
		json_push(a, list, o);
	}
	return list;
}

/* cost_save: a cost exactly (a hexadecimal float), or null if unknown */
static struct jval *
cost_save(struct arena *a, const struct counts *c)
{
	char s[64];

	if (c->unknown)
		return json_new(a, J_NULL);
	snprintf(s, sizeof s, "%a", c->cost);
	return json_str(a, s);
}

/* cost_load: c's cost from v (cost_save's); -1 when malformed */
static int
cost_load(struct counts *c, const struct jval *v)
{
	char *end;

	c->unknown = !v || v->t == J_NULL;
	c->cost = 0;
	if (c->unknown)
		return 0;
	if (v->t != J_STRING)
		return -1;
	c->cost = strtod(v->u.s, &end);
	return *end || end == v->u.s || !(c->cost >= 0) ? -1 : 0;
}

/* spec_use_save: [[USAGE_ID, calls, prompt, completion, cost], ...] */
static struct jval *
spec_use_save(struct arena *a, const struct agent *ag)
{
	struct jval *l = json_new(a, J_ARRAY), *e;
	size_t i;

	for (i = 0; i < ag->nsu; i++) {
		e = json_new(a, J_ARRAY);
		json_push(a, e, json_str(a, ag->su[i].id));
		json_push(a, e, json_int(a, ag->su[i].c.calls));
		json_push(a, e, json_int(a, ag->su[i].c.prompt));
		json_push(a, e, json_int(a, ag->su[i].c.completion));
		json_push(a, e, cost_save(a, &ag->su[i].c));
		json_push(a, l, e);
	}
	return l;
}

static struct jval *
state_save(struct arena *a, const struct agent *ag)
{
	struct jval *o = json_obj(a), *msgs, *seqs, *use;
	size_t i;
	int k;

	msgs = json_new(a, J_ARRAY);
	seqs = json_new(a, J_ARRAY);
	/* the system message is this run's own, from its prompts */
	for (i = 1; i < ag->messages->n; i++) {
		json_push(a, msgs, ag->messages->u.a[i]);
		json_push(a, seqs, json_int(a, ag->mseq[i]));
	}
	use = json_new(a, J_ARRAY);
	for (k = 0; k < 2; k++) {
		json_push(a, use, json_int(a, ag->use[k].calls));
		json_push(a, use, json_int(a, ag->use[k].prompt));
		json_push(a, use, json_int(a, ag->use[k].completion));
	}
	json_add(a, o, "count", json_int(a, ag->count));
	json_add(a, o, "status", json_str(a, ag->status));
	json_add(a, o, "flags", flags(a, ag->paused, ag->fatal,
	    ag->open != NULL, 0));
	json_add(a, o, "use", use);
	json_add(a, o, "use_cost", cost_save(a, &ag->use[USE_AGENT]));
	json_add(a, o, "condenser_cost", cost_save(a, &ag->use[USE_CONDENSER]));
	json_add(a, o, "spec_use", spec_use_save(a, ag));
	json_add(a, o, "messages", msgs);
	json_add(a, o, "mseq", seqs);
	json_add(a, o, "held", ag->held);
	json_add(a, o, "awaiting", json_int(a, (int64_t)ag->awaiting));
	json_add(a, o, "elsewhere_why", json_str(a, ag->elsewhere_why));
	json_add(a, o, "members", members_save(a, ag));
	json_add(a, o, "sets", sets_save(a, ag));
	json_add(a, o, "projection_schema", json_str(a, SNAP_SCHEMA));
	json_add(a, o, "projection", proj_save(a, ag->pj));
	return o;
}

int
ag_snap_save(struct agent *ag, const struct logpos *at)
{
	char *path = path_join(ag->s->dir, AG_SNAP_FILE);
	char mac[MAC_HEX + 1], saved[512];
	struct arena a;
	struct jval *o;
	struct buf b;
	int rc, code = hw_err_code();

	snprintf(saved, sizeof saved, "%s", hw_err_msg());
	arena_init(&a);
	buf_init(&b);
	o = json_obj(&a);
	json_add(&a, o, "position", logpos_json(&a, at));
	json_add(&a, o, "schema_version", json_str(&a, AG_SNAP_SCHEMA));
	json_add(&a, o, "session_id", json_str(&a, ag->s->id));
	json_add(&a, o, "state", state_save(&a, ag));
	/* the MAC line first, then the JSON it covers */
	buf_add(&b, "0123456789abcdef0123456789abcdef0123456789abcdef01234567"
	    "89abcdef\n", MAC_HEX + 1);
	json_canon(&b, o);
	buf_addc(&b, '\n');
	if (user_mac("agent snapshot", b.p + MAC_HEX + 1, b.len - MAC_HEX - 1,
	    mac) == 0) {
		memcpy(b.p, mac, MAC_HEX);
		rc = cache_write(path, b.p, b.len);
	} else {
		rc = 0;		/* no key to seal it with: no snapshot */
		hw_err_set(code, "%s", saved);
	}
	buf_release(&b);
	arena_release(&a);
	free(path);
	return rc;
}

/* ---- loading ---- */

struct ld {
	struct agent *ag;
	int bad;
};

static const struct jval *
list(struct ld *l, const struct jval *o, const char *k)
{
	const struct jval *v = json_get(o, k);

	if (!v || v->t != J_ARRAY) {
		l->bad = 1;
		return NULL;
	}
	return v;
}

static const char *
text(struct ld *l, const struct jval *o, const char *k)
{
	const struct jval *v = json_get(o, k);

	if (!v || v->t != J_STRING || strlen(v->u.s) != v->n) {
		l->bad = 1;
		return "";
	}
	return v->u.s;
}

/* flags_load: the four booleans of o's "flags" into f */
static void
flags_load(struct ld *l, const struct jval *o, int f[4])
{
	const struct jval *v = list(l, o, "flags");
	size_t i;

	if (!v || v->n != 4) {
		l->bad = 1;
		return;
	}
	for (i = 0; i < 4; i++) {
		if (v->u.a[i]->t != J_TRUE && v->u.a[i]->t != J_FALSE)
			l->bad = 1;
		f[i] = v->u.a[i]->t == J_TRUE;
	}
}

static void
members_load(struct ld *l, const struct jval *v)
{
	struct agent *ag = l->ag;
	struct member *x;
	const struct jval *o;
	size_t i;
	int f[4] = { 0 };

	for (i = 0; v && i < v->n && !l->bad; i++) {
		o = v->u.a[i];
		x = arena_alloc(&ag->a, sizeof *x);
		x->id = text(l, o, "id");
		x->name = text(l, o, "name");
		x->action = text(l, o, "action");
		x->args = json_get(o, "args");
		flags_load(l, o, f);
		if (!x->args || !*x->id || smap_get(&ag->members, x->id,
		    strlen(x->id))) {
			l->bad = 1;
			return;
		}
		x->decided = f[0], x->approved = f[1];
		x->started = f[2], x->done = f[3];
		smap_put(&ag->members, x->id, strlen(x->id), x);
	}
}

static void
sets_load(struct ld *l, const struct jval *v)
{
	struct agent *ag = l->ag;
	const struct jval *o, *ids;
	struct member *x;
	struct set *s;
	size_t i, j;
	int f[4] = { 0 };

	for (i = 0; v && i < v->n && !l->bad; i++) {
		o = v->u.a[i];
		s = ag_new_set(ag, text(l, o, "group"));
		ids = list(l, o, "members");
		for (j = 0; ids && j < ids->n; j++) {
			x = ids->u.a[j]->t == J_STRING ? smap_get(&ag->members,
			    ids->u.a[j]->u.s, ids->u.a[j]->n) : NULL;
			if (!x || x->group) {
				l->bad = 1;
				return;
			}
			ag_set_add(ag, s, x);
		}
		flags_load(l, o, f);
		s->decided = f[0], s->approved = f[1], s->elsewhere = f[2];
	}
}

/* int_of: a non-negative integer, or -1 */
static int
int_of(const struct jval *v, int64_t *out)
{
	char *end;
	long long x;

	if (!v || v->t != J_INT || v->n > 18 || v->u.s[0] == '-')
		return -1;
	x = strtoll(v->u.s, &end, 10);
	if (*end)
		return -1;
	*out = x;
	return 0;
}

static int64_t
count_of(struct ld *l, const struct jval *o, const char *k)
{
	int64_t n = -1;

	if (json_get_int(o, k, &n) < 0 || n < 0)
		l->bad = 1;
	return n;
}

static void
messages_load(struct ld *l, const struct jval *o)
{
	struct agent *ag = l->ag;
	const struct jval *m = list(l, o, "messages"), *q = list(l, o, "mseq");
	int64_t seq, last = -1;
	size_t i;

	if (!m || !q || m->n != q->n) {
		l->bad = 1;
		return;
	}
	for (i = 0; i < m->n; i++) {
		if (m->u.a[i]->t != J_OBJECT) {
			l->bad = 1;
			return;
		}
		if (int_of(q->u.a[i], &seq) < 0 || seq < last) {
			l->bad = 1;
			return;
		}
		last = seq;
		ag->count = seq + 1;	/* what ag_push records */
		ag_push(ag, m->u.a[i]);
	}
}

/*
 * spec_use_load: the specialists' counts (a snapshot from before there
 * were specialists has none); -1 when malformed
 */
static int
spec_use_load(struct agent *ag, const struct jval *v)
{
	const struct jval *e;
	struct counts *c;
	int64_t u[3];
	size_t i, k;

	if (!v)
		return 0;
	if (v->t != J_ARRAY)
		return -1;
	for (i = 0; i < v->n; i++) {
		e = v->u.a[i];
		if (e->t != J_ARRAY || e->n != 5 || e->u.a[0]->t != J_STRING ||
		    strlen(e->u.a[0]->u.s) != e->u.a[0]->n ||
		    strncmp(e->u.a[0]->u.s, "specialist:", 11))
			return -1;
		for (k = 0; k < 3; k++)
			if (int_of(e->u.a[k + 1], &u[k]) < 0)
				return -1;
		c = ag_spec_use(ag, e->u.a[0]->u.s);
		*c = (struct counts){ u[0], u[1], u[2], 0, 0 };
		if (cost_load(c, e->u.a[4]) < 0)
			return -1;
	}
	return 0;
}

static void
state_load(struct ld *l, const struct jval *o)
{
	struct agent *ag = l->ag;
	const struct jval *use = list(l, o, "use"), *held;
	const char *st = text(l, o, "status");
	int64_t count = count_of(l, o, "count"), u[6];
	int f[4] = { 0 };
	size_t i;

	if (l->bad || !use || use->n != 6)
		goto bad;
	for (i = 0; i < sizeof statuses / sizeof *statuses; i++)
		if (!strcmp(st, statuses[i]))
			ag->status = statuses[i];
	if (strcmp(ag->status, st))
		goto bad;
	for (i = 0; i < 6; i++)
		if (int_of(use->u.a[i], &u[i]) < 0)
			goto bad;
	ag->use[USE_AGENT] = (struct counts){ u[0], u[1], u[2], 0, 0 };
	ag->use[USE_CONDENSER] = (struct counts){ u[3], u[4], u[5], 0, 0 };
	if (cost_load(&ag->use[USE_AGENT], json_get(o, "use_cost")) < 0 ||
	    cost_load(&ag->use[USE_CONDENSER], json_get(o,
	    "condenser_cost")) < 0)
		goto bad;
	if (spec_use_load(ag, json_get(o, "spec_use")) < 0)
		goto bad;
	flags_load(l, o, f);
	messages_load(l, o);
	if (l->bad)
		goto bad;
	ag->count = count;
	ag->paused = f[0], ag->fatal = f[1];
	ag->open = f[2] ? ag_last_message(ag) : NULL;
	if ((held = list(l, o, "held")))
		ag->held = (struct jval *)held;
	ag->awaiting = (size_t)count_of(l, o, "awaiting");
	snprintf(ag->elsewhere_why, sizeof ag->elsewhere_why, "%s",
	    text(l, o, "elsewhere_why"));
	members_load(l, list(l, o, "members"));
	sets_load(l, list(l, o, "sets"));
	if (!json_is_str(json_get(o, "projection_schema"), SNAP_SCHEMA))
		goto bad;
	proj_free(ag->pj);
	ag->pj = proj_load(ag->s->id, json_get(o, "projection"));
	if (!ag->pj || proj_revision(ag->pj) != count - 1)
		goto bad;
	return;
bad:
	l->bad = 1;
}

int
ag_snap_load(struct agent *ag, struct logpos *at)
{
	char *path = path_join(ag->s->dir, AG_SNAP_FILE);
	char mac[MAC_HEX + 1], err[128], saved[512];
	const struct jval *v;
	struct ld l = { ag, 0 };
	struct buf b;
	int rc = -1, code = hw_err_code();

	snprintf(saved, sizeof saved, "%s", hw_err_msg());
	buf_init(&b);
	/* a snapshot this user's heartwood did not write is not read */
	if (private_bytes(path, AG_SNAP_MAX, &b) < 0 || b.len <= MAC_HEX ||
	    b.p[MAC_HEX] != '\n' || user_mac("agent snapshot",
	    b.p + MAC_HEX + 1, b.len - MAC_HEX - 1, mac) < 0 ||
	    memcmp(mac, b.p, MAC_HEX) != 0)
		goto out;
	v = json_parse(&ag->a, b.p + MAC_HEX + 1, b.len - MAC_HEX - 1,
	    err, sizeof err);
	if (!v || v->t != J_OBJECT || v->n != 4 ||
	    !json_is_str(json_get(v, "schema_version"), AG_SNAP_SCHEMA) ||
	    !json_is_str(json_get(v, "session_id"), ag->s->id) ||
	    logpos_parse(json_get(v, "position"), at) < 0 ||
	    !json_get(v, "state"))
		goto out;
	state_load(&l, json_get(v, "state"));
	if (!l.bad && ag->count == at->count)
		rc = 0;
	else
		ag_forget(ag);
out:
	buf_release(&b);
	free(path);
	hw_err_set(code, "%s", saved);	/* no snapshot is no error */
	return rc;
}

void
ag_forget(struct agent *ag)
{
	size_t i;

	ag->messages->n = 1;	/* the system message */
	ag->open = NULL;
	smap_release(&ag->members);
	smap_init(&ag->members);
	for (i = 0; i < ag->nsets; i++) {
		free(ag->sets[i]->m);
		buf_release(&ag->sets[i]->fingerprint);
	}
	ag->nsets = 0;
	ag->status = "idle";
	ag->count = 0;
	ag->fatal = ag->paused = 0;
	memset(ag->use, 0, sizeof ag->use);
	for (i = 0; i < ag->nsu; i++)
		free(ag->su[i].id);
	ag->nsu = 0;
	ag->held = json_new(&ag->a, J_ARRAY);
	ag->awaiting = 0;
	ag->elsewhere_why[0] = '\0';
	proj_free(ag->pj);
	ag->pj = proj_new(ag->s->id);
}
