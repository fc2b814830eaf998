/* readjournal.c - test helper: read the journal of session folder ARGV[1] as resume does
 * (session_load_journal) and as show / report / check do (summary_load, the journal
 * alone) and print one line for each: "resume: ok" or "resume: MESSAGE", then "show:
 * ...". Both go through the one journal reader (tuner/result/record.c); test_readers.py
 * compares what each accepts and says. */
#include <stdio.h>
#include <string.h>

#include "result/summary.h"
#include "session/session_priv.h"

int main(int argc, char **argv)
{
	nccltune_session *s;
	struct summary *sum = NULL;
	char err[2048] = "";
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: readjournal SESSION_DIR\n");
		return 2;
	}
	s = nccltune_session_create();
	if (!s)
		return 1;
	rc = session_load_journal(s, argv[1]);
	printf("resume: %s\n", rc == NCCLTUNE_OK ? "ok" : s->err);
	nccltune_session_destroy(s);
	rc = summary_load(argv[1], SUMMARY_JOURNAL | SUMMARY_PARTIAL, &sum, err, sizeof err);
	printf("show: %s\n", rc == 0 ? "ok" : err);
	summary_destroy(sum);
	return 0;
}
