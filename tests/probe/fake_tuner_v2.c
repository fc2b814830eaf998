/* fake_tuner_v2.c - a shared library that claims the control interface in another version
 * (2): --sweep must refuse it. Built for test_sweep only. */
int nccltune_tuner_control_version(void);

int nccltune_tuner_control_version(void)
{
	return 2;
}
