/* test_journal.c - append/replay round trip, torn last lines, a damaged middle line. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "fsutil.h"
#include "run/journal.h"

struct seen {
	int n;
	int values[16];
	size_t lines[16];
};

static int visit(void *ctx, const cJSON *rec, size_t line)
{
	struct seen *s = ctx;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(rec, "v");

	if (s->n < 16) {
		s->values[s->n] = cJSON_IsNumber(v) ? (int)v->valuedouble : -1;
		s->lines[s->n] = line;
	}
	s->n++;
	return 0;
}

static int stop_at_two(void *ctx, const cJSON *rec, size_t line)
{
	visit(ctx, rec, line);
	return ((struct seen *)ctx)->n == 2 ? 42 : 0;
}

static void append_v(journal *j, int v, const char *text)
{
	cJSON *o = cJSON_CreateObject();
	char err[256];

	cJSON_AddNumberToObject(o, "v", v);
	cJSON_AddStringToObject(o, "text", text);
	CHECK_INT(journal_append(j, o, err, sizeof err), 0);
	cJSON_Delete(o);
}

static void write_raw(const char *path, const char *text)
{
	char err[256];

	CHECK_INT(fs_write_atomic(path, text, strlen(text), 0644, err, sizeof err), 0);
}

int main(void)
{
	char dir[] = "/tmp/nccltune-journal-XXXXXX", path[256], err[512], warn[512];
	struct seen s;
	journal *j;
	int torn = -1;
	char *text;
	size_t len;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof path, "%s/journal.jsonl", dir);

	/* Round trip; a string with a newline stays on one line. journal_open takes an
	 * existing journal only. */
	write_raw(path, "");
	j = journal_open(path, err, sizeof err);
	CHECK(j != NULL);
	append_v(j, 1, "plain");
	append_v(j, 2, "two\nlines \"quoted\"");
	append_v(j, 3, "");
	CHECK_INT(journal_close(j), 0);
	memset(&s, 0, sizeof s);
	CHECK_INT(journal_replay(path, visit, &s, &torn, warn, sizeof warn, err, sizeof err), 0);
	CHECK_INT(s.n, 3);
	CHECK_INT(s.values[1], 2);
	CHECK_INT(s.lines[2], 3);
	CHECK_INT(torn, 0);
	text = fs_read_file(path, 1 << 20, &len, err, sizeof err);
	CHECK(text != NULL);
	if (text) {
		int nl = 0;

		for (size_t i = 0; i < len; i++)
			nl += text[i] == '\n';
		CHECK_INT(nl, 3);
		free(text);
	}

	/* A visitor's non-zero value stops the replay and is returned. */
	memset(&s, 0, sizeof s);
	CHECK_INT(journal_replay(path, stop_at_two, &s, NULL, NULL, 0, err, sizeof err), 42);
	CHECK_INT(s.n, 2);

	/* A torn last line: skipped with a warning, then cut by open, appends stay clean. */
	write_raw(path, "{\"v\": 1}\n{\"v\": 2}\n{\"v\": 3, \"te");
	memset(&s, 0, sizeof s);
	CHECK_INT(journal_replay(path, visit, &s, &torn, warn, sizeof warn, err, sizeof err), 0);
	CHECK_INT(s.n, 2);
	CHECK_INT(torn, 1);
	CHECK_CONTAINS(warn, "journal.jsonl:3");
	CHECK_CONTAINS(warn, "torn");
	j = journal_open(path, err, sizeof err);
	CHECK(j != NULL);
	append_v(j, 4, "after repair");
	journal_close(j);
	memset(&s, 0, sizeof s);
	CHECK_INT(journal_replay(path, visit, &s, &torn, warn, sizeof warn, err, sizeof err), 0);
	CHECK_INT(s.n, 3);
	CHECK_INT(s.values[2], 4);
	CHECK_INT(torn, 0);

	/* A complete last line that does not parse is torn too, and cut by open. */
	write_raw(path, "{\"v\": 1}\n{\"v\": \n");
	memset(&s, 0, sizeof s);
	CHECK_INT(journal_replay(path, visit, &s, &torn, NULL, 0, err, sizeof err), 0);
	CHECK_INT(s.n, 1);
	CHECK_INT(torn, 1);
	j = journal_open(path, err, sizeof err);
	append_v(j, 5, "x");
	journal_close(j);
	text = fs_read_file(path, 1 << 20, &len, err, sizeof err);
	CHECK(text && strncmp(text, "{\"v\": 1}\n{\"v\":5", 15) == 0);
	free(text);

	/* A damaged line before the last is an error naming the file and line. */
	write_raw(path, "{\"v\": 1}\nnot json\n{\"v\": 3}\n");
	memset(&s, 0, sizeof s);
	CHECK_INT(journal_replay(path, visit, &s, &torn, NULL, 0, err, sizeof err), -1);
	CHECK_CONTAINS(err, "journal.jsonl:2");
	CHECK_INT(s.n, 1);
	write_raw(path, "{\"v\": 1}\n[1, 2]\n{\"v\": 3}\n");
	CHECK_INT(journal_replay(path, visit, &s, &torn, NULL, 0, err, sizeof err), -1);
	CHECK_CONTAINS(err, ":2:");

	/* Missing file and unwritable folder: messages name the path. */
	CHECK_INT(journal_replay("/nonexistent/journal.jsonl", visit, &s, NULL, NULL, 0, err,
	                         sizeof err), -1);
	CHECK_CONTAINS(err, "/nonexistent/journal.jsonl");
	CHECK(journal_open("/nonexistent/dir/journal.jsonl", err, sizeof err) == NULL);
	CHECK_CONTAINS(err, "/nonexistent/dir/journal.jsonl");
	CHECK_INT(journal_close(NULL), 0);

	unlink(path);
	rmdir(dir);
	return check_status();
}
