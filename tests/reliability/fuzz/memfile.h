/* memfile.h - hand fuzz data to parsers that take a path. The journal is opened only as
 * a regular file and never through a symbolic link (fs_open_regular), so a memfd's
 * /proc/self/fd/N link will not do: the data goes into DIR/journal.jsonl of a private
 * folder made once per process (under $TMPDIR, else /tmp) and removed at exit, so
 * fuzzing leaves no files behind. */
#ifndef NCCLTUNE_FUZZ_MEMFILE_H
#define NCCLTUNE_FUZZ_MEMFILE_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char memfile_dir[256];
static char memfile_path[300];

static void memfile_cleanup(void)
{
	if (memfile_path[0])
		unlink(memfile_path);
	if (memfile_dir[0])
		rmdir(memfile_dir);
}

/* Create the file with `size` bytes of `data`; its path goes to `path`. Returns the
 * descriptor (close it when done), or -1 when the system refuses (then skip the input). */
static inline int memfile_create(const uint8_t *data, size_t size, char *path, size_t len)
{
	size_t done = 0;
	int fd;

	if (!memfile_dir[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(memfile_dir, sizeof memfile_dir, "%s/nccltune-fuzz-XXXXXX",
		         tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(memfile_dir)) {
			memfile_dir[0] = '\0';
			return -1;
		}
		snprintf(memfile_path, sizeof memfile_path, "%s/journal.jsonl", memfile_dir);
		atexit(memfile_cleanup);
	}
	fd = open(memfile_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (done < size) {
		ssize_t w = write(fd, data + done, size - done);

		if (w <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)w;
	}
	snprintf(path, len, "%s", memfile_path);
	return fd;
}

#endif
