/* ctor_plugin.c - a library that looks like nccltune's tuner plugin by its symbols and
 * runs code when it is loaded: its constructor creates the file named by
 * $NCCLTUNE_TEST_CTOR_MARK. check and retune must judge a plugin without loading it
 * (issue 31 M1), so the file must never appear. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int nccltune_tuner_control_version(void);
extern const char ncclTunerPlugin_v4[8];

const char ncclTunerPlugin_v4[8] = "fake";

int nccltune_tuner_control_version(void)
{
	return 1;
}

__attribute__((constructor)) static void mark(void)
{
	const char *m = getenv("NCCLTUNE_TEST_CTOR_MARK");
	int fd = m ? open(m, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -1;

	if (fd >= 0)
		close(fd);
}
