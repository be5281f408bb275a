/*
 * jsonl_fuzz - the bounded JSON Lines reader: any bytes, read line by
 * line through a file descriptor, each line parsed as a record.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "base/base.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	struct jsonl r;
	struct arena a;
	char *line;
	size_t len;
	int fd = memfd_create("jsonl", MFD_CLOEXEC);

	if (fd < 0 || write(fd, data, n) != (ssize_t)n ||
	    lseek(fd, 0, SEEK_SET) < 0) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	arena_init(&a);
	jsonl_init(&r, fd, "fuzz", 4096);
	while (jsonl_next(&r, &line, &len) == 1) {
		arena_clear(&a);
		jsonl_parse(&r, &a, line, len);
	}
	jsonl_release(&r);
	arena_release(&a);
	close(fd);
	return 0;
}
