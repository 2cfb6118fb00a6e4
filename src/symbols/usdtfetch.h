/* usdtfetch — a USDT probe's arguments as captures and predicates: the
 * part of a spec after usdt:...:NAME (capexpr.h), with arg0, arg1, ...
 * naming the note's operands, compiled into the fetch program every site
 * runs (bpf/fetch.bpf.h). An argument is a number of its operand's size and
 * sign (a register, memory at a register and offset, or a constant): the
 * notes carry no types, so paths into it (members, indexes, *, &) are
 * refused; a predicate is any integer expression over them. */
#ifndef SONDE_USDTFETCH_H
#define SONDE_USDTFETCH_H

#include <stddef.h>

#include "capexpr.h"
#include "dwarfvar.h"
#include "usdt.h"

/* A site's operands: args[0 .. nargs) (nargs -1: one it cannot read) of
 * the probe at vaddr. */
struct usdtfetch_site {
	const struct usdt_arg *args;
	int nargs;
	uint64_t vaddr;
};

/* Compiles spec for the site into out (free with dwarfvar_build_free).
 * Returns 0, or -1 with one line in err. */
int usdtfetch_compile(const struct usdtfetch_site *p, const struct cap_spec *spec,
		      struct fetch_build *out, char *err, size_t errlen);

#endif
