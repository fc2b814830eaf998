/* test_elf.c - what the built plugin file promises the loader and the servers it goes
 * into: its name is exactly libnccl-tuner-nccltune.so (NCCL_TUNER_PLUGIN=nccltune finds
 * it), it needs no library but libc (libm and libpthread tolerated; in a sanitizer build
 * also the sanitizer runtimes), and it exports exactly the three ncclTunerPlugin structs
 * and the five control functions. Reads the ELF dynamic section and symbol table itself,
 * so no binutils are needed.
 * Usage: test_plugin_elf PLUGIN.so SANITIZE (meson's b_sanitize as text: "none" or "[]"
 * when off) */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

static const char *const exported[] = {
	"ncclTunerPlugin_v4", "ncclTunerPlugin_v5", "ncclTunerPlugin_v6",
	"nccltune_tuner_control_version", "nccltune_tuner_force", "nccltune_tuner_record",
	"nccltune_tuner_decisions", "nccltune_tuner_dropped",
};
#define NEXPORTED (sizeof exported / sizeof exported[0])

static int allowed_needed(const char *name, int sanitized)
{
	static const char *const ok[] = { "libc.so.", "libm.so.", "libpthread.so." };
	static const char *const san[] = { "libasan.so.", "libubsan.so.", "libtsan.so.",
	                                   "liblsan.so.", "libstdc++.so.", "libgcc_s.so.",
	                                   "libdl.so.", "librt.so." };

	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (strncmp(name, ok[i], strlen(ok[i])) == 0)
			return 1;
	for (size_t i = 0; sanitized && i < sizeof san / sizeof san[0]; i++)
		if (strncmp(name, san[i], strlen(san[i])) == 0)
			return 1;
	return 0;
}

/* A NUL-terminated string at `off` of section `s`, or NULL when out of bounds. */
static const char *str_at(const unsigned char *img, size_t size, const Elf64_Shdr *s, size_t off)
{
	if (s->sh_offset > size || s->sh_size > size - s->sh_offset || off >= s->sh_size)
		return NULL;
	if (!memchr(img + s->sh_offset + off, '\0', s->sh_size - off))
		return NULL;
	return (const char *)img + s->sh_offset + off;
}

int main(int argc, char **argv)
{
	unsigned char *img = NULL;
	size_t size = 0, nseen = 0;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const char *base;
	int seen[NEXPORTED] = { 0 }, sanitized, needed = 0;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: %s PLUGIN.so SANITIZE\n", argv[0]);
		return 2;
	}
	sanitized = strcmp(argv[2], "none") != 0 && strcmp(argv[2], "[]") != 0;
	base = strrchr(argv[1], '/');
	CHECK_STR(base ? base + 1 : argv[1], "libnccl-tuner-nccltune.so");
	f = fopen(argv[1], "rb");
	CHECK(f != NULL);
	if (!f)
		return check_status();
	for (;;) {
		unsigned char *n = realloc(img, size + 65536);
		size_t got;

		if (!n)
			abort();
		img = n;
		got = fread(img + size, 1, 65536, f);
		size += got;
		if (got < 65536)
			break;
	}
	fclose(f);
	eh = (const Elf64_Ehdr *)(void *)img;
	CHECK(size > sizeof *eh && memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0);
	CHECK(eh->e_ident[EI_CLASS] == ELFCLASS64 && eh->e_type == ET_DYN);
	CHECK(eh->e_shoff < size && eh->e_shentsize == sizeof(Elf64_Shdr) &&
	      eh->e_shnum <= (size - eh->e_shoff) / sizeof(Elf64_Shdr));
	if (check_failures)
		return check_status();
	sh = (const Elf64_Shdr *)(void *)(img + eh->e_shoff);
	for (size_t i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *s = &sh[i], *strs;

		if ((s->sh_type != SHT_DYNAMIC && s->sh_type != SHT_DYNSYM) || s->sh_link >= eh->e_shnum ||
		    s->sh_offset > size || s->sh_size > size - s->sh_offset)
			continue;
		strs = &sh[s->sh_link];
		if (s->sh_type == SHT_DYNAMIC) {
			const Elf64_Dyn *d = (const Elf64_Dyn *)(const void *)(img + s->sh_offset);

			for (size_t k = 0; k < s->sh_size / sizeof *d && d[k].d_tag != DT_NULL; k++) {
				const char *name;

				if (d[k].d_tag != DT_NEEDED)
					continue;
				name = str_at(img, size, strs, d[k].d_un.d_val);
				CHECK(name != NULL);
				if (!name)
					continue;
				needed++;
				if (!allowed_needed(name, sanitized)) {
					fprintf(stderr, "the plugin needs %s: only libc may be required\n", name);
					CHECK(!"needs only libc");
				}
			}
		} else {
			const Elf64_Sym *sym = (const Elf64_Sym *)(const void *)(img + s->sh_offset);

			for (size_t k = 0; k < s->sh_size / sizeof *sym; k++) {
				int bind = ELF64_ST_BIND(sym[k].st_info);
				const char *name;
				size_t j;

				if (sym[k].st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) ||
				    ELF64_ST_VISIBILITY(sym[k].st_other) != STV_DEFAULT)
					continue;
				name = str_at(img, size, strs, sym[k].st_name);
				CHECK(name != NULL);
				if (!name)
					continue;
				for (j = 0; j < NEXPORTED && strcmp(name, exported[j]) != 0; j++)
					;
				if (j < NEXPORTED) {
					seen[j]++;
					nseen++;
				} else if (!(sanitized && strncmp(name, "__", 2) == 0)) {
					/* (ASan adds __odr_asan.NAME for each exported global) */
					fprintf(stderr, "the plugin exports %s\n", name);
					CHECK(!"exports only the plugin structs and the control functions");
				}
			}
		}
	}
	CHECK(needed >= 1);
	for (size_t j = 0; j < NEXPORTED; j++) {
		if (seen[j] != 1)
			fprintf(stderr, "%s exported %d times\n", exported[j], seen[j]);
		CHECK_INT(seen[j], 1);
	}
	CHECK_INT(nseen, NEXPORTED);
	free(img);
	return check_status();
}
