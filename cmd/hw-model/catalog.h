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
/*
 * catalog_open loads the managed catalog (catalog_load) from f's files,
 * each defaulting to the data directory's models/model-catalog.toml and
 * models/snapshots.toml (the paths it makes go to f->own, for free()).
 */
struct arena;
struct catalog_files {
	const char *catalog, *snapshots;
	char *own[2];
};
struct jval *catalog_open(struct catalog_files *f, struct arena *a);
/* mkdir_private: path made 0700 when missing; a link or another's refused */
int mkdir_private(const char *path);

#endif
