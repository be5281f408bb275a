/* dispatch.c - typed session commands (being written) */
#include "hw.h"

int
session_command(struct session *s, FILE *in, FILE *out, int *declined)
{
	(void)s, (void)in, (void)out, (void)declined;
	return hw_err_set(HW_EXIT_NOTREADY, "command is not built yet");
}
