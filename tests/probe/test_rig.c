/* test_rig.c - several ranks on one GPU (probe/rig.c): which GPU a rank uses, the NCCL
 * version and NCCL_MULTI_RANK_GPU_ENABLE checks, the variable the probe sets (and
 * reports), and how the MPS daemon is recognised (its control pipe and a process). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"
#include "rig.h"

static void test_device(void)
{
	CHECK_INT(rig_device(0, 1), 0);
	CHECK_INT(rig_device(3, 1), 3);
	CHECK_INT(rig_device(0, 2), 0);
	CHECK_INT(rig_device(1, 2), 0);
	CHECK_INT(rig_device(2, 2), 1);
	CHECK_INT(rig_device(5, 3), 1);
}

static void test_check(void)
{
	char err[512] = "";

	CHECK_INT(rig_check(1, 0, NULL, err, sizeof err), 0);          /* one rank: anything */
	CHECK_INT(rig_check(1, 22809, "0", err, sizeof err), 0);
	CHECK_INT(rig_check(2, 22809, NULL, err, sizeof err), -1);
	CHECK_CONTAINS(err, "--ranks-per-gpu 2");
	CHECK_CONTAINS(err, "NCCL 2.30");
	CHECK_CONTAINS(err, "2.28");
	CHECK_CONTAINS(err, "--nccl");
	CHECK_INT(rig_check(2, 2903, NULL, err, sizeof err), -1);     /* old code scheme: 2.9 */
	CHECK_CONTAINS(err, "is 2.9 ");
	CHECK_INT(rig_check(2, 23000, NULL, err, sizeof err), 0);
	CHECK_INT(rig_check(2, 23007, "1", err, sizeof err), 0);
	CHECK_INT(rig_check(2, 23007, "0", err, sizeof err), -1);
	CHECK_CONTAINS(err, "NCCL_MULTI_RANK_GPU_ENABLE=0");
	CHECK_INT(rig_check(4, 23007, "0x0", err, sizeof err), -1);   /* as NCCL reads it */
	CHECK_INT(rig_check(2, 23007, "", err, sizeof err), 0);       /* empty: NCCL's default */
}

static void test_enable(void)
{
	struct reporter rep;
	char err[256];

	memset(&rep, 0, sizeof rep);
	unsetenv(RIG_ENV);
	CHECK_INT(rig_enable(1, &rep, err, sizeof err), 0);
	CHECK(getenv(RIG_ENV) == NULL);                  /* one rank per GPU: untouched */
	CHECK_INT(rep.nprobe_env, 0);
	CHECK_INT(rig_enable(2, &rep, err, sizeof err), 0);
	CHECK_STR(getenv(RIG_ENV), "1");
	CHECK_INT(rep.nprobe_env, 1);
	CHECK_STR(rep.probe_env[0], "NCCL_MULTI_RANK_GPU_ENABLE=1");
	/* the user's own value (rig_check accepted it) stays, and is not the probe's */
	memset(&rep, 0, sizeof rep);
	setenv(RIG_ENV, "2", 1);
	CHECK_INT(rig_enable(2, &rep, err, sizeof err), 0);
	CHECK_STR(getenv(RIG_ENV), "2");
	CHECK_INT(rep.nprobe_env, 0);
	unsetenv(RIG_ENV);
}

/* A UNIX socket bound at path (what newer MPS daemons make "control"): its fd, or -1. */
static int make_socket(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0 || strlen(path) >= sizeof a.sun_path)
		return -1;
	memcpy(a.sun_path, path, strlen(path) + 1);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		close(fd);
		return -1;
	}
	close(fd);   /* the bound name stays in the folder */
	return 0;
}

/* A process whose name (comm) is nvidia-cuda-mps-control: a copy of sleep. */
static pid_t fake_daemon(const char *dir)
{
	char path[512];
	pid_t pid;

	snprintf(path, sizeof path, "cp /bin/sleep %s/nvidia-cuda-mps-control", dir);
	if (system(path) != 0)
		return -1;
	snprintf(path, sizeof path, "%s/nvidia-cuda-mps-control", dir);
	pid = fork();
	if (pid == 0) {
		execl(path, path, "30", (char *)NULL);
		_exit(127);
	}
	usleep(200 * 1000);
	return pid;
}

static void test_mps(void)
{
	char dir[] = "/tmp/nccltune-test-rig-XXXXXX", pipe[600], where[256], warn[512];
	pid_t pid;
	bool real;

	CHECK(mkdtemp(dir) != NULL);
	setenv("CUDA_MPS_PIPE_DIRECTORY", dir, 1);
	CHECK(!rig_mps_running(where, sizeof where));           /* no control pipe */
	CHECK_STR(where, dir);
	snprintf(pipe, sizeof pipe, "%s/control", dir);
	CHECK_INT(mkdir(pipe, 0700), 0);                         /* not a FIFO */
	CHECK(!rig_mps_running(where, sizeof where));
	rmdir(pipe);
	CHECK_INT(mkfifo(pipe, 0600), 0);
	/* a pipe left behind by a daemon that is gone: not running (where /proc is read);
	 * a machine that runs a real MPS daemon cannot show that */
	real = rig_mps_running(where, sizeof where);
	if (real)
		fprintf(stderr, "test_rig: an MPS daemon runs here: the 'gone' cases are skipped\n");
	pid = fake_daemon(dir);
	CHECK(pid > 0);
	CHECK(rig_mps_running(where, sizeof where));
	/* newer drivers make "control" a UNIX socket (the rig's daemon did): it counts too */
	CHECK_INT(unlink(pipe), 0);
	CHECK(make_socket(pipe) >= 0);
	CHECK(rig_mps_running(where, sizeof where));
	/* a daemon that runs counts even where its folder shows no control entry */
	CHECK_INT(unlink(pipe), 0);
	CHECK(rig_mps_running(where, sizeof where));
	CHECK(make_socket(pipe) >= 0);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	CHECK(real || !rig_mps_running(where, sizeof where));   /* a socket left behind */
	unsetenv("CUDA_MPS_PIPE_DIRECTORY");
	rig_mps_running(where, sizeof where);
	CHECK_STR(where, "/tmp/nvidia-mps");                     /* MPS's default folder */
	rig_no_mps_warning(2, dir, warn, sizeof warn);
	CHECK_CONTAINS(warn, "2 processes share each GPU without the MPS daemon");
	CHECK_CONTAINS(warn, "--launch all");
	snprintf(pipe, sizeof pipe, "rm -rf %s", dir);
	CHECK_INT(system(pipe), 0);
}

/* rig_mps_seen with a fake /proc: the socket entry alone decides where /proc can't be
 * read; a fake process named nvidia-cuda-mps decides where the entry is missing. */
static void test_mps_fake_proc(void)
{
	char dir[] = "/tmp/nccltune-test-rig-XXXXXX", path[600], noproc[600];
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(noproc, sizeof noproc, "%s/no-proc", dir);
	snprintf(path, sizeof path, "%s/control", dir);
	CHECK(!rig_mps_seen(dir, noproc));                  /* nothing at all */
	CHECK(make_socket(path) >= 0);
	CHECK(rig_mps_seen(dir, noproc));                   /* a socket, /proc unreadable */
	CHECK_INT(unlink(path), 0);
	CHECK_INT(mkfifo(path, 0600), 0);
	CHECK(rig_mps_seen(dir, noproc));                   /* a FIFO, /proc unreadable */
	CHECK_INT(unlink(path), 0);
	CHECK_INT(mkdir(path, 0700), 0);
	CHECK(!rig_mps_seen(dir, noproc));                  /* a folder is no control entry */
	CHECK_INT(rmdir(path), 0);
	/* a fake /proc: a process named nvidia-cuda-mps (comm cut at 15 bytes) */
	snprintf(path, sizeof path, "%s/proc", dir);
	CHECK_INT(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/proc/4242", dir);
	CHECK_INT(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/proc/4242/comm", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("bash\n", f);
		fclose(f);
	}
	snprintf(path, sizeof path, "%s/proc", dir);
	CHECK(!rig_mps_seen(dir, path));                    /* no entry, no daemon */
	snprintf(path, sizeof path, "%s/proc/4242/comm", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("nvidia-cuda-mps\n", f);
		fclose(f);
	}
	snprintf(path, sizeof path, "%s/proc", dir);
	CHECK(rig_mps_seen(dir, path));                     /* no entry, a daemon */
	snprintf(path, sizeof path, "rm -rf %s", dir);
	CHECK_INT(system(path), 0);
}

int main(void)
{
	test_device();
	test_check();
	test_enable();
	test_mps();
	test_mps_fake_proc();
	return check_status();
}
