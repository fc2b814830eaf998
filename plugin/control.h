/* control.h - the plugin's side of the control interface (nccltune_tuner.h): is an
 * answer forced for this collective, is recording on, and append one decision. Internal
 * to libnccl-tuner-nccltune.so; the state lives in control.c. */
#ifndef NCCLTUNE_PLUGIN_CONTROL_H
#define NCCLTUNE_PLUGIN_CONTROL_H

#include "nccltune_tuner.h"

/* Symbols the .so exports; everything else is hidden (-fvisibility=hidden). */
#define NT_EXPORT __attribute__((visibility("default")))

/* 1 with the forced answer copied into *out when one is set and names `coll` (a coll
 * outside the five a table can name never matches), else 0. Can't fail. */
int control_forced(int coll, struct nccltune_tuner_force *out);

/* Whether decisions are being recorded (a relaxed atomic load). Can't fail. */
int control_recording(void);

/* Append `d` to the ring if recording is on (dropping the oldest when full). Can't fail. */
void control_record(const struct nccltune_tuner_decision *d);

#endif
