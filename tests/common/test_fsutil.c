/* test_fsutil.c - whole-file reads (regular files only, never through a link), atomic
 * writes and creations, the folder lock and mkdir -p. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "fsutil.h"

int main(void)
{
	char dir[] = "/tmp/nccltune-fsutil-XXXXXX", path[256], sub[256], err[512];
	char link[256], target[256];
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
	/* a creation never replaces: not a file, not a dangling symbolic link */
	snprintf(sub, sizeof sub, "%s/new.txt", dir);
	CHECK_INT(fs_create_atomic(sub, "abc", 3, 0644, err, sizeof err), 0);
	data = fs_read_file(sub, 100, &len, err, sizeof err);
	CHECK_STR(data, "abc");
	free(data);
	CHECK_INT(fs_create_atomic(sub, "xyz", 3, 0644, err, sizeof err), -1);
	CHECK_CONTAINS(err, "already exists");
	snprintf(link, sizeof link, "%s/dangling", dir);
	snprintf(target, sizeof target, "%s/through-the-link", dir);
	CHECK_INT(symlink(target, link), 0);
	CHECK_INT(fs_create_atomic(link, "xyz", 3, 0644, err, sizeof err), -1);
	CHECK(access(target, F_OK) != 0);
	/* regular files only, never through a link, refused at once */
	data = fs_read_regular(sub, 100, &len, err, sizeof err);
	CHECK_STR(data, "abc");
	free(data);
	CHECK(fs_read_regular(link, 100, &len, err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "symbolic link");
	CHECK_INT(fs_open_regular(dir, O_RDONLY, 100, err, sizeof err), -1);
	CHECK_CONTAINS(err, "not a regular file");
	CHECK_INT(fs_open_regular(sub, O_RDONLY, 2, err, sizeof err), -1);
	CHECK_CONTAINS(err, "larger than 2 bytes");
	/* the folder's lock: taken once, a second taker is refused naming the holder's pid;
	 * closing releases it */
	{
		int fd1 = -1, fd2 = -1;
		char pid[32];

		CHECK_INT(fs_lock_dir(dir, &fd1, err, sizeof err), 0);
		CHECK(fd1 >= 0);
		CHECK_INT(fs_lock_dir(dir, &fd2, err, sizeof err), -2);
		snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
		CHECK_CONTAINS(err, pid);
		CHECK_INT(fd2, -1);
		close(fd1);
		CHECK_INT(fs_lock_dir(dir, &fd2, err, sizeof err), 0);
		close(fd2);
	}
	snprintf(sub, sizeof sub, "rm -rf '%s'", dir);
	CHECK(system(sub) == 0);
	return check_status();
}
