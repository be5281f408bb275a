/* actions.c - the project's action review mode, changed only when safe */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "session/session.h"

/* session_busy: -1 with the reason if id runs or waits for a decision */
static int
session_busy(struct project *p, const char *id)
{
	struct session s;
	struct proj *pj = NULL;
	const char *const *ids;
	size_t n;
	int fd, rc = -1;

	if (session_init(&s, p, id) < 0)
		return -1;
	if ((fd = lock_open(s.writer_lock, 1)) < 0) {
		if (hw_err_code() == HW_EXIT_BUSY)
			hw_err_set(HW_EXIT_BUSY, "a run is active in session "
			    "'%s'", id);
		goto out;
	}
	lock_close(fd);
	if (session_reduce(&s, &pj) < 0)
		goto out;
	if (proj_pending(pj, &ids, &n)) {
		hw_err_set(HW_EXIT_FAIL, "session '%s' has an action set "
		    "waiting for review", id);
		goto out;
	}
	rc = 0;
out:
	proj_free(pj);
	session_release(&s);
	return rc;
}

int
actions_set_mode(const char *mode)
{
	struct project p = { 0 };
	struct dirent **names;
	int n, i, rc = 0;

	if (project_open(&p, 1) < 0) {
		project_release(&p);
		return -1;
	}
	if ((n = scandir(p.sessions, &names, NULL, alphasort)) < 0) {
		project_release(&p);
		return hw_err_sys("cannot list '.heartwood/sessions'");
	}
	for (i = 0; i < n; i++) {
		if (rc == 0 && valid_session_id(names[i]->d_name) &&
		    session_busy(&p, names[i]->d_name) < 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	/* this user's choice, here: recorded outside the project first */
	if (rc == 0 && (rc = trust_confirm("confirmation_mode", mode)) == 0)
		rc = config_set_mode(mode);
	project_release(&p);
	return rc;
}
