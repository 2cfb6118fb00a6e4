/* pystacks — the Python processes whose samples carry Python frames: each
 * one's interpreter address and layout in the kernel's `py_procs` map
 * (bpf/python.bpf.h walks the frames with them). Implements
 * engine_set_python and engine_forget_python (engine.h). */
#ifndef SONDE_PYSTACKS_H
#define SONDE_PYSTACKS_H

#include "engine.h"

#endif
