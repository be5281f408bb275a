/* skill.h - what the parts of hw-skill share */
#ifndef HW_SKILL_CMD_H
#define HW_SKILL_CMD_H

#include "base/base.h"

/* skill_usage_error prints the usage to stderr and returns 2. */
int skill_usage_error(void);
/* skill_tuf_main: hw-skill tuf ..., argv[0] being "tuf". */
int skill_tuf_main(int argc, char **argv);

/* the skill verbs (local.c); each returns the exit status */
/* mode: 0 the inspection, 1 the digest, 2 validation alone */
int skill_validate_main(const char *dir, int digest_only);
int skill_install_main(const char *path, const char *expected);
int skill_remove_main(const char *name);
int skill_list_main(void);
int skill_sources_main(void);
int skill_refresh_main(const char *source);
int skill_inspect_main(const char *name, const char *source);
int skill_catalog_main(const char *name, const char *expected,
    const char *source);

#endif
