/* Storage ranges attached to dynamic windows (win_dynamic.c). */
#ifndef TIO_WIN_DYNAMIC_H
#define TIO_WIN_DYNAMIC_H

#include "win/state.h"

/* Write back the storage ranges attached to the window of st. */
int tio_sync_attached(struct tio_win_state *st, struct tio_err *err);

#endif
