/* python.h - what install and uninstall ask a Python interpreter: where its site-packages
 * and its sitecustomize are and whether it is a virtual environment (python_info), which
 * lines of a file its own tokenizer calls nccltune's marker comments (python_markers),
 * and whether a text is valid Python to its own parser (python_parses). Each runs the
 * interpreter as a child (tuner/run/runner) with a deadline. Used by install.c and
 * pth.c. */
#ifndef NCCLTUNE_WORKFLOWS_PYTHON_H
#define NCCLTUNE_WORKFLOWS_PYTHON_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* An interpreter as it describes itself. Paths are absolute. */
struct python_info {
	char executable[PATH_MAX];   /* sys.executable */
	char prefix[PATH_MAX];       /* sys.prefix (a venv's folder in a venv) */
	char purelib[PATH_MAX];      /* sysconfig.get_paths()["purelib"]: its site-packages */
	bool venv;                   /* sys.prefix != sys.base_prefix */
	bool purelib_on_path;        /* purelib is on sys.path, so its .pth files are read */
	char sitecustomize[PATH_MAX];/* the file `import sitecustomize` finds, or would create
	                              * (see python.c); "" when there is no place for one */
	/* The NCCL its path holds, read without importing anything: in the first folder of
	 * its path (sys.path, then its site folders) that has an nvidia-nccl-cu*
	 * distribution, the version in the name libnccl.so.2.X.Y beside
	 * nvidia/nccl/lib/libnccl.so.2, else the "Version:" of its
	 * nvidia_nccl_cu*-*.dist-info/METADATA. "" and -1 when none is found or the folder
	 * names several versions (a server may also load another NCCL: LD_LIBRARY_PATH, a
	 * framework's own NCCL path, a statically linked one). */
	char nccl[32];               /* "2.28.9", or "" */
	int nccl_major, nccl_minor;  /* 2, 28; -1 when unknown */
	char nccl_from[PATH_MAX];    /* the file or folder it was read from, or "" */
};

/* Ask `python` (run as given; "python3" is found in PATH), isolated and without site
 * (-I -S; python.c redoes site's layout by reading pyvenv.cfg). Returns NCCLTUNE_OK;
 * NCCLTUNE_USAGE when running as root and another user can change the interpreter, its
 * folder or its venv's pyvenv.cfg (not run); NCCLTUNE_ERROR with a message naming the
 * interpreter. python_markers and python_parses refuse such an interpreter the same
 * way. */
int python_info(const char *python, struct python_info *info, char *err, size_t errlen);

/* A marker line as the tokenizer saw it: 1-based line, 0-based column, begin or end. */
struct python_marker { size_t line, col; bool begin; };
#define PYTHON_MARKERS_MAX 64

/* The comment tokens of the file at `path` that are exactly nccltune's markers (trailing
 * blanks aside), in order, by `python`'s tokenizer: a marker inside a string literal is
 * not one. Returns NCCLTUNE_OK; NCCLTUNE_USAGE for a file that is not valid Python
 * ("PATH:LINE: reason") or too many markers; NCCLTUNE_ERROR when python cannot run. */
int python_markers(const char *python, const char *path, struct python_marker *m, size_t *n,
                   char *err, size_t errlen);

/* Is `text` valid Python to `python`'s parser (ast.parse)? `shown` names the file it is
 * meant for in messages. Returns NCCLTUNE_OK, NCCLTUNE_USAGE ("shown: with nccltune's
 * block in place the file would not be valid Python ...") or NCCLTUNE_ERROR. */
int python_parses(const char *python, const char *text, size_t len, const char *shown,
                  char *err, size_t errlen);

#endif
