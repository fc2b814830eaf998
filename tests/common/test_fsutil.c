/* test_fsutil.c - whole-file reads, atomic writes and mkdir -p. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "fsutil.h"

int main(void)
{
	char dir[] = "/tmp/nccltune-fsutil-XXXXXX", path[256], sub[256], err[512];
	char *data;
	size_t len;
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/a.txt", dir);
	CHECK_INT(fs_write_atomic(path, "hello", 5, 0600, err, sizeof err), 0);
	data = fs_read_file(path, 100, &len, err, sizeof err);
	CHECK_STR(data, "hello");
	CHECK_INT(len, 5);
	free(data);
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0600);
	/* replacing keeps exactly one file, no temporary left behind */
	CHECK_INT(fs_write_atomic(path, "bye", 3, 0644, err, sizeof err), 0);
	data = fs_read_file(path, 100, &len, err, sizeof err);
	CHECK_STR(data, "bye");
	free(data);
	CHECK(fs_read_file(path, 2, &len, err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "larger than 2 bytes");
	snprintf(sub, sizeof sub, "%s/missing.txt", dir);
	CHECK(fs_read_file(sub, 100, &len, err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "missing.txt: cannot open");
	/* a write into a folder that does not exist fails and names the path */
	snprintf(sub, sizeof sub, "%s/no/such/x", dir);
	CHECK_INT(fs_write_atomic(sub, "x", 1, 0644, err, sizeof err), -1);
	CHECK_CONTAINS(err, "no/such/x");
	snprintf(sub, sizeof sub, "%s/p/q/r/", dir);
	CHECK_INT(fs_mkdirs(sub, err, sizeof err), 0);
	CHECK_INT(fs_mkdirs(sub, err, sizeof err), 0);
	CHECK_INT(fs_mkdirs(path, err, sizeof err), -1);
	CHECK_CONTAINS(err, "not a folder");
	snprintf(sub, sizeof sub, "rm -rf '%s'", dir);
	CHECK(system(sub) == 0);
	return check_status();
}
