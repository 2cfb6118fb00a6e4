/* replay — a recording shown as a session (serve/top on a recording):
 * no engine, the recording's times, an event loop that ends at once.
 * session_replay (session.h) is its API. */
#ifndef SONDE_REPLAY_H
#define SONDE_REPLAY_H

#include "sessionstate.h"

#endif
