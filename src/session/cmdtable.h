/* cmdtable — the table of the commands (name, parser, usage, help) and
 * lookups in it. command_help (command.h) prints from it. */
#ifndef SONDE_CMDTABLE_H
#define SONDE_CMDTABLE_H

#include <stddef.h>

#include "cmdargs.h"

/* The command named name (exactly), or NULL. */
const struct command_info *info_find(const char *name);

/* The command name a mistyped word most likely meant, or NULL. */
const char *suggest_command(const char *word);

/* "trace, untrace, ...": every command's name, into buf (cut to size). */
void command_list(char *buf, size_t size);

#endif
