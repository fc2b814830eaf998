/* memfile.h - hand fuzz data to parsers that take a path: an anonymous in-memory file
 * (memfd) reachable as /proc/self/fd/N, so fuzzing leaves no files behind and needs no
 * writable folder. */
#ifndef NCCLTUNE_FUZZ_MEMFILE_H
#define NCCLTUNE_FUZZ_MEMFILE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* Create the file with `size` bytes of `data`; its path goes to `path`. Returns the
 * descriptor (close it when done), or -1 when the system refuses (then skip the input). */
static inline int memfile_create(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("nccltune-fuzz", MFD_CLOEXEC);
	size_t done = 0;

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
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

#endif
