/* test_topo.c - link matrix words as nvidia-smi writes them, and NVML loading failing
 * with a message instead of a crash where there is no driver. */
#include <stdlib.h>

#include "../check.h"
#include "topo.h"

static const char *cell(int same, int nvlinks, int level)
{
	static char word[TOPO_WORD_MAX];

	topo_cell_word(same, nvlinks, level, word);
	return word;
}

int main(void)
{
	char err[512] = "";
	const char *ids[] = {"00000000:18:00.0"};
	struct topo *t;

	CHECK_STR(cell(1, 0, TOPO_LEVEL_SYSTEM), "X");
	CHECK_STR(cell(0, 18, TOPO_LEVEL_SYSTEM), "NV18");
	CHECK_STR(cell(0, 4, TOPO_LEVEL_SINGLE), "NV4");
	CHECK_STR(cell(0, 0, TOPO_LEVEL_SINGLE), "PIX");
	CHECK_STR(cell(0, 0, TOPO_LEVEL_MULTIPLE), "PXB");
	CHECK_STR(cell(0, 0, TOPO_LEVEL_HOSTBRIDGE), "PHB");
	CHECK_STR(cell(0, 0, TOPO_LEVEL_NODE), "NODE");
	CHECK_STR(cell(0, 0, TOPO_LEVEL_SYSTEM), "SYS");
	CHECK_STR(cell(0, 0, 35), "?");
	/* direct links win; through switches a GPU counts its own switch links */
	CHECK_INT(topo_nvlink_count(2, 0, 0), 2);
	CHECK_INT(topo_nvlink_count(2, 18, 18), 2);
	CHECK_INT(topo_nvlink_count(0, 18, 18), 18);
	CHECK_INT(topo_nvlink_count(0, 18, 0), 0);
	CHECK_INT(topo_nvlink_count(0, 0, 0), 0);

	/* With a driver, NVML opens (the bus id may be unknown to it); without, the reason
	 * names NVML. Either way: no crash, and a message on failure. */
	t = topo_open(ids, 0, err, sizeof err);
	if (t) {
		char drv[96];

		CHECK_INT(topo_driver_version(t, drv, sizeof drv, err, sizeof err), 0);
		CHECK(drv[0] != '\0');
		topo_close(t);
	} else {
		CHECK(strstr(err, "NVML") || strstr(err, "nvml"));
	}
	t = topo_open(ids, 1, err, sizeof err);
	if (!t)
		CHECK(err[0] != '\0');
	topo_close(t);
	topo_close(NULL);
	return check_status();
}
