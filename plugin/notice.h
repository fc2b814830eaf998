/* notice.h - the one line libnccl-tuner-nccltune.so writes to stderr by itself, for a
 * deployment that is broken (a table named but unusable): NCCL prints the plugin's
 * warnings only with NCCL_DEBUG set, and its default is silence. Internal to the .so. */
#ifndef NCCLTUNE_PLUGIN_NOTICE_H
#define NCCLTUNE_PLUGIN_NOTICE_H

/* Write "nccltune: TEXT\n" to file descriptor 2, the first time this loaded copy of the
 * plugin is asked, and never again: a process with several communicators gets one line.
 * Never blocks (a pipe without room for the line gets nothing), never raises SIGPIPE (a
 * closed reader gets nothing), never fails; the line is cut at NOTICE_MAX bytes and
 * written in one write(2), so it is not interleaved with other writers' lines. */
#define NOTICE_MAX 1024
void notice_once(const char *text);

#endif
