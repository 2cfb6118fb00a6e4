#include "dwarfdie.h"

#include <dwarf.h>
#include <stdio.h>
#include <string.h>

bool dwarfdie_type(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, out);
}

/* Follows typedefs and qualifiers. False for void. */
bool dwarfdie_strip(Dwarf_Die *t)
{
	for (int i = 0; i < 32; i++) {
		int tag = dwarf_tag(t);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
		    tag != DW_TAG_restrict_type && tag != DW_TAG_atomic_type)
			return true;
		if (!dwarfdie_type(t, t))
			return false;
	}
	return false;
}

uint64_t dwarfdie_type_size(Dwarf_Die *t)
{
	Dwarf_Die s = *t;
	if (!dwarfdie_strip(&s))
		return 0;
	Dwarf_Word size;
	if (dwarf_aggregate_size(&s, &size) == 0)
		return size;
	int tag = dwarf_tag(&s);
	return tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ? 8 : 0;
}

void dwarfdie_type_name(Dwarf_Die *t, bool has, char *buf, size_t size, int depth)
{
	if (!has) {
		snprintf(buf, size, "void");
		return;
	}
	if (depth > 16) {
		snprintf(buf, size, "...");
		return;
	}
	const char *name = dwarf_diename(t);
	Dwarf_Die inner;
	bool hi = dwarfdie_type(t, &inner);
	char sub[256];
	switch (dwarf_tag(t)) {
	case DW_TAG_pointer_type:
		dwarfdie_type_name(&inner, hi, sub, sizeof(sub), depth + 1);
		snprintf(buf, size, "%s *", sub);
		return;
	case DW_TAG_const_type:
		dwarfdie_type_name(&inner, hi, sub, sizeof(sub), depth + 1);
		/* const T[N] is an array of const T: say const once; a const
		 * pointer is T *const. */
		if (hi && dwarf_tag(&inner) == DW_TAG_pointer_type)
			snprintf(buf, size, "%sconst", sub);
		else
			snprintf(buf, size, "%s%s", strncmp(sub, "const ", 6) ? "const " : "", sub);
		return;
	case DW_TAG_volatile_type:
		dwarfdie_type_name(&inner, hi, sub, sizeof(sub), depth + 1);
		snprintf(buf, size, "volatile %s", sub);
		return;
	case DW_TAG_structure_type:
		snprintf(buf, size, "struct %s", name ? name : "{...}");
		return;
	case DW_TAG_union_type:
		snprintf(buf, size, "union %s", name ? name : "{...}");
		return;
	case DW_TAG_enumeration_type:
		snprintf(buf, size, "enum %s", name ? name : "{...}");
		return;
	case DW_TAG_array_type: {
		dwarfdie_type_name(&inner, hi, sub, sizeof(sub), depth + 1);
		Dwarf_Word total = 0, elem = hi ? dwarfdie_type_size(&inner) : 0;
		if (dwarf_aggregate_size(t, &total) == 0 && elem)
			snprintf(buf, size, "%s[%llu]", sub, (unsigned long long)(total / elem));
		else
			snprintf(buf, size, "%s[]", sub);
		return;
	}
	case DW_TAG_subroutine_type:
		snprintf(buf, size, "function");
		return;
	default:
		snprintf(buf, size, "%s", name ? name : "?");
	}
}

bool dwarfdie_is_char(Dwarf_Die *t)
{
	Dwarf_Die s = *t;
	if (!dwarfdie_strip(&s) || dwarf_tag(&s) != DW_TAG_base_type)
		return false;
	Dwarf_Attribute a;
	Dwarf_Word enc = 0;
	if (dwarf_attr(&s, DW_AT_encoding, &a))
		dwarf_formudata(&a, &enc);
	return (enc == DW_ATE_signed_char || enc == DW_ATE_unsigned_char) && dwarfdie_type_size(&s) == 1;
}

bool dwarfdie_has_location(Dwarf_Die *d)
{
	return dwarf_hasattr_integrate(d, DW_AT_location) || dwarf_hasattr_integrate(d, DW_AT_const_value);
}

/* A variable named `name` among the children of `scope`. */
bool dwarfdie_find_in_scope(Dwarf_Die *scope, const char *name, Dwarf_Die *out)
{
	Dwarf_Die child;
	if (dwarf_child(scope, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);
		if (tag != DW_TAG_variable && tag != DW_TAG_formal_parameter)
			continue;
		const char *n = dwarf_diename(&child);
		if (n && strcmp(n, name) == 0) {
			*out = child;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* A variable named `name` with a location (a definition, not an extern
 * declaration) among the children of a compile unit. */
bool dwarfdie_find_definition(Dwarf_Die *cu, const char *name, Dwarf_Die *out)
{
	Dwarf_Die child;
	if (dwarf_child(cu, &child) != 0)
		return false;
	do {
		const char *n;
		if (dwarf_tag(&child) == DW_TAG_variable && (n = dwarf_diename(&child)) &&
		    strcmp(n, name) == 0 && dwarfdie_has_location(&child)) {
			*out = child;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

bool dwarfdie_is_integer(Dwarf_Die *type)
{
	Dwarf_Die t = *type;
	if (!dwarfdie_strip(&t))
		return false;
	int tag = dwarf_tag(&t);
	if (tag == DW_TAG_pointer_type || tag == DW_TAG_enumeration_type)
		return true;
	if (tag != DW_TAG_base_type || dwarfdie_type_size(&t) > 8)
		return false;
	Dwarf_Attribute a;
	Dwarf_Word enc = 0;
	if (dwarf_attr(&t, DW_AT_encoding, &a))
		dwarf_formudata(&a, &enc);
	return enc != DW_ATE_float && enc != DW_ATE_complex_float;
}

void dwarfdie_member_names(Dwarf_Die *s, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = 0;
	Dwarf_Die m;
	if (dwarf_child(s, &m) == 0) {
		do {
			const char *n = dwarf_diename(&m);
			if (dwarf_tag(&m) == DW_TAG_member && n && len + strlen(n) + 8 < size)
				len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", n);
		} while (dwarf_siblingof(&m, &m) == 0);
	}
	if (!len)
		snprintf(buf, size, "none");
}

/* Finds member `name` of struct/union s (in anonymous members too); its
 * byte offset is added to *off. */
bool dwarfdie_find_member(Dwarf_Die *s, const char *name, Dwarf_Die *out, uint64_t *off,
			  int depth)
{
	Dwarf_Die m;
	if (depth > 8 || dwarf_child(s, &m) != 0)
		return false;
	do {
		if (dwarf_tag(&m) != DW_TAG_member)
			continue;
		Dwarf_Attribute a;
		Dwarf_Word moff = 0;
		if (dwarf_attr(&m, DW_AT_data_member_location, &a))
			dwarf_formudata(&a, &moff);
		const char *n = dwarf_diename(&m);
		if (n && strcmp(n, name) == 0) {
			*out = m;
			*off += moff;
			return true;
		}
		Dwarf_Die t;
		if (!n && dwarfdie_type(&m, &t) && dwarfdie_strip(&t) &&
		    (dwarf_tag(&t) == DW_TAG_structure_type || dwarf_tag(&t) == DW_TAG_union_type)) {
			uint64_t o = *off + moff;
			if (dwarfdie_find_member(&t, name, out, &o, depth + 1)) {
				*off = o;
				return true;
			}
		}
	} while (dwarf_siblingof(&m, &m) == 0);
	return false;
}

