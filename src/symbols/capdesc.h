/* capdesc — what a captured value is, as every layer above names it: how
 * it is shown, its status when it could not be read, and the bounds of a
 * probe's captures. The kernel's record of values (bpf/sonde_abi.h) uses
 * the same numbers; dwarfvar.c and model/values.c, which translate between
 * the two, assert that they agree, so no layer above needs the ABI. */
#ifndef SONDE_CAPDESC_H
#define SONDE_CAPDESC_H

#include <stdint.h>

/* Values a probe captures at most; bytes of a string value, with its NUL. */
#define CAPTURE_MAX 8
#define CAPTURE_STR_MAX 64

/* A value's status: read, or why not. */
enum capture_status {
	CAPTURE_OK = 0,
	CAPTURE_FAULT = 1,         /* reading the target's memory failed */
	CAPTURE_OPTIMIZED_OUT = 2, /* the compiler kept no location for it here */
	CAPTURE_UNAVAILABLE = 3,   /* a location sonde cannot read here (entry_value) */
};

/* How a captured value is shown. */
enum capture_kind {
	CAPTURE_SIGNED,   /* integers, chars: as decimal */
	CAPTURE_UNSIGNED,
	CAPTURE_BOOL,     /* true / false */
	CAPTURE_ENUM,     /* by enumerator name (the number when none matches) */
	CAPTURE_POINTER,  /* hex */
	CAPTURE_STRING,   /* char arrays and char pointers: bounded strings */
	CAPTURE_FLOAT,    /* float, double: the bits, shown as a number */
	CAPTURE_PYTHON,   /* a Python object (a py: probe's): its repr, as text */
};

struct capture_enumerator {
	int64_t value;
	char *name;
};

struct capture_desc {
	char *name;  /* as written ("req->hdr.size") */
	char *type;  /* its C type ("unsigned int", "struct req *") */
	enum capture_kind kind;
	uint32_t size; /* bytes of the value */
	struct capture_enumerator *enums; /* CAPTURE_ENUM */
	uint32_t nenums;
	/* Not read at this address: CAPTURE_OPTIMIZED_OUT or
	 * CAPTURE_UNAVAILABLE, else CAPTURE_OK. */
	uint8_t status;
	char why[96]; /* for an unreadable one: why, in words */
};

#endif
