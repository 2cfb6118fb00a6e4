/* demangle — C++ and Rust linkage names as people read them.
 *
 * libiberty's demangler (binutils' and GCC's: Itanium C++, Rust's legacy
 * and v0 manglings) does the work. A name that is not mangled, or that the
 * demangler refuses, has no demangled form (NULL): callers keep it as it
 * is. Results are malloc'd. */
#ifndef SONDE_DEMANGLE_H
#define SONDE_DEMANGLE_H

#include <stdbool.h>

/* Whether a name is mangled, as far as its prefix tells ("_Z", "_R",
 * "__Z"): the cheap test before demangling. */
bool demangle_looks_mangled(const char *name);

/* The name profilers show: scopes and template arguments, no parameters,
 * qualifiers or clone suffixes ("shop::Cart::total" for
 * _ZNK4shop4Cart5totalEi, "shapes::Sorter::crunch" for its .isra.0
 * clone, "core::fmt::write" without Rust's hash; a method of a Rust
 * inherent impl "crate::Type::method" in both manglings, where v0's
 * demangler says "<crate::Type>::method"). NULL when not mangled. */
char *demangle_short(const char *name);

/* The whole signature, as `addr2line -C` and `c++filt` print it
 * ("shop::Cart::total(int) const", "... [clone .isra.0]"). NULL when not
 * mangled. */
char *demangle_full(const char *name);

#endif
