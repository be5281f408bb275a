/*
 * catalog.h - hw-model's catalog verbs: connections and discover
 * (connections.c), catalog and recommend (catalog.c)
 */
#ifndef HW_MODEL_CATALOG_H
#define HW_MODEL_CATALOG_H

/* Each parses its own options (argv[0] is the verb) and returns the exit
 * status. */
int verb_connections(int argc, char **argv);
int verb_discover(int argc, char **argv);
int verb_catalog(int argc, char **argv);
int verb_recommend(int argc, char **argv);
int verb_subscription(int argc, char **argv);	/* subscription.c */
/* mkdir_private: path made 0700 when missing; a link or another's refused */
int mkdir_private(const char *path);

#endif
