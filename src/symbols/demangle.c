/* demangle — the contract is in demangle.h. */
#include "demangle.h"

#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

bool demangle_looks_mangled(const char *name)
{
	return name && (strncmp(name, "_Z", 2) == 0 || strncmp(name, "__Z", 3) == 0 ||
			strncmp(name, "_R", 2) == 0);
}

static char *demangle_with(const char *name, int options)
{
	if (!demangle_looks_mangled(name))
		return NULL;
	/* DMGL_AUTO: the mangling is told from the name (C++ or Rust). */
	return cplus_demangle(name, DMGL_ANSI | DMGL_AUTO | options);
}

/* Rust's v0 mangling shows a method of an inherent impl as
 * "<crate::Type>::method", the legacy one as "crate::Type::method", the
 * way people write it: the brackets go when they hold a plain path (no
 * " as ": a trait impl keeps them). In place. */
static void unwrap_inherent_impl(char *name)
{
	if (name[0] != '<')
		return;
	int depth = 0;
	size_t i = 0;
	for (; name[i]; i++) {
		if (name[i] == '<')
			depth++;
		else if (name[i] == '>' && --depth == 0)
			break;
	}
	if (!name[i] || strncmp(name + i + 1, "::", 2) != 0)
		return;
	name[i] = 0;
	bool trait_impl = strstr(name, " as ") != NULL;
	name[i] = '>';
	if (trait_impl)
		return;
	memmove(name + i, name + i + 1, strlen(name + i + 1) + 1); /* the '>' */
	memmove(name, name + 1, strlen(name + 1) + 1);               /* the '<' */
}

char *demangle_short(const char *name)
{
	char *d = demangle_with(name, 0);
	if (d && strncmp(name, "_R", 2) == 0)
		unwrap_inherent_impl(d);
	return d;
}

char *demangle_full(const char *name)
{
	return demangle_with(name, DMGL_PARAMS);
}
