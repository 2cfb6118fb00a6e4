// SPDX-License-Identifier: GPL-2.0
/* fetch.bpf.c — the maps of fetch programs (fetch.bpf.h runs them). */
#include "fetch.bpf.h"

sonde_fetch_progs_map fetch_progs SEC(".maps");
sonde_fetch_scratch_map fetch_scratch SEC(".maps");
