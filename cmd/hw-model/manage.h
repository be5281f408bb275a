/* manage.h - hw-model's managed-model verbs (manage.c) */
#ifndef HW_MODEL_MANAGE_H
#define HW_MODEL_MANAGE_H

#include "base/base.h"

/* Each parses its own options (argv[0] is the verb) and returns the exit
 * status. */
int manage_inspect(int argc, char **argv);
int manage_download(int argc, char **argv);
int manage_import(int argc, char **argv);
int manage_bundle(int argc, char **argv);
int manage_plan(int argc, char **argv);		/* local.c */
int manage_select(int argc, char **argv);
int manage_run(int argc, char **argv);		/* run.c */

/*
 * local_selection: *id, or the selected model of .heartwood/config.toml
 * when *id is NULL (64 when none); *port (when port is not NULL) the
 * selection's port, LAUNCH_PORT by default.  local_plan: the resource
 * plan of mi on this machine (RAM, and GPUs for vLLM).
 */
struct arena;
struct model_info;
struct gpu_inv;
struct resource_plan;
int local_selection(struct arena *a, const char **id, int64_t *port);
int local_plan(const struct model_info *mi, struct gpu_inv *inv,
    int64_t *ram, struct resource_plan *p, struct arena *a);

/*
 * Progress on stderr (--progress auto|bar|json|none): a bar on a
 * terminal, or JSON lines {"event": "progress"|"verified", "path",
 * "bytes", "total"}, at most four a second but each file's last.
 * manage_on_progress is a model_progress_fn over a struct progress.
 */
enum { PROGRESS_NONE, PROGRESS_BAR, PROGRESS_JSON };
struct progress {
	int mode;
	double last;
};
int manage_progress_parse(const char *s, int *mode);
void manage_on_progress(void *arg, const char *path, int64_t have,
    int64_t total, int done);

/* Shared by the verbs: set by SIGINT, SIGTERM and SIGHUP once caught. */
extern volatile int manage_cancelled;
void manage_catch_signals(void);
int manage_print_json(const struct jval *v);
int manage_usage_err(const char *usage);
int manage_mkdir_heartwood(void);

#endif
