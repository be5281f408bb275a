/*
 * runstat - run a command with its standard output on /dev/null and print
 * "SECONDS MAXRSS_KIB" for it on our standard output.
 *
 * usage: runstat PROG [ARG...]
 *
 * bench/replay uses it instead of timing children from Python: Linux keeps
 * a process's peak RSS across fork and exec, so any child of the Python
 * interpreter reports at least the interpreter's own peak (about 16 MiB)
 * however little it uses.  This program is small, so what it reports is
 * the command's.  The exit status is the command's, or 128 + its signal.
 */
#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	struct rusage ru;
	double t0;
	pid_t pid;
	int status, null;

	if (argc < 2) {
		fputs("usage: runstat PROG [ARG...]\n", stderr);
		return 2;
	}
	if ((null = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
		err(1, "cannot open '/dev/null'");
	t0 = now();
	if ((pid = fork()) < 0)
		err(1, "fork");
	if (pid == 0) {
		if (dup2(null, STDOUT_FILENO) < 0)
			err(127, "dup2");
		execvp(argv[1], argv + 1);
		err(127, "cannot run '%s'", argv[1]);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		err(1, "wait4");
	printf("%.6f %ld\n", now() - t0, ru.ru_maxrss);
	if (fclose(stdout) != 0)
		err(1, "cannot write 'stdout'");
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
