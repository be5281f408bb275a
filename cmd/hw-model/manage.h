/* manage.h - hw-model's managed-model verbs (manage.c) */
#ifndef HW_MODEL_MANAGE_H
#define HW_MODEL_MANAGE_H

/* Each parses its own options (argv[0] is the verb) and returns the exit
 * status. */
int manage_inspect(int argc, char **argv);
int manage_download(int argc, char **argv);
int manage_import(int argc, char **argv);

#endif
