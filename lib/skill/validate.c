/* validate.c - a skill directory, inspected as a whole */
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "skill/skill.h"

int
skill_parse_digest(const char *s, char out[SHA256_HEX + 1])
{
	if (!strncmp(s, "sha256:", 7))
		s += 7;
	if (strlen(s) != SHA256_HEX ||
	    strspn(s, "0123456789abcdef") != SHA256_HEX)
		return -1;
	memcpy(out, s, SHA256_HEX + 1);
	return 0;
}

static const struct skill_file *
find(const struct skill_tree *t, const char *path)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->files[i].path, path))
			return &t->files[i];
	return NULL;
}

static int
read_definition(int dir, struct skill_info *si)
{
	const struct skill_file *f = find(&si->tree, "SKILL.md");
	struct buf b;
	char hex[SHA256_HEX + 1];
	int fd, rc = -1;

	if (!f)
		return hw_err_set(HW_EXIT_DATA, "invalid skill: it has no "
		    "SKILL.md");
	if ((fd = openat(dir, "SKILL.md", O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0)
		return hw_err_sys("cannot open 'SKILL.md'");
	buf_init(&b);
	if (read_fd(fd, "SKILL.md", SKILL_MAX_FILE, &b) == 0) {
		/* the bytes parsed are the bytes the digest covers */
		sha256_hex(b.p ? b.p : "", b.len, hex);
		if (strcmp(hex, f->sha256))
			hw_err_set(HW_EXIT_DATA, "invalid skill: 'SKILL.md' "
			    "changed while it was read");
		else
			rc = skill_meta_parse(&si->a, buf_cstr(&b), b.len,
			    &si->meta);
	}
	close(fd);
	buf_release(&b);
	return rc;
}

static int
check(struct skill_info *si, const char *path)
{
	char *copy = xstrdup(path), *base = basename(copy);
	const char *entry;
	int rc = 0;

	if (find(&si->tree, ".mcp.json"))
		rc = hw_err_set(HW_EXIT_DATA, "invalid skill: it uses MCP "
		    "servers (.mcp.json)");
	else if (strcmp(base, si->meta.name))
		rc = hw_err_set(HW_EXIT_DATA, "invalid skill: its name '%s' is "
		    "not its directory's name '%s'", si->meta.name, base);
	else if ((entry = json_get_str(si->meta.policy, "entrypoint")) &&
	    !find(&si->tree, entry))
		rc = hw_err_set(HW_EXIT_DATA, "invalid skill: its entrypoint "
		    "'%s' is not one of its files", entry);
	free(copy);
	return rc;
}

int
skill_inspect(const char *path, struct skill_info *si)
{
	int dir, rc;

	memset(si, 0, sizeof *si);
	arena_init(&si->a);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return hw_err_sys("cannot open skill directory '%s'", path);
	rc = skill_tree_read(dir, path, &si->tree);
	if (rc == 0)
		rc = read_definition(dir, si);
	close(dir);
	if (rc == 0)
		rc = check(si, path);
	return rc;
}

void
skill_info_release(struct skill_info *si)
{
	skill_tree_release(&si->tree);
	arena_release(&si->a);
}

/*
 * skill_compatible: NULL when the skill may run here, else why not: the
 * platform (uname's system, lowercased, or "generic") must be listed, it
 * must not need the network, and it may declare no tool but terminal.
 */
const char *
skill_compatible(const struct skill_info *si)
{
	const struct jval *pl = json_get(si->meta.policy, "platforms");
	struct utsname u;
	char sys[sizeof u.sysname];
	size_t i;
	int ok = 0;

	if (uname(&u) < 0)
		strcpy(u.sysname, "unknown");
	for (i = 0; u.sysname[i] && i + 1 < sizeof sys; i++)
		sys[i] = (char)(u.sysname[i] | (u.sysname[i] >= 'A' &&
		    u.sysname[i] <= 'Z' ? 0x20 : 0));
	sys[i] = '\0';
	for (i = 0; pl && i < pl->n; i++)
		ok |= json_is_str(pl->u.a[i], sys) ||
		    json_is_str(pl->u.a[i], "generic");
	if (!ok)
		return "its platforms do not include this one";
	if (json_get(si->meta.policy, "requires_network")->t == J_TRUE)
		return "it requires the network";
	for (i = 0; i < si->meta.ntools; i++)
		if (strcmp(si->meta.tools[i], "terminal"))
			return "it declares a tool other than terminal";
	return NULL;
}

static void
key(struct buf *b, const char *k)
{
	buf_addc(b, ',');
	json_canon_str(b, k, strlen(k));
	buf_addc(b, ':');
}

static void
str(struct buf *b, const char *s)
{
	if (s)
		json_canon_str(b, s, strlen(s));
	else
		buf_adds(b, "null");
}

void
skill_info_json(const struct skill_info *si, const char *review,
    struct buf *b)
{
	const struct skill_meta *m = &si->meta;
	const char *why = skill_compatible(si);
	size_t i;

	buf_adds(b, "{\"allowed_tools\":[");
	for (i = 0; i < m->ntools; i++) {
		if (i)
			buf_addc(b, ',');
		str(b, m->tools[i]);
	}
	buf_addc(b, ']');
	key(b, "compatibility");
	str(b, m->compatibility);
	key(b, "compatibility_reason");
	str(b, why);
	key(b, "description");
	str(b, m->description);
	buf_printf(b, ",\"file_count\":%zu,\"files\":", si->tree.n);
	skill_tree_json(&si->tree, b);
	buf_printf(b, ",\"installable\":%s", why ? "false" : "true");
	key(b, "license");
	str(b, m->license);
	key(b, "name");
	str(b, m->name);
	key(b, "policy");
	json_canon(b, m->policy);
	key(b, "review");
	str(b, review);
	key(b, "skill_id");
	str(b, json_get_str(m->policy, "id"));
	key(b, "source");
	str(b, "local-candidate");
	key(b, "status");
	str(b, "available");
	buf_printf(b, ",\"total_size\":%llu,\"tree_sha256\":\"%s\"",
	    (unsigned long long)si->tree.total, si->tree.tree_sha256);
	key(b, "version");
	str(b, json_get_str(m->policy, "version"));
	buf_adds(b, "}\n");
}
