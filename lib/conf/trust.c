/*
 * trust.c - what this user decided and chose on this machine, kept outside
 * the project: the user state directory, the decision key, the bindings of
 * recorded decisions, the confirmed project settings and the credential
 * allowlist (hw-store(5) TRUST)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/conf.h"

#define KEY_FILE "decision.key"
#define CONFIRMED_FILE "confirmed.json"
#define BINDING_SCHEMA "heartwood.decision-binding.v1"
#define CONFIRMED_SCHEMA "heartwood.user-confirmations.v1"
#define BINDINGS_MAX (64u << 20)
#define USER_CONFIG_MAX (1u << 20)

static const char *const builtin_allowlist[] = { "OPENAI_API_KEY",
	"ANTHROPIC_API_KEY", "STANFORD_AI_API_KEY",
	"HEARTWOOD_CUSTOM_MODEL_API_KEY", NULL };

/* ---- where things are ---- */

/* mkdirs creates path and its missing parents, each new one 0700 */
static int
mkdirs(const char *path)
{
	char *p = xstrdup(path), *s;
	int rc = 0, end = 0;

	for (s = p + 1; rc == 0; s++) {
		if (*s && *s != '/')
			continue;
		end = !*s;
		*s = 0;
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			rc = hw_err_sys("cannot create directory '%s'", p);
		if (end)
			break;
		*s = '/';
	}
	free(p);
	return rc;
}

/* private_dir: path is a directory of ours that nobody else may use */
static int
private_dir(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return hw_err_sys("cannot use the user state directory '%s'",
		    path);
	if (!S_ISDIR(st.st_mode))
		return hw_err_set(HW_EXIT_DATA, "refusing the user state "
		    "directory '%s': not a directory", path);
	if (st.st_uid != geteuid() || (st.st_mode & 077))
		return hw_err_set(HW_EXIT_DATA, "refusing the user state "
		    "directory '%s': it must be yours and closed to others "
		    "(chmod 700 '%s')", path, path);
	return 0;
}

int
user_state_dir(char **dir, int create)
{
	char *base = user_dir("XDG_STATE_HOME", ".local/state"), *d;
	struct stat st;

	*dir = NULL;
	if (!base)
		return -1;
	d = path_join(base, "heartwood");
	free(base);
	if (lstat(d, &st) < 0 && errno == ENOENT) {
		if (!create) {
			free(d);
			return 0;
		}
		if (mkdirs(d) < 0 || (chmod(d, 0700) < 0 &&
		    hw_err_sys("cannot chmod '%s'", d) < 0)) {
			free(d);
			return -1;
		}
	}
	if (private_dir(d) < 0) {
		free(d);
		return -1;
	}
	*dir = d;
	return 1;
}

/* project_dir: DIR/projects/<24 hex of sha256(the project's path)> */
static char *
project_dir(const char *state, char path[PATH_MAX])
{
	char hex[SHA256_HEX + 1], name[40];

	if (!realpath(".", path)) {
		hw_err_sys("cannot resolve the project directory");
		return NULL;
	}
	sha256_hex(path, strlen(path), hex);
	snprintf(name, sizeof name, "projects/%.24s", hex);
	return path_join(state, name);
}

/* ---- the decision key ---- */

/* key_read reads a 32-byte key file that is ours and closed to others */
static int
key_read(const char *path, unsigned char key[crypto_auth_KEYBYTES])
{
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? 0 : hw_err_sys("cannot open the "
		    "decision key '%s'", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077) ||
	    st.st_size != crypto_auth_KEYBYTES) {
		close(fd);
		return hw_err_set(HW_EXIT_DATA, "refusing the decision key "
		    "'%s': it must be a file of %d bytes, yours and closed to "
		    "others (mode 0600)", path, crypto_auth_KEYBYTES);
	}
	n = read(fd, key, crypto_auth_KEYBYTES);
	close(fd);
	if (n != crypto_auth_KEYBYTES)
		return hw_err_sys("cannot read the decision key '%s'", path);
	return 1;
}

/* key_create makes a new key; link(2) lets a concurrent creator win */
static int
key_create(const char *path, unsigned char key[crypto_auth_KEYBYTES])
{
	char *tmp;
	int rc;

	if (sodium_init() < 0)
		return hw_err_set(HW_EXIT_UNAVAILABLE, "libsodium cannot "
		    "start");
	crypto_auth_keygen(key);
	if (!(tmp = temp_write(path, key, crypto_auth_KEYBYTES, -1)))
		return -1;
	rc = link(tmp, path);
	if (rc < 0 && errno != EEXIST)
		hw_err_sys("cannot create the decision key '%s'", path);
	unlink(tmp);
	free(tmp);
	if (rc < 0)
		return errno == EEXIST ? key_read(path, key) : -1;
	return fsync_parent(path) < 0 ? -1 : 1;
}

/*
 * decision_key: the user's key, in *state the user state directory
 * (malloc'd); 1, 0 when there is none and !create, -1 with the error
 */
static int
decision_key(unsigned char key[crypto_auth_KEYBYTES], char **state,
    int create)
{
	char *path;
	int k;

	if ((k = user_state_dir(state, create)) <= 0)
		return k;
	path = path_join(*state, KEY_FILE);
	if ((k = key_read(path, key)) == 0 && create)
		k = key_create(path, key);
	free(path);
	if (k <= 0) {
		free(*state);
		*state = NULL;
	}
	return k;
}

int
decision_ready(void)
{
	unsigned char key[crypto_auth_KEYBYTES];
	char *state = NULL;
	int k = decision_key(key, &state, 1);

	mem_wipe(key, sizeof key);
	free(state);
	return k < 0 ? -1 : 0;
}

int
user_mac(const char *what, const void *p, size_t n,
    char out[65])
{
	unsigned char key[crypto_auth_KEYBYTES];
	unsigned char sub[crypto_auth_hmacsha256_BYTES];
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	char *state = NULL;
	struct buf label;
	int k = decision_key(key, &state, 1);

	free(state);
	if (k <= 0)
		return -1;
	/* a key of its own for each purpose, never the decision key itself */
	buf_init(&label);
	buf_printf(&label, "heartwood cache mac v1: %s", what);
	crypto_auth_hmacsha256(sub, (const unsigned char *)label.p, label.len,
	    key);
	buf_release(&label);
	crypto_auth_hmacsha256(mac, p, n, sub);
	sodium_bin2hex(out, 2 * sizeof mac + 1, mac, sizeof mac);
	mem_wipe(key, sizeof key);
	mem_wipe(sub, sizeof sub);
	return 0;
}

/* ---- decision bindings ---- */

/*
 * binding_json: the binding of approval event ev (hash ehash) in project
 * path, without its "mac"
 */
static struct jval *
binding_json(struct arena *a, const struct jval *ev, const char *ehash,
    const char *path)
{
	const struct jval *pl = json_get(ev, "payload");
	struct jval *o = json_obj(a);
	int64_t seq = -1;

	json_get_int(ev, "sequence", &seq);
	json_add(a, o, "decision", json_copy(a, json_get(pl, "decision")));
	json_add(a, o, "event_hash", json_str(a, ehash));
	json_add(a, o, "group_id", json_copy(a, json_get(pl, "group_id")));
	json_add(a, o, "project", json_str(a, path));
	json_add(a, o, "schema_version", json_str(a, BINDING_SCHEMA));
	json_add(a, o, "sequence", json_int(a, seq));
	json_add(a, o, "session_id", json_copy(a, json_get(ev,
	    "session_id")));
	return o;
}

static void
binding_mac(const struct jval *b, const unsigned char *key,
    unsigned char mac[crypto_auth_BYTES])
{
	struct buf c;

	buf_init(&c);
	json_canon(&c, b);
	crypto_auth(mac, (const unsigned char *)c.p, c.len, key);
	buf_release(&c);
}

static char *
bindings_path(const char *state, const char *sid, char path[PATH_MAX],
    int create)
{
	char *pd = project_dir(state, path), *dd, *name, *f = NULL;

	if (!pd)
		return NULL;
	dd = path_join(pd, "decisions");
	name = xasprintf("%s.jsonl", sid);
	if (!create || (mkdirs(dd) == 0 && private_dir(pd) == 0 &&
	    private_dir(dd) == 0))
		f = path_join(dd, name);
	free(name);
	free(dd);
	free(pd);
	return f;
}

static int
is_decision(const struct jval *ev)
{
	return json_is_str(json_get(ev, "kind"), "approval.recorded");
}

int
decision_bind(struct session *s, const struct jval *ev, const char *ehash)
{
	unsigned char key[crypto_auth_KEYBYTES], mac[crypto_auth_BYTES];
	char path[PATH_MAX], hex[2 * crypto_auth_BYTES + 1];
	char *state = NULL, *file = NULL;
	struct arena a;
	struct jval *b;
	struct buf line;
	int fd = -1, created, rc = -1;

	(void)s;
	if (!is_decision(ev))
		return 0;
	arena_init(&a);
	buf_init(&line);
	if (decision_key(key, &state, 1) < 0 ||
	    !(file = bindings_path(state, json_get_str(ev, "session_id"),
	    path, 1)))
		goto out;
	b = binding_json(&a, ev, ehash, path);
	binding_mac(b, key, mac);
	hex_encode(mac, sizeof mac, hex);
	json_add(&a, b, "mac", json_str(&a, hex));
	json_canon(&line, b);
	buf_addc(&line, '\n');
	if ((fd = open_append(file, &created)) < 0 ||
	    write_all(fd, line.p, line.len, file) < 0)
		goto out;
	if (fsync(fd) < 0) {
		hw_err_sys("cannot sync '%s'", file);
		goto out;
	}
	rc = created ? fsync_parent(file) : 0;
out:
	if (fd >= 0)
		close(fd);
	mem_wipe(key, sizeof key);
	buf_release(&line);
	arena_release(&a);
	free(file);
	free(state);
	return rc;
}

/*
 * The bindings a process has read, one entry per session: the hashes of
 * the decision events whose bindings check out, and the file as it was
 * when it was read, so that a miss reads it again only when it changed.
 */
struct bound {
	struct bound *next;
	char *sid;
	char *file;		/* NULL until the state directory exists */
	char path[PATH_MAX];	/* the project's real path */
	struct smap hashes;	/* keys live in a */
	struct arena a;
	struct stat seen;	/* the file when it was last read */
	char why[512];		/* why nothing could be checked, or "" */
};
static struct bound *bound_list;
static pthread_mutex_t bound_lock = PTHREAD_MUTEX_INITIALIZER;

static struct bound *
bound_of(const char *sid)
{
	struct bound *b;

	for (b = bound_list; b; b = b->next)
		if (!strcmp(b->sid, sid))
			return b;
	b = xcalloc(1, sizeof *b);
	b->sid = xstrdup(sid);
	smap_init(&b->hashes);
	arena_init(&b->a);
	b->next = bound_list;
	bound_list = b;
	return b;
}

/* binding_ok: line is a binding of session sid in project path */
static const char *
binding_ok(struct arena *a, const char *line, size_t n, const char *sid,
    const char *path, const unsigned char *key)
{
	unsigned char mac[crypto_auth_BYTES], want[crypto_auth_BYTES];
	struct jval *v = json_parse(a, line, n, NULL, 0), *b;
	const char *hex = json_get_str(v, "mac"), *h;
	size_t i;

	if (!v || v->t != J_OBJECT || !hex || strlen(hex) != 2 * sizeof mac ||
	    !json_is_str(json_get(v, "schema_version"), BINDING_SCHEMA) ||
	    !json_is_str(json_get(v, "session_id"), sid) ||
	    !json_is_str(json_get(v, "project"), path) ||
	    !(h = json_get_str(v, "event_hash")))
		return NULL;
	if (sodium_hex2bin(mac, sizeof mac, hex, 2 * sizeof mac, NULL, &i,
	    NULL) != 0 || i != sizeof mac)
		return NULL;
	b = json_obj(a);
	for (i = 0; i < v->n; i++)
		if (strcmp(v->u.m[i].k, "mac"))
			json_add(a, b, v->u.m[i].k, v->u.m[i].v);
	binding_mac(b, key, want);
	return sodium_memcmp(mac, want, sizeof mac) == 0 ? h : NULL;
}

/* same_file: st is the file as seen before */
static int
same_file(const struct stat *st, const struct stat *seen)
{
	return st->st_ino == seen->st_ino && st->st_dev == seen->st_dev &&
	    st->st_size == seen->st_size &&
	    st->st_mtim.tv_sec == seen->st_mtim.tv_sec &&
	    st->st_mtim.tv_nsec == seen->st_mtim.tv_nsec;
}

/* bound_load puts the valid bindings of f (file content) in b->hashes */
static void
bound_load(struct bound *b, const struct buf *f, const unsigned char *key)
{
	struct arena t;
	const char *h;
	char *p, *nl;

	arena_init(&t);
	for (p = f->p; p && p < f->p + f->len; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(f->p + f->len - p))))
			break;	/* a torn last line binds nothing */
		arena_clear(&t);
		if ((h = binding_ok(&t, p, (size_t)(nl - p), b->sid, b->path,
		    key)) && !smap_get(&b->hashes, h, strlen(h))) {
			h = arena_strndup(&b->a, h, strlen(h));
			smap_put(&b->hashes, h, strlen(h), (void *)h);
		}
	}
	arena_release(&t);
}

/* bound_read reads the session's bindings again when the file changed */
static void
bound_read(struct bound *b)
{
	unsigned char key[crypto_auth_KEYBYTES];
	char *state = NULL;
	struct stat st;
	struct buf f;
	int k;

	if (!b->file && (user_state_dir(&state, 0) <= 0 ||
	    !(b->file = bindings_path(state, b->sid, b->path, 0)))) {
		free(state);
		return;
	}
	free(state);
	state = NULL;
	if (lstat(b->file, &st) < 0 || same_file(&st, &b->seen))
		return;
	b->seen = st;
	b->why[0] = 0;
	smap_release(&b->hashes);
	smap_init(&b->hashes);
	arena_clear(&b->a);
	buf_init(&f);
	if (st.st_uid != geteuid() || (st.st_mode & 077))
		snprintf(b->why, sizeof b->why, "refusing the decision "
		    "bindings '%s': they must be yours and closed to others",
		    b->file);
	else if ((k = decision_key(key, &state, 0)) < 0)
		snprintf(b->why, sizeof b->why, "%s", hw_err_msg());
	else if (k > 0 && read_file(b->file, BINDINGS_MAX, &f) == 0)
		bound_load(b, &f, key);
	mem_wipe(key, sizeof key);
	buf_release(&f);
	free(state);
}

int
decision_bound(const char *sid, const struct jval *ev, char *why,
    size_t whysz)
{
	char h[HW_HASH_LEN + 1], saved[1024];
	int code = hw_err_code(), found;
	struct bound *b;
	struct buf scratch;

	if (!is_decision(ev))
		return 0;
	snprintf(saved, sizeof saved, "%s", hw_err_msg());
	buf_init(&scratch);
	json_hash(ev, &scratch, h);
	buf_release(&scratch);
	pthread_mutex_lock(&bound_lock);
	b = bound_of(sid);
	if (!(found = smap_get(&b->hashes, h, strlen(h)) != NULL)) {
		bound_read(b);
		found = smap_get(&b->hashes, h, strlen(h)) != NULL;
	}
	if (why && whysz)
		snprintf(why, whysz, "%s", found ? "" : b->why);
	pthread_mutex_unlock(&bound_lock);
	hw_err_set(code, "%s", saved);
	return found;
}

/* ---- confirmed project settings ---- */

static char *
confirmed_path(const char *state, char path[PATH_MAX], int create)
{
	char *pd = project_dir(state, path), *f = NULL;

	if (!pd)
		return NULL;
	if (!create || (mkdirs(pd) == 0 && private_dir(pd) == 0))
		f = path_join(pd, CONFIRMED_FILE);
	free(pd);
	return f;
}

int
trust_confirmed(const char *what, const char *value)
{
	char path[PATH_MAX], *state = NULL, *file = NULL;
	struct arena a;
	struct jval *v;
	struct stat st;
	int k, rc = 0;

	if ((k = user_state_dir(&state, 0)) <= 0)
		return k;
	arena_init(&a);
	if (!(file = confirmed_path(state, path, 0))) {
		rc = -1;
	} else if (lstat(file, &st) == 0 && (st.st_uid != geteuid() ||
	    (st.st_mode & 077))) {
		rc = hw_err_set(HW_EXIT_DATA, "refusing '%s': it must be "
		    "yours and closed to others (mode 0600)", file);
	} else if (!(v = read_json_file(file, USER_CONFIG_MAX, &a))) {
		rc = errno == ENOENT ? 0 : -1;
	} else {
		rc = json_is_str(json_get(v, "project"), path) &&
		    json_is_str(json_get(v, what), value);
	}
	arena_release(&a);
	free(file);
	free(state);
	return rc;
}

int
trust_confirm(const char *what, const char *value)
{
	char path[PATH_MAX], *state = NULL, *file = NULL;
	struct arena a;
	struct jval *v, *o;
	size_t i;
	int rc = -1;

	arena_init(&a);
	if (user_state_dir(&state, 1) < 0 ||
	    !(file = confirmed_path(state, path, 1)))
		goto out;
	if (!(v = read_json_file(file, USER_CONFIG_MAX, &a)) && errno != ENOENT)
		goto out;
	o = json_obj(&a);
	for (i = 0; v && v->t == J_OBJECT && i < v->n; i++)
		if (strcmp(v->u.m[i].k, what) && strcmp(v->u.m[i].k,
		    "project") && strcmp(v->u.m[i].k, "schema_version"))
			json_add(&a, o, v->u.m[i].k, v->u.m[i].v);
	json_add(&a, o, "project", json_str(&a, path));
	json_add(&a, o, "schema_version", json_str(&a, CONFIRMED_SCHEMA));
	json_add(&a, o, what, json_str(&a, value));
	rc = atomic_write_json(file, o);
out:
	arena_release(&a);
	free(file);
	free(state);
	return rc;
}

void
route_fingerprint(const struct model_route *r, char out[HW_HASH_LEN + 1])
{
	struct arena a;
	struct jval *o;
	struct buf s;

	arena_init(&a);
	buf_init(&s);
	o = json_obj(&a);
	json_add(&a, o, "api_key_env", r->key_env ? json_str(&a, r->key_env) :
	    json_new(&a, J_NULL));
	/* a key file changes the fingerprint; without one it is as before */
	if (r->key_file)
		json_add(&a, o, "api_key_file", json_str(&a, r->key_file));
	json_add(&a, o, "base_url", json_str(&a, r->base_url));
	json_add(&a, o, "model", json_str(&a, r->model));
	json_hash(o, &s, out);
	buf_release(&s);
	arena_release(&a);
}

/* ---- the credential allowlist ---- */

int
credential_allowed(const char *name)
{
	char *cfg, *path;
	const char *list, *p;
	struct arena a;
	struct jval *v = NULL;
	struct buf b;
	size_t n = strlen(name), k;
	int rc = 0;

	for (k = 0; builtin_allowlist[k]; k++)
		if (!strcmp(builtin_allowlist[k], name))
			return 1;
	if (!(cfg = user_dir("XDG_CONFIG_HOME", ".config")))
		return -1;
	path = path_join(cfg, "heartwood/config.toml");
	free(cfg);
	arena_init(&a);
	buf_init(&b);
	if (read_file(path, USER_CONFIG_MAX, &b) < 0)
		rc = errno == ENOENT ? 0 : -1;
	else if (!(v = toml_parse(&a, b.p ? b.p : "", b.len, path)))
		rc = -1;
	list = json_get_str(json_get(v, "credentials"), "allowlist");
	for (p = list; rc == 0 && p && *p; p += k) {
		p += strspn(p, " \t,");
		k = strcspn(p, " \t,");
		rc = k == n && !strncmp(p, name, n);
	}
	buf_release(&b);
	arena_release(&a);
	free(path);
	return rc;
}

const char *
credential_builtin_allowlist(void)
{
	return "OPENAI_API_KEY, ANTHROPIC_API_KEY, STANFORD_AI_API_KEY and "
	    "HEARTWOOD_CUSTOM_MODEL_API_KEY";
}
