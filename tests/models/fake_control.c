/* fake_control.c - nccltune's control interface (version 1) without any NCCL tuner
 * symbol: --sweep accepts it, but the model's NCCL finds no tuner in it and never asks,
 * so the sweep must fail at stage env ("NCCL did not ask ..."). Built for the model
 * probe's tests only. */
#include <stddef.h>

#include "nccltune_tuner.h"

int nccltune_tuner_control_version(void)
{
	return NCCLTUNE_TUNER_CONTROL_VERSION;
}

int nccltune_tuner_force(const struct nccltune_tuner_force *f)
{
	(void)f;
	return 0;
}

void nccltune_tuner_record(int on)
{
	(void)on;
}

size_t nccltune_tuner_decisions(struct nccltune_tuner_decision *out, size_t max)
{
	(void)out;
	(void)max;
	return 0;
}

uint64_t nccltune_tuner_dropped(void)
{
	return 0;
}
