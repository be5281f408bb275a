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

/* Shared by the verbs: set by SIGINT, SIGTERM and SIGHUP once caught. */
extern volatile int manage_cancelled;
void manage_catch_signals(void);
int manage_print_json(const struct jval *v);
int manage_usage_err(const char *usage);
int manage_mkdir_heartwood(void);

#endif
