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

/*
 * low_risk_route_ok: Low-Risk Automation runs actions unreviewed, so the
 * model route must not share a key with them: credential-free or
 * platform-isolated; without a route there is nothing to judge yet (the
 * agent and hw doctor judge it when one is chosen)
 */
static int
low_risk_route_ok(void)
{
	struct model_route r;
	const char *iso;
	int ok;

	if (model_route_from_env(&r) < 0)
		return 0;
	iso = route_isolation(&r);
	ok = route_unattended_ok(&r);
	model_route_release(&r);
	if (ok)
		return 0;
	return hw_err_set(HW_EXIT_FAIL, "refusing Low-Risk Automation: the "
	    "model route's credential isolation is %s (its key is read by "
	    "the same user that runs the actions), and Low-Risk Automation "
	    "needs a credential-free (keyless loopback) or platform-isolated "
	    "route; choose one with 'hw setup', or keep Review Every Action",
	    iso);
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
	if (rc == 0 && !strcmp(mode, "confirm-risky"))
		rc = low_risk_route_ok();
	/* this user's choice, here: recorded outside the project first */
	if (rc == 0 && (rc = trust_confirm("confirmation_mode", mode)) == 0)
		rc = config_set_mode(mode);
	project_release(&p);
	return rc;
}
