/* fake_plugin.c - a library that has nccltune's control entry point but answers another
 * version: the exports must not take it for nccltune's tuner plugin. */
int nccltune_tuner_control_version(void);

int nccltune_tuner_control_version(void)
{
	return 2;
}
