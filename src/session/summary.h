/* summary — what a session says of itself: the recording's metadata
 * (command, host, counts, drops, own cost) and the summary printed at the
 * end. session_recording and session_print_summary (session.h) are its
 * API. */
#ifndef SONDE_SUMMARY_H
#define SONDE_SUMMARY_H

#include "sessionstate.h"

/* Puts the session's metadata into its profile, as of end_mono. */
void summary_add_metadata(struct session *s, double end_mono);

#endif
