/* fakepw.c - test scaffolding, LD_PRELOADed: getpwuid answers with the home folder
 * $FAKEPW_DIR (when set) and the real entry's other fields, so that a test can point
 * "the home folder as NCCL finds it" (the password database's, not $HOME) at a
 * temporary folder. Not code under test. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

struct passwd *getpwuid(uid_t uid)
{
	static struct passwd fake;
	struct passwd *(*real)(uid_t) = NULL;
	void *sym = dlsym(RTLD_NEXT, "getpwuid");
	struct passwd *p;
	char *dir = getenv("FAKEPW_DIR");

	memcpy(&real, &sym, sizeof real);   /* POSIX: dlsym's object pointer is the function */
	p = real ? real(uid) : NULL;
	if (!p || !dir)
		return p;
	fake = *p;
	fake.pw_dir = dir;
	return &fake;
}
