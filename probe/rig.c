/* rig.c - several ranks on one GPU (rig.h). */
#include "rig.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"

int rig_device(int rank, int ranks_per_gpu)
{
	return ranks_per_gpu > 1 ? rank / ranks_per_gpu : rank;
}

int rig_check(int ranks_per_gpu, int nccl_version, const char *env_value, char *err,
              size_t errlen)
{
	const char *v = env_value;
	char *end;

	if (ranks_per_gpu <= 1)
		return 0;
	if (nccl_version < RIG_MIN_NCCL_VERSION) {
		int major = nccl_version / 10000, minor = nccl_version / 100 % 100;

		if (nccl_version < 10000) {   /* codes before 2.9: 1000 * major + 100 * minor */
			major = nccl_version / 1000;
			minor = nccl_version / 100 % 10;
		}
		return fs_errf(err, errlen, "--ranks-per-gpu %d: several ranks on one GPU need "
		               "NCCL 2.30 or newer (%s); the NCCL loaded is %d.%d (code %d); name a "
		               "2.30 build with --nccl PATH", ranks_per_gpu, RIG_ENV, major, minor,
		               nccl_version);
	}
	if (v && *v) {
		errno = 0;
		if (strtoll(v, &end, 0) == 0 && errno == 0)
			return fs_errf(err, errlen, "--ranks-per-gpu %d: %s=%.64s turns off what it "
			               "needs (unset it: the probe sets it to 1)", ranks_per_gpu,
			               RIG_ENV, v);
	}
	return 0;
}

int rig_enable(int ranks_per_gpu, struct reporter *rep, char *err, size_t errlen)
{
	const char *v = getenv(RIG_ENV);

	if (ranks_per_gpu <= 1 || (v && *v))
		return 0;
	if (setenv(RIG_ENV, "1", 1) != 0)
		return fs_errf(err, errlen, "setenv %s=1: %s", RIG_ENV, strerror(errno));
	reporter_note_env(rep, RIG_ENV, "1");
	return 0;
}

/* Whether /proc shows a process named nvidia-cuda-mps-control (or -server): 1 yes, 0 no, -1 /proc
 * could not be read (then the pipe alone decides). */
static int mps_daemon_seen(const char *proc)
{
	DIR *d = opendir(proc);
	struct dirent *e;
	int seen = -1;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char path[1300], comm[64] = "";
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "%.1024s/%.255s/comm", proc, e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (seen < 0)
			seen = 0;
		/* comm is the name cut at 15 bytes: nvidia-cuda-mps-control (or -server) */
		if (fgets(comm, sizeof comm, f) && strncmp(comm, "nvidia-cuda-mps", 15) == 0)
			seen = 1;
		fclose(f);
		if (seen == 1)
			break;
	}
	closedir(d);
	return seen;
}

bool rig_mps_seen(const char *dir, const char *proc)
{
	char pipe[4200];
	struct stat st;
	int seen = mps_daemon_seen(proc);

	snprintf(pipe, sizeof pipe, "%s/control", dir);
	/* the daemon's "control" is a named pipe, or a UNIX socket in newer drivers: either
	 * counts unless /proc shows no daemon (a leftover of one that is gone); without it,
	 * a running daemon counts alone (its folder could not be looked into) */
	if (lstat(pipe, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return seen != 0;
	return seen == 1;
}

bool rig_mps_running(char *where, size_t wherelen)
{
	const char *dir = getenv("CUDA_MPS_PIPE_DIRECTORY");

	if (!dir || !*dir)
		dir = "/tmp/nvidia-mps";
	snprintf(where, wherelen, "%s", dir);
	return rig_mps_seen(dir, "/proc");
}

void rig_no_mps_warning(int procs, const char *where, char *buf, size_t len)
{
	snprintf(buf, len, "%d processes share each GPU without the MPS daemon (no control pipe "
	         "or daemon for %.100s): they time-slice the GPU, so every figure includes the "
	         "switching; start nvidia-cuda-mps-control -d or use --launch all", procs, where);
}
