/* cmdargs — the parsers of the commands' arguments. Each takes the words
 * of a line (w->w[0] is the command's name, already found in the table,
 * cmdtable.h) and fills *c: 0, or -1 with one line in err that says what is
 * wrong and shows the right usage (ci->example). */
#ifndef SONDE_CMDARGS_H
#define SONDE_CMDARGS_H

#include <stddef.h>

#include "cmdwords.h"
#include "command.h"

struct command_info;
typedef int (*command_parser)(const struct command_info *ci, const struct words *w,
			      struct command *c, char *err, size_t errlen);

struct command_info {
	const char *name;
	enum command_kind kind;  /* the main kind; parsers pick variants */
	command_parser parse;
	const char *argname;     /* of a one-word argument: "FUNC", "FILE" */
	const char *synopsis;    /* in the list of all commands */
	const char *summary;     /* ditto */
	const char *takes;       /* what its arguments are; NULL: none */
	const char *example;     /* the right usage, shown with errors */
	const char *detail;      /* help COMMAND: after "usage:" + synopsis */
};

/* "NAME needs TAKES: EXAMPLE" and "too many words for NAME ...": -1. */
int need_args(const struct command_info *ci, char *err, size_t errlen);
int too_many(const struct command_info *ci, char *err, size_t errlen);

/* A FUNC/EVENT/NAME/FILE word (what it is: what) into c->arg. */
int take_arg(const struct command_info *ci, const char *what, const char *word,
	     struct command *c, char *err, size_t errlen);

int parse_one_arg(const struct command_info *ci, const struct words *w, struct command *c,
		  char *err, size_t errlen); /* trace, untrace, in, save: one word */
int parse_trace(const struct command_info *ci, const struct words *w, struct command *c,
		char *err, size_t errlen);
int parse_no_arg(const struct command_info *ci, const struct words *w, struct command *c,
		 char *err, size_t errlen); /* all, reset, status */
int parse_sample(const struct command_info *ci, const struct words *w, struct command *c,
		 char *err, size_t errlen);
int parse_sample_in(const struct command_info *ci, const struct words *w, struct command *c,
		    char *err, size_t errlen);
int parse_sample_when(const struct command_info *ci, const struct words *w, struct command *c,
		      char *err, size_t errlen);
int parse_untrace(const struct command_info *ci, const struct words *w, struct command *c,
		  char *err, size_t errlen);
int parse_sample_slow(const struct command_info *ci, const struct words *w, struct command *c,
		      char *err, size_t errlen);
int parse_view(const struct command_info *ci, const struct words *w, struct command *c,
	       char *err, size_t errlen); /* slow, fast */
int parse_span(const struct command_info *ci, const struct words *w, struct command *c,
	       char *err, size_t errlen); /* window, ewma */
int parse_filter(const struct command_info *ci, const struct words *w, struct command *c,
		 char *err, size_t errlen);

#endif
