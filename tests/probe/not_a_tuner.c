/* not_a_tuner.c - a shared library without nccltune's control interface: --sweep must
 * refuse it. Built for test_sweep only. */
int not_a_tuner(void);

int not_a_tuner(void)
{
	return 0;
}
