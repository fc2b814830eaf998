/* fuzz_results_journal.c - fuzz target for the journal as the summary reads it
 * (summary_read_journal, used by show/report/export on a session folder): a fixed,
 * valid results document plus a fuzzed journal.jsonl. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "memfile.h"
#include "result/summary.h"

static const char results[] =
	"{\"schema\": \"nccltune-result/1\", \"tool\": {\"name\": \"nccltune\", \"version\": \"0.1.0\"},"
	" \"created\": \"2026-11-29T12:10:00Z\", \"source\": \"model\", \"model\": \"pcie-gen5-8gpu\","
	" \"fingerprint\": {\"schema\": \"nccltune-fingerprint/1\", \"source\": \"model\","
	" \"model\": \"pcie-gen5-8gpu\", \"host\": \"h\", \"gpu_count\": 1,"
	" \"gpus\": [{\"index\": 0, \"name\": \"G\", \"bus_id\": \"00000000:18:00.0\"}],"
	" \"topology\": [[\"X\"]]},"
	" \"workload\": {\"schema\": \"nccltune-workload/1\", \"dtype\": \"bf16\","
	" \"collectives\": [{\"op\": \"allreduce\", \"bytes\": 43008, \"count\": 122}]},"
	" \"strategy\": \"bo\", \"seed\": 1, \"budget\": 60, \"pinned\": {},"
	" \"baseline\": {\"env\": {}, \"objective_us\": 24400.0, \"ci95_us\": [24100.0, 24800.0]},"
	" \"best\": {\"env\": {\"NCCL_PROTO\": \"LL\", \"NCCL_ALGO\": \"Ring\"},"
	" \"objective_us\": 2850.0, \"ci95_us\": [2820.0, 2890.0],"
	" \"per_size\": [{\"bytes\": 43008, \"us\": 23.4}]},"
	" \"gain\": {\"ratio\": 8.56, \"ci95\": [8.3, 8.8]}, \"top\": [], \"evaluations\": 57,"
	" \"failures\": [], \"pruned\": []}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct summary *s = NULL;
	char path[320], err[1024];
	int fd;

	if (summary_parse(results, sizeof results - 1, "results.json", &s, err, sizeof err) != 0) {
		fprintf(stderr, "fuzz_results_journal: the fixed results no longer load: %s\n", err);
		abort();
	}
	fd = memfile_create(data, size, path, sizeof path);
	if (fd >= 0) {
		if (summary_read_journal(s, path, err, sizeof err) == 0) {
			for (size_t i = 0; i < s->nruns; i++)
				if (!s->runs[i].phase[0] && !s->runs[i].outcome[0] && s->runs[i].run < 0)
					abort();
		} else if (!err[0]) {
			abort();   /* a failure without a message */
		}
		close(fd);
	}
	summary_destroy(s);
	return 0;
}
