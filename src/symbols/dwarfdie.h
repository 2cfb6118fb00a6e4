/* dwarfdie (private to symbols) — what a DWARF entry says of itself,
 * read with libdw: its type (followed through typedefs and qualifiers, its
 * size, its C spelling), the members of a struct or union, and the
 * variables a scope or a compile unit declares. Nothing here knows an
 * address or a probe: dwarfvar asks these questions of the entries it
 * finds at one. Private: its functions take libdw's Dwarf_Die, which no
 * header can name opaquely, so only the symbols layer includes it. */
#ifndef SONDE_DWARFDIE_H
#define SONDE_DWARFDIE_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The type entry die names (DW_AT_type) in *out; false for void. */
bool dwarfdie_type(Dwarf_Die *die, Dwarf_Die *out);

/* Follows *t through typedefs and qualifiers, in place. False for void
 * (or a chain too long to be a type). */
bool dwarfdie_strip(Dwarf_Die *t);

/* The size in bytes of type t (stripped first; 8 for a pointer or a
 * reference), 0 when unknown. */
uint64_t dwarfdie_type_size(Dwarf_Die *t);

/* Type t as C spells it ("const char *", "struct conn", "int[16]") in
 * buf; has false: void. depth: 0 (deeper types are shown as "..."). */
void dwarfdie_type_name(Dwarf_Die *t, bool has, char *buf, size_t size, int depth);

/* Whether t is a one-byte character type (signed or unsigned char). */
bool dwarfdie_is_char(Dwarf_Die *t);

/* Whether t is read as a machine integer: an integer, a character, a
 * boolean, an enumeration or a pointer of at most 8 bytes (not a float). */
bool dwarfdie_is_integer(Dwarf_Die *t);

/* Whether d has a location or a constant value (a definition, not an
 * extern declaration). */
bool dwarfdie_has_location(Dwarf_Die *d);

/* A variable or parameter named `name` among the children of scope. */
bool dwarfdie_find_in_scope(Dwarf_Die *scope, const char *name, Dwarf_Die *out);

/* A variable named `name` with a location among the children of a compile
 * unit. */
bool dwarfdie_find_definition(Dwarf_Die *cu, const char *name, Dwarf_Die *out);

/* The names of struct or union s's members, comma-separated ("none"). */
void dwarfdie_member_names(Dwarf_Die *s, char *buf, size_t size);

/* Member `name` of struct or union s, looked for in its anonymous members
 * too, in *out; its byte offset is added to *off. depth: 0. */
bool dwarfdie_find_member(Dwarf_Die *s, const char *name, Dwarf_Die *out, uint64_t *off,
			  int depth);

#endif
