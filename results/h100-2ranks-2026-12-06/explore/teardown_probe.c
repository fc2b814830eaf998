/* exploratory: teardown of two ranks on one GPU in one process (NCCL 2.30 multi-rank),
 * non-blocking communicators; finalize ungrouped or grouped, poll, abort on deadline. */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
#define NK(x) do { ncclResult_t r = (x); if (r != ncclSuccess && r != ncclInProgress) { printf("NCCL %s: %s\n", #x, ncclGetErrorString(r)); exit(1);} } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int wait_all(ncclComm_t *c, int n, double limit) {
	double t0 = now();
	for (;;) {
		int pend = 0;
		for (int i = 0; i < n; i++) { ncclResult_t st; ncclCommGetAsyncError(c[i], &st); if (st == ncclInProgress) pend++; else if (st != ncclSuccess) { printf("async error %s\n", ncclGetErrorString(st)); return -2; } }
		if (!pend) return 0;
		if (now() - t0 > limit) return -1;
		struct timespec p = {0, 100000}; nanosleep(&p, NULL);
	}
}
int main(int argc, char **argv) {
	const char *how = argc > 1 ? argv[1] : "ungrouped";
	size_t n = 21504; int devs[2] = {0, 0}; ncclComm_t c[2]; cudaStream_t s[2]; void *b[2];
	int v; ncclGetVersion(&v); printf("nccl %d mode %s\n", v, how);
	ncclUniqueId id; NK(ncclGetUniqueId(&id));
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER; cfg.blocking = 0;
	NK(ncclGroupStart());
	for (int i = 0; i < 2; i++) { CK(cudaSetDevice(0)); NK(ncclCommInitRankConfig(&c[i], 2, id, i, &cfg)); }
	NK(ncclGroupEnd());
	if (wait_all(c, 2, 60)) { printf("init did not finish\n"); return 1; }
	for (int i = 0; i < 2; i++) { CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking)); CK(cudaMalloc(&b[i], n * 2)); CK(cudaMemset(b[i], 0, n * 2)); }
	for (int k = 0; k < 100; k++) { NK(ncclGroupStart()); for (int i = 0; i < 2; i++) NK(ncclAllReduce(b[i], b[i], n, ncclBfloat16, ncclSum, c[i], s[i])); NK(ncclGroupEnd()); wait_all(c, 2, 10); }
	for (int i = 0; i < 2; i++) CK(cudaStreamSynchronize(s[i]));
	printf("allreduces done\n"); fflush(stdout);
	double t0 = now();
	if (!strcmp(how, "grouped")) { NK(ncclGroupStart()); for (int i = 0; i < 2; i++) NK(ncclCommFinalize(c[i])); NK(ncclGroupEnd()); }
	else if (!strcmp(how, "ungrouped")) { for (int i = 0; i < 2; i++) NK(ncclCommFinalize(c[i])); }
	int w = strcmp(how, "abort") ? wait_all(c, 2, 15) : -1;
	printf("finalize: %s after %.2f s\n", w == 0 ? "done" : w == -1 ? "not done (deadline or skipped)" : "error", now() - t0); fflush(stdout);
	t0 = now();
	if (w == 0) { for (int i = 0; i < 2; i++) ncclCommDestroy(c[i]); printf("destroy %.2f s\n", now() - t0); }
	else { for (int i = 0; i < 2; i++) { ncclResult_t r = ncclCommAbort(c[i]); printf("abort rank %d: %s after %.2f s\n", i, ncclGetErrorString(r), now() - t0); fflush(stdout);} }
	printf("exit\n");
	return 0;
}
