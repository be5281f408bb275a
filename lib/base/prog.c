/* prog.c - what every program does on the way out */
#include <errno.h>
#include <string.h>

#include "base/base.h"

int
prog_finish(const char *prog, int code)
{
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
		fprintf(stderr, "%s: cannot write 'stdout': %s\n", prog,
		    strerror(errno ? errno : EIO));
		return code ? code : HW_EXIT_IO;
	}
	return code;
}

int
prog_fail(const char *prog)
{
	hw_err_print(prog);
	return hw_err_code();
}
