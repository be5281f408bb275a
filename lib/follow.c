/* follow.c - following a session as it grows (being written) */
#include "hw.h"

int
session_follow(struct session *s, int exists, const struct follow_opts *o,
    FILE *out)
{
	(void)s, (void)exists, (void)o, (void)out;
	return hw_err_set(HW_EXIT_NOTREADY, "follow is not built yet");
}
