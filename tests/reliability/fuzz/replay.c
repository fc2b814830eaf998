/* replay.c - run fuzz corpora through a target without libFuzzer: every file named on
 * the command line, and every file inside each folder named, is passed once to
 * LLVMFuzzerTestOneInput. A crash, a sanitizer report or a leak fails the test; a
 * missing or empty corpus fails it too (a corpus that silently vanished tests nothing). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"
#include "fuzz.h"

#define REPLAY_MAX_INPUT (4u << 20)

/* Feed one file to the target. Returns 0, or -1 when it cannot be read. */
static int replay_file(const char *path)
{
	char err[512];
	size_t len;
	char *data = fs_read_file(path, REPLAY_MAX_INPUT, &len, err, sizeof err);

	if (!data) {
		fprintf(stderr, "replay: %s\n", err);
		return -1;
	}
	LLVMFuzzerTestOneInput((const uint8_t *)data, len);
	free(data);
	return 0;
}

/* Names in a folder, sorted so runs are reproducible. */
static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Feed every regular file in `dir`. Returns the number fed, or -1 on an error. */
static long replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t n = 0, cap = 0;
	long fed = -1;
	struct dirent *e;

	if (!d) {
		fprintf(stderr, "replay: %s: cannot open: %s\n", dir, strerror(errno));
		return -1;
	}
	for (e = readdir(d); e; e = readdir(d)) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			char **nn = realloc(names, ncap * sizeof *nn);

			if (!nn)
				goto out;
			names = nn;
			cap = ncap;
		}
		names[n] = strdup(e->d_name);
		if (!names[n])
			goto out;
		n++;
	}
	if (n > 0)
		qsort(names, n, sizeof *names, cmp_name);
	fed = 0;
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (replay_file(path) != 0) {
			fed = -1;
			goto out;
		}
		fed++;
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return fed;
}

int main(int argc, char **argv)
{
	long total = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR|FILE...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		long fed;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		fed = S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : (replay_file(argv[i]) == 0 ? 1 : -1);
		if (fed < 0)
			return 1;
		total += fed;
	}
	if (total == 0) {
		fprintf(stderr, "replay: no input files found\n");
		return 1;
	}
	printf("replay: %ld inputs, no crash\n", total);
	return 0;
}
