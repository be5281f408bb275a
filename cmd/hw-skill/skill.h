/* skill.h - what the parts of hw-skill share */
#ifndef HW_SKILL_CMD_H
#define HW_SKILL_CMD_H

#include "base/base.h"

/* skill_usage_error prints the usage to stderr and returns 2. */
int skill_usage_error(void);
/* skill_tuf_main: hw-skill tuf ..., argv[0] being "tuf". */
int skill_tuf_main(int argc, char **argv);

#endif
