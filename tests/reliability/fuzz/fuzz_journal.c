/* fuzz_journal.c - fuzz target for the journal (journal_replay, and the torn-line repair
 * of journal_open): a journal is a file on disk that a kill, a full disk or a person can
 * damage. Property: when a journal replays, opening it for appending and adding one
 * record gives a journal that replays with exactly one more record and no torn line. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"
#include "run/journal.h"
#include "memfile.h"

static int count(void *ctx, const cJSON *record, size_t line)
{
	size_t *n = ctx;

	if (!cJSON_IsObject(record) || line == 0)
		abort();
	(*n)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[320], warn[1024], err[1024];
	size_t before = 0, after = 0;
	int torn = 0, fd;
	journal *j;
	cJSON *rec;

	fd = memfile_create(data, size, path, sizeof path);
	if (fd < 0)
		return 0;
	if (journal_replay(path, count, &before, &torn, warn, sizeof warn, err, sizeof err) != 0)
		goto out;
	j = journal_open(path, err, sizeof err);
	if (!j)
		abort();
	rec = cJSON_CreateObject();
	if (rec && cJSON_AddStringToObject(rec, "type", "fuzz")) {
		if (journal_append(j, rec, err, sizeof err) != 0)
			abort();
		if (journal_replay(path, count, &after, &torn, warn, sizeof warn, err, sizeof err) != 0)
			abort();
		if (after != before + 1 || torn != 0)
			abort();
	}
	cJSON_Delete(rec);
	if (journal_close(j) != 0)
		abort();
out:
	close(fd);
	return 0;
}
