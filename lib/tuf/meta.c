/* meta.c - TUF metadata documents: form, roles, keys, signatures */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "tuf/tuf.h"

static const char *const type_names[] = {
	"root", "timestamp", "snapshot", "targets"
};

static int
bad(const char *what, const char *why)
{
	return hw_err_set(HW_EXIT_DATA, "invalid metadata '%s': %s", what, why);
}

int
tuf_parse_time(const char *s, time_t *out)
{
	struct tm tm = { 0 };
	const char *e;
	size_t i;

	if (strlen(s) != 20)
		return -1;
	for (i = 0; i < 20; i++)
		if (i == 4 || i == 7 ? s[i] != '-' : i == 10 ? s[i] != 'T' :
		    i == 13 || i == 16 ? s[i] != ':' : i == 19 ? s[i] != 'Z' :
		    s[i] < '0' || s[i] > '9')
			return -1;
	e = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!e || *e || tm.tm_mon > 11 || tm.tm_mday < 1)
		return -1;
	*out = timegm(&tm);
	return 0;
}

/* positive: an int >= min in key of obj */
static int
get_count(const struct jval *obj, const char *key, int64_t min, int64_t *out)
{
	const struct jval *v = json_get(obj, key);

	return v && v->t == J_INT && json_get_int(obj, key, out) == 0 &&
	    *out >= min ? 0 : -1;
}

static int
str_array(struct tuf_md *md, const struct jval *v, const char ***out,
    size_t *n, int unique)
{
	size_t i, j;

	if (!v || v->t != J_ARRAY)
		return -1;
	*out = arena_alloc(&md->a, (v->n + 1) * sizeof **out);
	for (i = 0; i < v->n; i++) {
		if (v->u.a[i]->t != J_STRING ||
		    strlen(v->u.a[i]->u.s) != v->u.a[i]->n)
			return -1;
		(*out)[i] = v->u.a[i]->u.s;
		for (j = 0; unique && j < i; j++)
			if (!strcmp((*out)[j], (*out)[i]))
				return -1;
	}
	*n = v->n;
	return 0;
}

static int
parse_keys(struct tuf_md *md, const struct jval *keys, const char *what)
{
	size_t i;

	if (!keys || keys->t != J_OBJECT)
		return bad(what, "keys is not an object");
	md->keys = xcalloc(keys->n + 1, sizeof *md->keys);
	for (i = 0; i < keys->n; i++) {
		if (keys->u.m[i].v->t != J_OBJECT)
			return bad(what, "a key is not an object");
		if (tuf_key_parse(&md->keys[i], keys->u.m[i].k,
		    keys->u.m[i].v) < 0)
			return -1;
		md->nkeys = i + 1;
	}
	return 0;
}

static int
parse_role(struct tuf_md *md, struct tuf_role *r, const struct jval *v,
    const char *what)
{
	if (!v || v->t != J_OBJECT)
		return bad(what, "a role is not an object");
	if (str_array(md, json_get(v, "keyids"), &r->keyids, &r->nkeyids,
	    1) < 0)
		return bad(what, "a role's keyids are not distinct strings");
	if (get_count(v, "threshold", 1, &r->threshold) < 0)
		return bad(what, "a role's threshold is not an integer >= 1");
	return 0;
}

static int
parse_root(struct tuf_md *md, const struct jval *s, const char *what)
{
	const struct jval *roles = json_get(s, "roles");
	const struct jval *cs = json_get(s, "consistent_snapshot");
	size_t i;

	if (cs && cs->t != J_TRUE && cs->t != J_FALSE)
		return bad(what, "consistent_snapshot is not a boolean");
	md->consistent = cs && cs->t == J_TRUE;
	if (parse_keys(md, json_get(s, "keys"), what) < 0)
		return -1;
	if (!roles || roles->t != J_OBJECT || roles->n != 4)
		return bad(what, "roles must be exactly the four top roles");
	md->roles = arena_alloc(&md->a, 4 * sizeof *md->roles);
	md->nroles = 4;
	for (i = 0; i < 4; i++) {
		md->roles[i].name = type_names[i];
		if (parse_role(md, &md->roles[i],
		    json_get(roles, type_names[i]), what) < 0)
			return -1;
	}
	return 0;
}

int
tuf_metafile_parse(const struct jval *v, struct tuf_metafile *mf,
    const char *what)
{
	const struct jval *h;
	size_t i;

	if (!v || v->t != J_OBJECT || get_count(v, "version", 1,
	    &mf->version) < 0)
		return bad(what, "a meta entry has no version >= 1");
	mf->length = -1;
	if (json_get(v, "length") && get_count(v, "length", 0,
	    &mf->length) < 0)
		return bad(what, "a meta entry's length is not an integer");
	h = mf->hashes = json_get(v, "hashes");
	if (h && (h->t != J_OBJECT || h->n == 0))
		return bad(what, "a meta entry's hashes are not an object");
	for (i = 0; h && i < h->n; i++)
		if (h->u.m[i].v->t != J_STRING)
			return bad(what, "a hash is not a string");
	return 0;
}

static int
parse_meta(struct tuf_md *md, const struct jval *s, const char *what)
{
	struct tuf_metafile mf;
	size_t i;

	md->meta = json_get(s, "meta");
	if (!md->meta || md->meta->t != J_OBJECT)
		return bad(what, "meta is not an object");
	if (md->type == TUF_TIMESTAMP)
		return tuf_metafile_parse(json_get(md->meta, "snapshot.json"),
		    &md->snapmeta, what);
	for (i = 0; i < md->meta->n; i++)
		if (tuf_metafile_parse(md->meta->u.m[i].v, &mf, what) < 0)
			return -1;
	return 0;
}

static int
parse_target(const struct jval *v, const char *what)
{
	const struct jval *h = json_get(v, "hashes");
	int64_t len;
	size_t i;

	if (v->t != J_OBJECT || get_count(v, "length", 0, &len) < 0)
		return bad(what, "a target has no length");
	if (!h || h->t != J_OBJECT || h->n == 0)
		return bad(what, "a target has no hashes");
	for (i = 0; i < h->n; i++)
		if (h->u.m[i].v->t != J_STRING)
			return bad(what, "a target hash is not a string");
	return 0;
}

static int
parse_delegated(struct tuf_md *md, struct tuf_role *r, const struct jval *v,
    const char *what)
{
	const struct jval *t;
	size_t i, n;
	const char **strs;

	t = json_get(v, "name");
	if (!t || t->t != J_STRING || strlen(t->u.s) != t->n)
		return bad(what, "a delegated role has no name");
	r->name = t->u.s;
	for (i = 0; i < 4; i++)
		if (!strcmp(r->name, type_names[i]))
			return bad(what, "a delegated role has a top role's "
			    "name");
	if (parse_role(md, r, v, what) < 0)
		return -1;
	t = json_get(v, "terminating");
	if (!t || (t->t != J_TRUE && t->t != J_FALSE))
		return bad(what, "terminating is not a boolean");
	r->terminating = t->t == J_TRUE;
	r->paths = json_get(v, "paths");
	r->prefixes = json_get(v, "path_hash_prefixes");
	if (!r->paths == !r->prefixes)
		return bad(what, "a delegated role needs exactly one of paths "
		    "and path_hash_prefixes");
	if (str_array(md, r->paths ? r->paths : r->prefixes, &strs, &n, 0) < 0)
		return bad(what, "a delegated role's paths are not strings");
	return 0;
}

static void
hex_to_first4(const char *hex, unsigned char d[4])
{
	int i;

	for (i = 0; i < 8; i++) {
		int c = hex[i], x = c <= '9' ? c - '0' : c - 'a' + 10;

		if (i % 2)
			d[i / 2] = (unsigned char)(d[i / 2] << 4 | x);
		else
			d[i / 2] = (unsigned char)x;
	}
}

static int
parse_succinct(struct tuf_md *md, const struct jval *v, const char *what)
{
	struct tuf_role *r;
	int64_t bits;

	md->roles = arena_alloc(&md->a, sizeof *md->roles);
	r = &md->roles[0];
	if (parse_role(md, r, v, what) < 0)
		return -1;
	if (get_count(v, "bit_length", 1, &bits) < 0 || bits > 32)
		return bad(what, "succinct_roles has no bit_length of 1 to 32");
	if (!(r->name = json_get_str(v, "name_prefix")))
		return bad(what, "succinct_roles has no name_prefix");
	r->terminating = 1;
	md->bit_length = (int)bits;
	md->succinct = 1;
	md->nroles = 1;
	return 0;
}

char *
tuf_bin_name(const struct tuf_md *md, const char *path)
{
	unsigned char d[4];
	char hex[SHA256_HEX + 1];
	uint64_t bin, last = ((uint64_t)1 << md->bit_length) - 1;
	int width = snprintf(NULL, 0, "%llx", (unsigned long long)last);

	sha256_hex(path, strlen(path), hex);
	hex_to_first4(hex, d);
	bin = ((uint64_t)d[0] << 24 | (uint64_t)d[1] << 16 |
	    (uint64_t)d[2] << 8 | d[3]) >> (32 - md->bit_length);
	return xasprintf("%s-%0*llx", md->roles[0].name, width,
	    (unsigned long long)bin);
}

static int
parse_targets(struct tuf_md *md, const struct jval *s, const char *what)
{
	const struct jval *d = json_get(s, "delegations"), *roles;
	size_t i, j;

	md->targets = json_get(s, "targets");
	if (!md->targets || md->targets->t != J_OBJECT)
		return bad(what, "targets is not an object");
	for (i = 0; i < md->targets->n; i++)
		if (parse_target(md->targets->u.m[i].v, what) < 0)
			return -1;
	if (!d)
		return 0;
	md->delegations = 1;
	if (d->t != J_OBJECT || parse_keys(md, json_get(d, "keys"), what) < 0)
		return hw_err_code() == HW_EXIT_DATA ? -1 :
		    bad(what, "delegations is not an object");
	roles = json_get(d, "roles");
	if (json_get(d, "succinct_roles"))
		return roles ? bad(what, "delegations has both roles and "
		    "succinct_roles") : parse_succinct(md,
		    json_get(d, "succinct_roles"), what);
	if (!roles || roles->t != J_ARRAY)
		return bad(what, "delegations has no roles");
	md->roles = arena_alloc(&md->a, (roles->n + 1) * sizeof *md->roles);
	for (i = 0; i < roles->n; i++) {
		if (parse_delegated(md, &md->roles[i], roles->u.a[i], what) < 0)
			return -1;
		for (j = 0; j < i; j++)
			if (!strcmp(md->roles[j].name, md->roles[i].name))
				return bad(what, "two delegated roles share a "
				    "name");
		md->nroles = i + 1;
	}
	return 0;
}

static int
parse_signed(struct tuf_md *md, const struct jval *s, enum tuf_type want,
    const char *what)
{
	const char *type = json_get_str(s, "_type");
	const char *spec = json_get_str(s, "spec_version");
	const char *exp = json_get_str(s, "expires");
	size_t dots = 0;
	const char *p;

	if (!type || strcmp(type, type_names[want]))
		return bad(what, "it is not of the expected type");
	md->type = want;
	if (!spec || strncmp(spec, "1.", 2))
		return bad(what, "spec_version is not 1.x");
	for (p = spec; *p; p++)
		dots += *p == '.';
	if (dots < 1 || dots > 2)
		return bad(what, "spec_version is not 1.x");
	if (get_count(s, "version", 1, &md->version) < 0)
		return bad(what, "version is not an integer >= 1");
	if (!exp || tuf_parse_time(exp, &md->expires) < 0)
		return bad(what, "expires is not a UTC time");
	switch (want) {
	case TUF_ROOT: return parse_root(md, s, what);
	case TUF_TIMESTAMP:
	case TUF_SNAPSHOT: return parse_meta(md, s, what);
	case TUF_TARGETS: return parse_targets(md, s, what);
	}
	return -1;
}

static int
parse_sigs(const struct jval *sigs, const char *what)
{
	size_t i, j;

	if (!sigs || sigs->t != J_ARRAY)
		return bad(what, "signatures is not an array");
	for (i = 0; i < sigs->n; i++) {
		const struct jval *s = sigs->u.a[i];
		const char *id = json_get_str(s, "keyid");

		if (s->t != J_OBJECT || !id || !json_get_str(s, "sig"))
			return bad(what, "a signature is malformed");
		for (j = 0; j < i; j++)
			if (!strcmp(id, json_get_str(sigs->u.a[j], "keyid")))
				return bad(what, "two signatures share a "
				    "keyid");
	}
	return 0;
}

struct tuf_md *
tuf_md_parse(const void *p, size_t n, enum tuf_type want, const char *what)
{
	struct tuf_md *md = xcalloc(1, sizeof *md);
	const struct jval *top, *s;
	char err[128];

	arena_init(&md->a);
	buf_init(&md->raw);
	buf_init(&md->canon);
	buf_add(&md->raw, p, n);
	top = json_parse(&md->a, buf_cstr(&md->raw), n, err, sizeof err);
	if (!top) {
		hw_err_set(HW_EXIT_DATA, "invalid metadata '%s': %s", what,
		    err);
		goto fail;
	}
	s = json_get(top, "signed");
	if (top->t != J_OBJECT || !s || s->t != J_OBJECT) {
		bad(what, "it has no signed object");
		goto fail;
	}
	md->sigs = json_get(top, "signatures");
	if (parse_sigs(md->sigs, what) < 0 ||
	    parse_signed(md, s, want, what) < 0)
		goto fail;
	if (tuf_canon(&md->canon, s) < 0) {
		bad(what, "it holds a number that is not an integer");
		goto fail;
	}
	return md;
fail:
	tuf_md_free(md);
	return NULL;
}

void
tuf_md_free(struct tuf_md *md)
{
	size_t i;

	if (!md)
		return;
	for (i = 0; i < md->nkeys; i++)
		tuf_key_release(&md->keys[i]);
	free(md->keys);
	free(md->name);
	buf_release(&md->raw);
	buf_release(&md->canon);
	arena_release(&md->a);
	free(md);
}

static int
is_bin(const struct tuf_md *md, const char *name)
{
	const char *pre = md->roles[0].name;
	uint64_t last = ((uint64_t)1 << md->bit_length) - 1;
	int width = snprintf(NULL, 0, "%llx", (unsigned long long)last);
	size_t n = strlen(pre);
	unsigned long long v;
	char *end;

	if (strncmp(name, pre, n) || name[n] != '-' ||
	    strlen(name + n + 1) != (size_t)width ||
	    strspn(name + n + 1, "0123456789abcdef") != (size_t)width)
		return 0;
	v = strtoull(name + n + 1, &end, 16);
	return v <= last;
}

const struct tuf_role *
tuf_md_role(const struct tuf_md *delegator, const char *name)
{
	size_t i;

	if (delegator->succinct)
		return is_bin(delegator, name) ? &delegator->roles[0] : NULL;

	for (i = 0; i < delegator->nroles; i++)
		if (!strcmp(delegator->roles[i].name, name))
			return &delegator->roles[i];
	return NULL;
}

static const struct tuf_key *
find_key(const struct tuf_md *d, const char *id)
{
	size_t i;

	for (i = 0; i < d->nkeys; i++)
		if (!strcmp(d->keys[i].id, id))
			return &d->keys[i];
	return NULL;
}

static const char *
sig_for(const struct jval *sigs, const char *id)
{
	size_t i;

	for (i = 0; i < sigs->n; i++)
		if (!strcmp(json_get_str(sigs->u.a[i], "keyid"), id))
			return json_get_str(sigs->u.a[i], "sig");
	return NULL;
}

int
tuf_md_verify(const struct tuf_md *delegator, const char *role,
    const struct tuf_md *md)
{
	const struct tuf_role *r = tuf_md_role(delegator, role);
	const struct tuf_key *k;
	const char *sig;
	int64_t good = 0;
	size_t i;

	if (!r)
		return hw_err_set(HW_EXIT_DATA, "role '%s' is not delegated",
		    role);
	/* the role's keyids are distinct, so each key counts once */
	for (i = 0; i < r->nkeyids; i++) {
		k = find_key(delegator, r->keyids[i]);
		sig = sig_for(md->sigs, r->keyids[i]);
		if (k && sig && tuf_key_verify(k, sig, md->canon.p,
		    md->canon.len))
			good++;
	}
	if (good < r->threshold)
		return hw_err_set(HW_EXIT_DATA, "metadata '%s' has %lld of the "
		    "%lld signatures it needs", role, (long long)good,
		    (long long)r->threshold);
	return 0;
}

static const EVP_MD *
hash_md(const char *alg)
{
	if (!strcmp(alg, "sha256"))
		return EVP_sha256();
	if (!strcmp(alg, "sha384"))
		return EVP_sha384();
	if (!strcmp(alg, "sha512"))
		return EVP_sha512();
	return NULL;
}

int
tuf_hashes_check(const struct jval *hashes, const void *p, size_t n,
    const char *what)
{
	unsigned char d[EVP_MAX_MD_SIZE];
	char hex[2 * EVP_MAX_MD_SIZE + 1];
	unsigned int dn;
	const EVP_MD *m;
	size_t i;

	for (i = 0; i < hashes->n; i++) {
		m = hash_md(hashes->u.m[i].k);
		if (!m)
			return hw_err_set(HW_EXIT_DATA, "'%s' lists the "
			    "unsupported hash '%s'", what, hashes->u.m[i].k);
		if (!EVP_Digest(p, n, d, &dn, m, NULL))
			return hw_err_set(HW_EXIT_DATA, "cannot hash '%s'",
			    what);
		hex_encode(d, dn, hex);
		if (strcmp(hex, hashes->u.m[i].v->u.s))
			return hw_err_set(HW_EXIT_DATA, "'%s' does not match "
			    "its %s hash", what, hashes->u.m[i].k);
	}
	return 0;
}
