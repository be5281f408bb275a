/* local.c - hw-skill validate, digest, local inspect|install, list, remove */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "skill.h"
#include "skill/skill.h"

static int
open_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		hw_err_sys("cannot open skill directory '%s'", dir);
	return fd;
}

static int
emit(struct buf *b, int rc)
{
	if (rc == 0 && b->len)
		fwrite(b->p, 1, b->len, stdout);
	buf_release(b);
	return rc < 0 ? prog_fail("hw-skill") : prog_finish("hw-skill", 0);
}

int
skill_validate_main(const char *dir, int digest_only)
{
	struct skill_info si;
	struct buf b;
	int rc;

	buf_init(&b);
	if (digest_only == 1) {
		int fd = open_dir(dir);
		struct skill_tree t;

		if ((rc = fd < 0 ? -1 : skill_tree_read(fd, dir, &t)) == 0) {
			buf_adds(&b, "{\"files\":");
			skill_tree_json(&t, &b);
			buf_printf(&b, ",\"tree_sha256\":\"%s\"}\n",
			    t.tree_sha256);
			skill_tree_release(&t);
		}
		if (fd >= 0)
			close(fd);
		return emit(&b, rc);
	}
	rc = skill_inspect(dir, &si);
	if (rc == 0 && digest_only == 2)
		buf_printf(&b, "{\"name\":\"%s\",\"tree_sha256\":\"%s\","
		    "\"valid\":true}\n", si.meta.name, si.tree.tree_sha256);
	else if (rc == 0)
		skill_info_json(&si, "local-unreviewed", &b);
	skill_info_release(&si);
	return emit(&b, rc);
}

int
skill_install_main(const char *path, const char *expected)
{
	struct buf b;

	buf_init(&b);
	return emit(&b, skill_local_install(path, expected, &b));
}

int
skill_remove_main(const char *name)
{
	struct buf b;

	buf_init(&b);
	return emit(&b, skill_remove(name, &b));
}

int
skill_list_main(void)
{
	struct buf b;

	buf_init(&b);
	return emit(&b, skill_list(&b));
}

int
skill_sources_main(void)
{
	struct skill_sources ss;
	struct buf b;
	size_t i;

	buf_init(&b);
	if (skill_sources_load(&ss) < 0)
		return emit(&b, -1);
	for (i = 0; i < ss.n; i++)
		skill_source_json(&ss.v[i], &b);
	skill_sources_release(&ss);
	return emit(&b, 0);
}

int
skill_refresh_main(const char *source)
{
	struct buf b;

	buf_init(&b);
	return emit(&b, skill_refresh(source, &b));
}

int
skill_catalog_main(const char *name, const char *expected, const char *source)
{
	struct buf b;

	buf_init(&b);
	return emit(&b, skill_catalog_install(name, expected, source, &b));
}

int
skill_inspect_main(const char *name, const char *source)
{
	struct buf b;

	buf_init(&b);
	return emit(&b, skill_catalog_inspect(name, source, &b));
}
