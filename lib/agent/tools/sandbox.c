/*
 * sandbox.c - the confinement of the terminal tool's shell: bubblewrap
 * (mount, PID, network and user namespaces, no capabilities) or Landlock
 * with a seccomp filter on sockets, chosen by HW_SANDBOX, or none at all
 * with the reason kept for the notice.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "agent/tools/tools.h"

/* Landlock's interface, spelled out: the build headers may predate ABI 6 */
#define LL_CREATE_VERSION	1U
#define LL_RULE_PATH		1
#define LL_EXECUTE		(1ULL << 0)
#define LL_WRITE_FILE		(1ULL << 1)
#define LL_READ_FILE		(1ULL << 2)
#define LL_READ_DIR		(1ULL << 3)
#define LL_TRUNCATE		(1ULL << 14)
#define LL_NET_BIND_TCP		(1ULL << 0)
#define LL_NET_CONNECT_TCP	(1ULL << 1)
#define LL_SCOPE_ABSTRACT	(1ULL << 0)
#define LL_SCOPE_SIGNAL		(1ULL << 1)

struct ll_ruleset_attr {
	uint64_t fs, net, scoped;
};

struct ll_path_beneath {
	uint64_t allowed;
	int32_t parent_fd;
} __attribute__((packed));

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

static const char *const kind_names[] = { "none", "landlock", "bwrap" };

const char *
sandbox_name(enum sandbox_kind k)
{
	return kind_names[k];
}

static void __attribute__((format(printf, 2, 3)))
why(struct sandbox *sb, const char *fmt, ...)
{
	va_list ap;

	sb->kind = SANDBOX_NONE;
	va_start(ap, fmt);
	vsnprintf(sb->why, sizeof sb->why, fmt, ap);
	va_end(ap);
}

/* ---- Landlock ---- */

static int
ll_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LL_CREATE_VERSION);

	return v < 0 ? 0 : (int)v;
}

/* ll_fs_all: every filesystem right the kernel's ABI knows */
static uint64_t
ll_fs_all(int abi)
{
	uint64_t all = (1ULL << 13) - 1;

	if (abi >= 2)
		all |= 1ULL << 13;	/* refer */
	if (abi >= 3)
		all |= LL_TRUNCATE;
	if (abi >= 5)
		all |= 1ULL << 15;	/* ioctl on devices */
	return all;
}

static int
ll_allow(int ruleset, const char *path, uint64_t rights, int nofollow)
{
	struct ll_path_beneath pb;
	int rc;

	pb.parent_fd = open(path, O_PATH | O_CLOEXEC |
	    (nofollow ? O_NOFOLLOW : 0));
	if (pb.parent_fd < 0)
		return -1;
	pb.allowed = rights;
	rc = (int)syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH, &pb,
	    0);
	close(pb.parent_fd);
	return rc;
}

/* kept_out: a top-level name the tools may read but never write */
static int
kept_out(const char *name)
{
	return !strcmp(name, ".") || !strcmp(name, "..") ||
	    !strcasecmp(name, ".git") || !strcasecmp(name, ".heartwood");
}

/*
 * ll_project grants every right beneath each top-level entry of the
 * project except .git and .heartwood.  Landlock cannot take a right away
 * below a directory that has it, so the root itself stays read-only:
 * names directly in it can be written but not made or removed.
 */
static int
ll_project(int ruleset, const char *root, uint64_t all)
{
	struct dirent *d;
	struct stat st;
	char *p;
	DIR *dir;
	int rc = 0;

	if (!(dir = opendir(root)))
		return -1;
	while (rc == 0 && (d = readdir(dir))) {
		if (kept_out(d->d_name))
			continue;
		p = xasprintf("%s/%s", root, d->d_name);
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			rc = ll_allow(ruleset, p, all, 1);
		else if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
			rc = ll_allow(ruleset, p, all & (LL_EXECUTE |
			    LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE), 1);
		free(p);
	}
	closedir(dir);
	return rc;
}

static int
ll_prepare(struct sandbox *sb)
{
	static const char *const devs[] = { "/dev/null", "/dev/zero",
		"/dev/full", NULL };
	struct ll_ruleset_attr attr = { 0 };
	const char *const *d;
	uint64_t all;
	size_t size = sizeof attr.fs;
	int fd;

	all = ll_fs_all(sb->abi);
	attr.fs = all;
	if (sb->abi >= 4 && !sb->net) {
		attr.net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		size = offsetof(struct ll_ruleset_attr, scoped);
	}
	if (sb->abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT | LL_SCOPE_SIGNAL;
		size = sizeof attr;
	}
	if (sb->abi >= 4 && size == sizeof attr.fs)
		size = offsetof(struct ll_ruleset_attr, scoped);
	fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (fd < 0)
		return -1;
	if (ll_allow(fd, "/", LL_EXECUTE | LL_READ_FILE | LL_READ_DIR, 0) <
	    0 || ll_project(fd, sb->root, all) < 0 ||
	    ll_allow(fd, sb->scratch, all, 1) < 0) {
		close(fd);
		return -1;
	}
	for (d = devs; *d; d++)
		ll_allow(fd, *d, all & (LL_WRITE_FILE | LL_READ_FILE |
		    LL_TRUNCATE), 0);
	sb->ruleset = fd;
	return 0;
}

static int
landlock_setup(struct sandbox *sb)
{
	char tmpl[] = "/tmp/hw-tool-XXXXXX";

	if ((sb->abi = ll_abi()) < 1) {
		why(sb, "%s", "Landlock is not enabled in this kernel");
		return -1;
	}
	if (!mkdtemp(tmpl)) {
		why(sb, "cannot make a scratch directory: %s",
		    strerror(errno));
		return -1;
	}
	sb->scratch = xstrdup(tmpl);
	if (ll_prepare(sb) < 0) {
		why(sb, "Landlock refused the rules: %s", strerror(errno));
		return -1;
	}
	sb->kind = SANDBOX_LANDLOCK;
	return 0;
}

/*
 * The seccomp filter: sockets of other families than those the policy
 * allows (none at all when the network is off: the agent's control
 * socket is a Unix socket), io_uring (which opens sockets unseen), and
 * system calls of other architectures fail with EACCES.
 */
#define LD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define DENY (SECCOMP_RET_ERRNO | EACCES)

static int
seccomp_sockets(int net)
{
	struct sock_filter f[] = {
		LD(offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		RET(DENY),
		LD(offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
		RET(DENY),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_setup, 0, 1),
		RET(DENY),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 1, 0),
		RET(SECCOMP_RET_ALLOW),
		LD(offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 0, 1),
		RET(net ? SECCOMP_RET_ALLOW : DENY),
		RET(DENY),
	};
	struct sock_fprog prog = { sizeof f / sizeof f[0], f };

	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/* ---- bubblewrap ---- */

static char *
find_program(const char *name)
{
	static const char *const dirs[] = { "/usr/bin", "/bin",
		"/usr/local/bin", NULL };
	const char *const *d;
	char *p;

	for (d = dirs; *d; d++) {
		p = xasprintf("%s/%s", *d, name);
		if (access(p, X_OK) == 0)
			return p;
		free(p);
	}
	return NULL;
}

static void
push(struct sandbox *sb, size_t *n, const char *s)
{
	sb->argv = xrealloc(sb->argv, (*n + 2) * sizeof *sb->argv);
	sb->argv[(*n)++] = xstrdup(s);
	sb->argv[*n] = NULL;
}

/* a name in the project that exists (without following a last link) */
static char *
beneath(const char *root, const char *name)
{
	struct stat st;
	char *p = xasprintf("%s/%s", root, name);

	if (lstat(p, &st) == 0 && !S_ISLNK(st.st_mode))
		return p;
	free(p);
	return NULL;
}

static void
bwrap_args(struct sandbox *sb, const char *bwrap)
{
	static const char *const head[] = { "--die-with-parent",
		"--unshare-all", "--cap-drop", "ALL", "--ro-bind", "/", "/",
		"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", NULL };
	const char *const *h;
	char *git, *hw;
	size_t n = 0;

	push(sb, &n, bwrap);
	for (h = head; *h; h++)
		push(sb, &n, *h);
	if (sb->net)
		push(sb, &n, "--share-net");
	push(sb, &n, "--bind");
	push(sb, &n, sb->root);
	push(sb, &n, sb->root);
	if ((git = beneath(sb->root, ".git"))) {
		push(sb, &n, "--ro-bind");
		push(sb, &n, git);
		push(sb, &n, git);
		free(git);
	}
	if ((hw = beneath(sb->root, ".heartwood"))) {
		push(sb, &n, "--tmpfs");
		push(sb, &n, hw);
		push(sb, &n, "--remount-ro");
		push(sb, &n, hw);
		free(hw);
	}
	push(sb, &n, "--chdir");
	push(sb, &n, sb->root);
	push(sb, &n, "--");
	sb->nargv = n;
}

/* bwrap_works: the sandbox starts here (user namespaces, mounts) */
static int
bwrap_works(struct sandbox *sb)
{
	char *const env[] = { NULL }, *args[] = { "/bin/true", NULL };
	char **v = sandbox_argv(sb, "/bin/true", args), **p;
	pid_t pid;
	int st, fd;

	if ((pid = fork()) == 0) {
		if ((fd = open("/dev/null", O_RDWR)) >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execve(v[0], v, env);
		_exit(127);
	}
	for (p = v; *p; p++)
		free(*p);
	free(v);
	if (pid < 0)
		return 0;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int
bwrap_setup(struct sandbox *sb)
{
	char *bwrap = find_program("bwrap");

	if (!bwrap) {
		why(sb, "%s", "bubblewrap (bwrap) is not installed");
		return -1;
	}
	bwrap_args(sb, bwrap);
	free(bwrap);
	sb->kind = SANDBOX_BWRAP;
	if (!bwrap_works(sb)) {
		why(sb, "%s", "bubblewrap cannot make its namespaces here");
		return -1;
	}
	sb->kind = SANDBOX_BWRAP;
	return 0;
}

/* ---- the interface ---- */

static void
clear_backend(struct sandbox *sb)
{
	size_t i;

	for (i = 0; sb->argv && sb->argv[i]; i++)
		free(sb->argv[i]);
	free(sb->argv);
	sb->argv = NULL;
	sb->nargv = 0;
	if (sb->ruleset >= 0)
		close(sb->ruleset);
	sb->ruleset = -1;
}

void
sandbox_init(struct sandbox *sb, const char *root, int net)
{
	const char *want = getenv("HW_SANDBOX");
	char first[sizeof sb->why];

	memset(sb, 0, sizeof *sb);
	sb->ruleset = -1;
	sb->root = xstrdup(root);
	sb->net = net;
	if (!want || !*want)
		want = "auto";
	if (!strcmp(want, "none")) {
		why(sb, "%s", "HW_SANDBOX=none");
		return;
	}
	if (strcmp(want, "auto") && strcmp(want, "bwrap") &&
	    strcmp(want, "landlock")) {
		why(sb, "unknown HW_SANDBOX '%.60s'", want);
		return;
	}
	if (strcmp(want, "landlock") && bwrap_setup(sb) == 0)
		return;
	clear_backend(sb);
	snprintf(first, sizeof first, "%s", sb->why);
	if (strcmp(want, "bwrap") && landlock_setup(sb) == 0)
		return;
	clear_backend(sb);
	if (!strcmp(want, "auto"))
		snprintf(sb->why + strlen(sb->why), sizeof sb->why -
		    strlen(sb->why), "; %.100s", first);
}

static int
rm_entry(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)type;
	(void)f;
	remove(path);
	return 0;
}

void
sandbox_release(struct sandbox *sb)
{
	clear_backend(sb);
	if (sb->scratch)
		nftw(sb->scratch, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(sb->scratch);
	free(sb->root);
	memset(sb, 0, sizeof *sb);
	sb->ruleset = -1;
}

char **
sandbox_argv(const struct sandbox *sb, const char *path, char *const argv[])
{
	size_t n = 0, k = 0, i;
	char **v;

	while (argv[n])
		n++;
	v = xcalloc(sb->nargv + n + 2, sizeof *v);
	for (i = 0; sb->kind == SANDBOX_BWRAP && i < sb->nargv; i++)
		v[k++] = xstrdup(sb->argv[i]);
	v[k++] = xstrdup(sb->kind == SANDBOX_BWRAP ? path : argv[0]);
	for (i = 1; i < n; i++)
		v[k++] = xstrdup(argv[i]);
	v[k] = NULL;
	return v;
}

const char *
sandbox_exe(const struct sandbox *sb, const char *path)
{
	return sb->kind == SANDBOX_BWRAP ? sb->argv[0] : path;
}

const char *
sandbox_tmpdir(const struct sandbox *sb)
{
	return sb->kind == SANDBOX_BWRAP ? "/tmp" : sb->scratch;
}

int
sandbox_prepare(struct sandbox *sb)
{
	char *bwrap;

	if (sb->kind == SANDBOX_NONE)
		return 0;
	if (sb->kind == SANDBOX_BWRAP) {
		bwrap = xstrdup(sb->argv[0]);
		clear_backend(sb);
		bwrap_args(sb, bwrap);
		free(bwrap);
		return 0;
	}
	clear_backend(sb);
	if (ll_prepare(sb) < 0)
		return hw_err_sys("cannot confine the terminal (Landlock)");
	return 0;
}

/*
 * drop_caps empties the bounding, ambient and own capability sets, so
 * that root inside cannot pass over a non-dumpable agent's /proc files
 * (CAP_SYS_PTRACE) or anything else; a user without CAP_SETPCAP has
 * nothing in them to drop.
 */
static int
drop_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int c;

	for (c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL &&
		    errno != EPERM)
			return -1;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	memset(d, 0, sizeof d);
	return (int)syscall(SYS_capset, &h, d);
}

int
sandbox_enter(const struct sandbox *sb)
{
	if (sb->kind != SANDBOX_LANDLOCK)
		return 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    seccomp_sockets(sb->net) < 0 ||
	    syscall(SYS_landlock_restrict_self, sb->ruleset, 0) < 0)
		return -1;
	return drop_caps();
}
