/* store.c - the project layout, session directories, metadata, the lease */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "store/logs.h"

#define STORE ".heartwood"
#define META_MAX (64 * 1024)

static const char *const store_dirs[] = {
	"sessions", "models", "skills", "audit", "runtime", "logs", "cache",
	NULL
};

void
project_release(struct project *p)
{
	free(p->root);
	free(p->sessions);
	p->root = p->sessions = NULL;
}

/* lstat_kind: 0 missing, 'd' directory, 'f' regular, 'l' symlink, 'o' other */
static int
lstat_kind(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (S_ISLNK(st.st_mode))
		return 'l';
	if (S_ISDIR(st.st_mode))
		return 'd';
	return S_ISREG(st.st_mode) ? 'f' : 'o';
}

/*
 * fresh_entry: what a store without state.json may hold.  The reference
 * allows .state.lock and a lone models/ mount; we also allow what our own
 * initialization leaves when it is interrupted (empty directories of the
 * layout, .gitignore, temporary files), so a rerun completes it.
 */
static int
fresh_entry(const char *root, const char *name)
{
	const char *const *d;
	char *p;
	int ok = 0, k;
	DIR *sub;
	struct dirent *e;

	if (!strcmp(name, ".") || !strcmp(name, "..") ||
	    !strcmp(name, ".state.lock"))
		return 1;
	p = path_join(root, name);
	k = lstat_kind(p);
	if (!strcmp(name, ".gitignore") || !strncmp(name, "..gitignore-", 12) ||
	    !strncmp(name, ".state.json-", 12))
		ok = k == 'f';
	for (d = store_dirs; *d && !ok; d++)
		if (!strcmp(name, *d) && k == 'd' && (sub = opendir(p))) {
			ok = 1;
			while ((e = readdir(sub)))
				if (strcmp(e->d_name, ".") &&
				    strcmp(e->d_name, "..") &&
				    strcmp(*d, "models"))
					ok = 0;
			closedir(sub);
		}
	free(p);
	return ok;
}

static int
empty_store(const char *root)
{
	DIR *d = opendir(root);
	struct dirent *e;
	int ok = 1;

	if (!d)
		return hw_err_sys("cannot open '%s'", root);
	while ((e = readdir(d)))
		if (!fresh_entry(root, e->d_name))
			ok = 0;
	closedir(d);
	return ok ? 0 : hw_err_set(HW_EXIT_DATA, "invalid store layout "
	    "'%s': no state.json but the directory is not empty", root);
}

static int
check_layout(const char *root)
{
	const char *const *d;
	struct buf b;
	char *p;
	int k, rc = 0;

	for (d = store_dirs; *d && rc == 0; d++) {
		p = path_join(root, *d);
		if ((k = lstat_kind(p)) != 'd')
			rc = hw_err_set(HW_EXIT_DATA, "invalid store layout: "
			    "'%s' is %s", p, k == 'l' ? "a symbolic link" :
			    k == 0 ? "missing" : "not a directory");
		else
			rc = owned_path(p);
		free(p);
	}
	if (rc)
		return rc;
	buf_init(&b);
	p = path_join(root, ".gitignore");
	if (read_file(p, 64, &b) < 0 || b.len != 2 || memcmp(b.p, "*\n", 2))
		rc = hw_err_set(HW_EXIT_DATA, "invalid store layout: '%s' "
		    "must hold exactly \"*\"", p);
	free(p);
	buf_release(&b);
	return rc;
}

static int
init_layout(const char *root)
{
	const char *const *d;
	char *p;
	int rc = 0;

	p = path_join(root, ".gitignore");
	rc = atomic_replace(p, "*\n", 2);
	free(p);
	for (d = store_dirs; *d && rc == 0; d++) {
		p = path_join(root, *d);
		rc = ensure_dir(p);
		free(p);
	}
	return rc;
}

/* check_marker reads state.json; rewrites it when a migration applied */
static int
check_marker(const char *path, int rewrite)
{
	struct arena a;
	struct jval *v, *m;
	int rc = -1;

	arena_init(&a);
	if (!(v = read_json_file(path, META_MAX, &a)))
		goto out;
	if (!(m = migrate(&a, "project_state", v)))
		goto out;
	if (!json_equal(m, project_state_marker(&a))) {
		hw_err_set(HW_EXIT_DATA, "'%s' does not declare the current "
		    "formats", path);
		goto out;
	}
	rc = m != v && rewrite ? atomic_write_json(path, m) : 0;
out:
	arena_release(&a);
	return rc;
}

int
project_open(struct project *p, int create)
{
	char *state = NULL, *lockp = NULL;
	int k, lock = -1, rc = -1;

	p->root = xstrdup(STORE);
	p->sessions = path_join(STORE, "sessions");
	k = lstat_kind(STORE);
	if (k == 'l' || k == 'f' || k == 'o')
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': %s", STORE,
		    k == 'l' ? "it is a symbolic link" : "not a directory");
	if (k < 0)
		return hw_err_sys("cannot stat '%s'", STORE);
	/* another user's store, or one others can write, is theirs */
	if (k == 'd' && owned_path(STORE) < 0)
		return -1;
	if (k == 0 && !create) {
		errno = ENOENT;
		return hw_err_set(HW_EXIT_NOINPUT, "no heartwood store in "
		    "this directory");
	}
	if (k == 0 && ensure_dir(STORE) < 0)
		return -1;
	state = path_join(STORE, "state.json");
	lockp = path_join(STORE, ".state.lock");
	/* refuse a foreign directory before leaving a lock file in it */
	if (lstat_kind(state) == 0 && empty_store(STORE) < 0)
		goto out;
	if (create && (lock = lock_open(lockp, 0)) < 0)
		goto out;
	k = lstat_kind(state);
	if (k == 0) {
		if (empty_store(STORE) < 0)
			goto out;
		if (!create) {
			errno = ENOENT;
			hw_err_set(HW_EXIT_NOINPUT, "no heartwood store in "
			    "this directory");
			goto out;
		}
		if (init_layout(STORE) < 0)
			goto out;
		{
			struct arena a;

			arena_init(&a);
			rc = atomic_write_json(state, project_state_marker(&a));
			arena_release(&a);
		}
		goto out;
	}
	if (k != 'f') {
		hw_err_set(HW_EXIT_DATA, "invalid store layout: '%s' is not a "
		    "regular file", state);
		goto out;
	}
	if (owned_path(state) < 0 || check_layout(STORE) < 0 ||
	    check_marker(state, create) < 0)
		goto out;
	rc = 0;
out:
	lock_close(lock);
	free(state);
	free(lockp);
	return rc;
}

int
session_init(struct session *s, struct project *p, const char *id)
{
	memset(s, 0, sizeof *s);
	s->lease_fd = s->ev_fd = s->au_fd = -1;
	if (!valid_session_id(id))
		return hw_err_set(HW_EXIT_USAGE, "invalid session id '%.*s': "
		    "expected 1-128 of A-Z a-z 0-9 _ . - starting with a "
		    "letter or digit", 140, id);
	s->proj = p;
	strcpy(s->id, id);
	s->dir = path_join(STORE "/sessions", id);
	s->events = path_join(s->dir, "events.jsonl");
	s->audit = path_join(s->dir, "audit.jsonl");
	s->journal = path_join(s->dir, ".pending-commit.json");
	s->writer_json = path_join(s->dir, ".writer.json");
	s->writer_lock = path_join(s->dir, ".writer.lock");
	s->snapshot_lock = path_join(s->dir, ".snapshot.lock");
	s->commands = path_join(s->dir, ".commands");
	s->metadata = path_join(s->dir, "metadata.json");
	s->metadata_lock = path_join(s->dir, ".metadata.lock");
	return 0;
}

void
session_release(struct session *s)
{
	/*
	 * session_init names the directory before anything is opened: a
	 * session without one (zeroed, never initialized) holds no
	 * descriptor, and its zeroes are not descriptor 0
	 */
	if (!s->dir)
		s->lease_fd = s->ev_fd = s->au_fd = -1;
	if (s->ev_fd >= 0)
		close(s->ev_fd);
	if (s->au_fd >= 0)
		close(s->au_fd);
	lock_close(s->lease_fd);
	free(s->dir);
	free(s->events);
	free(s->audit);
	free(s->journal);
	free(s->writer_json);
	free(s->writer_lock);
	free(s->snapshot_lock);
	free(s->bloom);
	free(s->commands);
	free(s->metadata);
	free(s->metadata_lock);
	arena_release(&s->ca);
	arena_release(&s->ra);
	smap_release(&s->received);
	commit_set_release(&s->cset);
	buf_release(&s->crec);
	memset(s, 0, sizeof *s);
	s->lease_fd = s->ev_fd = s->au_fd = -1;
}

int
session_exists(struct session *s)
{
	int k;

	if (lstat_kind(STORE "/sessions") == 'l')
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': it is a "
		    "symbolic link", STORE "/sessions");
	if (owned_path(STORE "/sessions") < 0)
		return -1;
	k = lstat_kind(s->dir);
	if (k == 0)
		return 0;
	if (k == 'd')
		return owned_path(s->dir) < 0 ? -1 : 1;
	if (k < 0)
		return hw_err_sys("cannot stat '%s'", s->dir);
	return hw_err_set(HW_EXIT_DATA, "refusing session directory '%s': %s",
	    s->dir, k == 'l' ? "it is a symbolic link" : "not a directory");
}

/* py_space: the characters Python's str.split() treats as white space */
static size_t
py_space(const unsigned char *p)
{
	if (*p == ' ' || (*p >= 0x09 && *p <= 0x0d) || (*p >= 0x1c &&
	    *p <= 0x1f))
		return 1;
	if (p[0] == 0xc2 && (p[1] == 0x85 || p[1] == 0xa0))
		return 2;
	if (p[0] == 0xe1 && p[1] == 0x9a && p[2] == 0x80)
		return 3;				/* U+1680 */
	if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] <= 0x8a || p[2] == 0xa8 ||
	    p[2] == 0xa9 || p[2] == 0xaf))
		return 3;				/* U+2000-200A, 2028/9, 202F */
	if (p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f)
		return 3;				/* U+205F */
	if (p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80)
		return 3;				/* U+3000 */
	return 0;
}

int
title_normalize(const char *in, char *out, size_t outsz)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t n = 0, k;
	int space = 0;

	if (!valid_utf8(in, strlen(in)))
		return -1;
	while (*p) {
		if ((k = py_space(p))) {
			space = n > 0;
			p += k;
			continue;
		}
		if (space)
			out[n++] = ' ';
		space = 0;
		if (n + 2 >= outsz)
			return -1;
		out[n++] = (char)*p++;
	}
	out[n] = '\0';
	if (n == 0 || utf8_count(out, n) > 120)
		return -1;
	return 0;
}

static int
write_meta(struct session *s, const char *title, const char *created)
{
	struct arena a;
	struct jval *m;
	char now[21];
	int rc;

	utc_now(now);
	arena_init(&a);
	m = json_obj(&a);
	json_set(&a, m, "schema_version", json_str(&a, current_version(
	    "session_metadata")));
	json_set(&a, m, "title", json_str(&a, title));
	json_set(&a, m, "created_at", json_str(&a, created ? created : now));
	json_set(&a, m, "updated_at", json_str(&a, now));
	rc = atomic_write_json(s->metadata, m);
	arena_release(&a);
	return rc;
}

int
session_register(struct session *s, const char *title)
{
	int lock, rc = 0;

	if (session_exists(s) < 0 || ensure_dir(s->dir) < 0)
		return -1;
	if ((lock = lock_open(s->metadata_lock, 0)) < 0)
		return -1;
	if (lstat_kind(s->metadata) == 0) {
		if (!title)
			title = strcmp(s->id, "session-main") == 0 ?
			    "Main session" : s->id;
		rc = write_meta(s, title, NULL);
	}
	lock_close(lock);
	return rc;
}

int
session_read_meta(struct session *s, struct arena *a, struct jval **meta)
{
	struct jval *v;

	if (!(v = read_json_file(s->metadata, META_MAX, a)))
		return -1;
	if (!(v = migrate(a, "session_metadata", v)))
		return hw_err_set(HW_EXIT_DATA, "'%s': %s", s->metadata,
		    hw_err_msg());
	if (!json_get_str(v, "title") || !json_get_str(v, "created_at") ||
	    !json_get_str(v, "updated_at"))
		return hw_err_set(HW_EXIT_DATA, "'%s': title, created_at and "
		    "updated_at must be strings", s->metadata);
	*meta = v;
	return 0;
}

int
session_rename(struct session *s, const char *title)
{
	struct arena a;
	struct jval *m;
	int lock, rc = -1;

	if ((lock = lock_open(s->metadata_lock, 0)) < 0)
		return -1;
	arena_init(&a);
	if (session_read_meta(s, &a, &m) == 0)
		rc = write_meta(s, title, json_get_str(m, "created_at"));
	arena_release(&a);
	lock_close(lock);
	return rc;
}

static void
busy(struct session *s)
{
	struct arena a;
	struct jval *w;
	int64_t pid = 0;
	const char *host;
	int code;
	char msg[1024];

	snprintf(msg, sizeof msg, "%s", hw_err_msg());
	code = hw_err_code();
	if (code != HW_EXIT_BUSY) {
		hw_err_set(code, "%s", msg);
		return;
	}
	arena_init(&a);
	w = read_json_file(s->writer_json, META_MAX, &a);
	host = w ? json_get_str(w, "host") : NULL;
	if (w && json_get_int(w, "pid", &pid) == 0 && host &&
	    valid_utf8(host, strlen(host)) && strlen(host) < 256)
		hw_err_set(HW_EXIT_BUSY, "session '%s' is busy: held by pid "
		    "%lld on host %s", s->id, (long long)pid, host);
	else
		hw_err_set(HW_EXIT_BUSY, "session '%s' is busy: another "
		    "process holds its writer lease", s->id);
	arena_release(&a);
}

static int
write_writer(struct session *s)
{
	struct arena a;
	struct jval *w;
	char host[256] = "", now[21];
	int rc;

	if (gethostname(host, sizeof host - 1) < 0)
		strcpy(host, "unknown");
	if (random_hex(s->token, 16) < 0)
		return -1;
	utc_now(now);
	arena_init(&a);
	w = json_obj(&a);
	json_set(&a, w, "schema_version", json_str(&a, current_version(
	    "session_writer")));
	json_set(&a, w, "session_id", json_str(&a, s->id));
	json_set(&a, w, "pid", json_int(&a, getpid()));
	json_set(&a, w, "host", json_str(&a, host));
	json_set(&a, w, "started_at", json_str(&a, now));
	json_set(&a, w, "token", json_str(&a, s->token));
	rc = atomic_write_json(s->writer_json, w);
	arena_release(&a);
	return rc;
}

static int
open_logs(struct session *s)
{
	int c1, c2;

	if ((s->ev_fd = open_append(s->events, &c1)) < 0 ||
	    (s->au_fd = open_append(s->audit, &c2)) < 0)
		return -1;
	return c1 || c2 ? fsync_dir(s->dir) : 0;
}

void
session_received_add(struct session *s, const char *id)
{
	size_t n = strlen(id);

	if (!smap_get(&s->received, id, n))
		smap_put(&s->received, arena_strndup(&s->ra, id, n), n, s);
}

/* What the lease's verification hands on: the caller's fn, ctx. */
struct lease_read {
	struct session *s;
	event_fn fn;
	void *ctx;
};

static int
lease_event(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	struct lease_read *r = ctx;
	const char *id;

	if (json_is_str(json_get(ev, "kind"), "command.received") &&
	    (id = json_get_str(json_get(ev, "payload"), "command_id")))
		session_received_add(r->s, id);
	return r->fn ? r->fn(r->ctx, line, n, ev) : 0;
}

int
session_lease(struct session *s)
{
	return session_lease_read(s, NULL, NULL);
}

int
session_lease_read(struct session *s, event_fn fn, void *ctx)
{
	return session_lease_since(s, NULL, NULL, fn, ctx);
}

int
session_lease_since(struct session *s, const struct logpos *from,
    int *used, event_fn fn, void *ctx)
{
	struct lease_read r = { s, fn, ctx };
	int k, u = 0, *up = used ? used : &u;

	if ((s->lease_fd = lock_open(s->writer_lock, 1)) < 0) {
		busy(s);
		return -1;
	}
	if (ftruncate(s->lease_fd, 0) < 0) {
		hw_err_sys("cannot truncate '%s'", s->writer_lock);
		goto fail;
	}
	/*
	 * A .writer.json left behind is the evidence that its writer died;
	 * only then may recovery complete a commit.  Ours is written after
	 * the logs check out, so a refused (tampered) store stays refused.
	 */
	k = lstat_kind(s->writer_json);
	s->stale = k != 0;
	smap_release(&s->received);
	arena_clear(&s->ra);
	s->received_known = 0;
	if (s->stale || lstat_kind(s->journal) != 0) {
		if (logs_recover(s) < 0)	/* it verifies what it keeps */
			goto fail;
	} else if (!fn && logs_verify(s, NULL, NULL) < 0) {
		goto fail;	/* from the verified head on (hw-store(5)) */
	}
	/*
	 * A caller that reads every event (the agent) gets them from this
	 * one reading, and the command ids come along: a new command then
	 * looks for an old command.received only when its id was seen.
	 * Without one, or when only the events after from were read,
	 * command_run asks the verified head's filter instead.
	 */
	*up = 0;
	if (fn && from) {
		if (logs_verify_since(s, from, up, lease_event, &r, NULL) < 0)
			goto fail;
		s->received_known = !*up;
	} else if (fn) {
		if (logs_verify(s, lease_event, &r) < 0)
			goto fail;
		s->received_known = 1;
	}
	if (write_writer(s) < 0 || open_logs(s) < 0)
		goto fail;
	session_sync_audit(s);	/* nothing to sync: starts the clock */
	return 0;
fail:
	s->received_known = 0;
	lock_close(s->lease_fd);
	s->lease_fd = -1;
	return -1;
}

int
session_unlease(struct session *s)
{
	struct arena a;
	struct jval *w;
	int rc = 0;

	if (s->lease_fd < 0)
		return 0;
	/* the audit log is durable before the crash evidence goes */
	if (!s->broken && session_sync_audit(s) < 0)
		rc = -1;
	if (!s->broken) {
		arena_init(&a);
		w = read_json_file(s->writer_json, META_MAX, &a);
		if (w && json_is_str(json_get(w, "token"), s->token))
			rc = durable_unlink(s->writer_json);
		arena_release(&a);
	}
	s->received_known = 0;
	/* the next command starts where this writer's logs end */
	if (rc == 0 && session_head_leave(s) < 0)
		rc = -1;
	lock_close(s->lease_fd);
	s->lease_fd = -1;
	return rc;
}

