/* prompts.c - the agent's prompts, read from the data directory */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "agent/agent.h"

#define PROMPT_MAX (64u * 1024)	/* bytes of one prompt file */

/* prompt_check: NULL if the n bytes of p can be a prompt, else why not */
static const char *
prompt_check(const char *p, size_t n)
{
	if (n == 0)
		return "the prompt is empty";
	if (memchr(p, '\0', n))
		return "the prompt holds a NUL byte";
	if (!valid_utf8(p, n))
		return "the prompt is not valid UTF-8";
	return NULL;
}

/* prompt_file reads path into b; -1 with reason set to why it could not */
static int
prompt_file(const char *path, struct buf *b, const char **reason)
{
	struct stat st;
	char chunk[4096];
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;

	buf_clear(b);
	if (fd < 0) {
		*reason = strerror(errno);
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*reason = "not a regular file";
		goto out;
	}
	for (;;) {
		r = read(fd, chunk, sizeof chunk);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*reason = strerror(errno);
			goto out;
		}
		if (r == 0)
			break;
		if (b->len + (size_t)r > PROMPT_MAX) {
			*reason = "larger than 65536 bytes";
			goto out;
		}
		buf_add(b, chunk, (size_t)r);
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

int
prompt_read(const char *dir, const char *name, struct buf *b)
{
	char *path = xasprintf("%s/prompts/%s", dir, name);
	const char *reason = NULL;

	if (prompt_file(path, b, &reason) == 0) {
		if (b->len && b->p[b->len - 1] == '\n')
			b->len--;	/* the line's end is not the prompt's */
		reason = prompt_check(b->p, b->len);
	}
	if (reason) {
		hw_err_set(HW_EXIT_UNAVAILABLE, "cannot read prompt '%s': %s",
		    path, reason);
		free(path);
		buf_clear(b);
		return -1;
	}
	free(path);
	buf_cstr(b);
	return 0;
}

void
prompts_init(struct prompts *p)
{
	buf_init(&p->system);
	buf_init(&p->rejected);
	buf_init(&p->condense);
}

int
prompts_load(struct prompts *p)
{
	char *dir = datadir_path();
	int rc = -1;

	if (!dir)
		return -1;
	if (prompt_read(dir, PROMPT_SYSTEM, &p->system) == 0 &&
	    prompt_read(dir, PROMPT_REJECTED, &p->rejected) == 0 &&
	    prompt_read(dir, PROMPT_CONDENSE, &p->condense) == 0)
		rc = 0;
	free(dir);
	return rc;
}

void
prompts_release(struct prompts *p)
{
	buf_release(&p->system);
	buf_release(&p->rejected);
	buf_release(&p->condense);
}
