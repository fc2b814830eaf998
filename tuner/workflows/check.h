/* check.h - what check.c shares inside tuner/workflows/ (with retune.c). */
#ifndef NCCLTUNE_WORKFLOWS_CHECK_H
#define NCCLTUNE_WORKFLOWS_CHECK_H

/* A session recorded where its probe was (an absolute path into a build tree or an
 * install). When that path is gone - the folder was copied to another machine, the tree
 * rebuilt elsewhere - and it named one of nccltune's own probes, find that probe here
 * the way `nccltune run` does. Returns a malloc'd path, or NULL to keep argv0. */
char *check_relocate_tool(const char *argv0);

#endif
