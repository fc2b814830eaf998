/* plugin_file.c - the ELF reading of plugin_file.h: the header, the section headers, and
 * the dynamic symbol table with its string table, every offset and size checked against
 * the file before it is used (the file may be anyone's). */
#include "workflows/plugin_file.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

#define PLUGIN_FILE_MAX ((off_t)1 << 30)   /* a larger "plugin" is refused, not read */

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#else
#define HOST_MACHINE EM_NONE   /* not compared */
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

/* Does [off, off + len) lie inside a file of `size` bytes? */
static bool inside(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* Look through the dynamic symbol tables of the mapped file (size bytes) for the two
 * entry points; a message in why for the first thing wrong. */
static int scan(const unsigned char *m, uint64_t size, char *why, size_t whylen)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
	bool control = false, tuner = false, dynsym = false;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return fs_errf(why, whylen, "not an ELF file");
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != HOST_DATA ||
	    (HOST_MACHINE != EM_NONE && eh->e_machine != HOST_MACHINE))
		return fs_errf(why, whylen, "an ELF file for another architecture");
	if (eh->e_type != ET_DYN)
		return fs_errf(why, whylen, "not a shared library");
	if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !inside(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), size))
		return fs_errf(why, whylen, "no readable section headers (stripped of them?), so it "
		               "cannot be checked without loading it");
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)(m + eh->e_shoff) + i, *st;
		const char *strs;

		if (sh->sh_type != SHT_DYNSYM)
			continue;
		if (sh->sh_entsize != sizeof(Elf64_Sym) || sh->sh_link >= eh->e_shnum ||
		    !inside(sh->sh_offset, sh->sh_size, size))
			return fs_errf(why, whylen, "a damaged dynamic symbol table");
		st = (const Elf64_Shdr *)(m + eh->e_shoff) + sh->sh_link;
		if (st->sh_type != SHT_STRTAB || !inside(st->sh_offset, st->sh_size, size))
			return fs_errf(why, whylen, "a damaged dynamic string table");
		dynsym = true;
		strs = (const char *)m + st->sh_offset;
		for (uint64_t k = 0; k < sh->sh_size / sizeof(Elf64_Sym); k++) {
			const Elf64_Sym *sym = (const Elf64_Sym *)(m + sh->sh_offset) + k;
			const char *name;
			size_t left;

			if (sym->st_shndx == SHN_UNDEF || sym->st_name >= st->sh_size)
				continue;
			name = strs + sym->st_name;
			left = st->sh_size - sym->st_name;
			if (!memchr(name, '\0', left))
				continue;
			if (ELF64_ST_TYPE(sym->st_info) == STT_FUNC &&
			    strcmp(name, "nccltune_tuner_control_version") == 0)
				control = true;
			if (ELF64_ST_TYPE(sym->st_info) == STT_OBJECT &&
			    strncmp(name, "ncclTunerPlugin_v", 17) == 0)
				tuner = true;
		}
	}
	if (!dynsym)
		return fs_errf(why, whylen, "no dynamic symbol table");
	if (!control || !tuner)
		return fs_errf(why, whylen, "not nccltune's tuner plugin (no %s)", !control
		               ? "nccltune_tuner_control_version" : "ncclTunerPlugin_v* of NCCL's tuner "
		               "interface");
	return 0;
}

int plugin_file_check(const char *path, char *err, size_t errlen)
{
	char why[256];
	struct stat st;
	void *m = MAP_FAILED;
	int fd, rc = -1;

	if (path[0] != '/')
		return fs_errf(err, errlen, "%s: not an absolute path", path);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return fs_errf(err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fs_errf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if (st.st_size <= 0 || st.st_size > PLUGIN_FILE_MAX) {
		fs_errf(err, errlen, "%s: %s", path, st.st_size <= 0 ? "empty" : "too large for a "
		        "plugin");
		goto out;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		fs_errf(err, errlen, "%s: cannot read it: %s", path, strerror(errno));
		goto out;
	}
	if (scan(m, (uint64_t)st.st_size, why, sizeof why) != 0) {
		fs_errf(err, errlen, "%s: %s", path, why);
		goto out;
	}
	rc = 0;
out:
	if (m != MAP_FAILED)
		munmap(m, (size_t)st.st_size);
	close(fd);
	return rc;
}
