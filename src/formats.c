#define _GNU_SOURCE
#include "formats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrometrace.h"
#include "filebuf.h"
#include "folded.h"
#include "nflx.h"
#include "outfile.h"
#include "perfscript.h"
#include "pprof.h"
#include "recording.h"
#include "speedscope.h"
#include "util.h"

static const struct {
	enum format f;
	const char *name, *alias;
} names[] = {
	{FORMAT_RECORDING, "sonde", "recording"}, {FORMAT_PERF_SCRIPT, "perf-script", "perf"},
	{FORMAT_FOLDED, "folded", "collapsed"},   {FORMAT_PPROF, "pprof", NULL},
	{FORMAT_NFLX, "nflx", "nflxprofile"},     {FORMAT_SPEEDSCOPE, "speedscope", NULL},
	{FORMAT_CHROME, "chrome", "perfetto"},
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

const char *format_name(enum format f)
{
	for (size_t i = 0; i < NNAMES; i++)
		if (names[i].f == f)
			return names[i].name;
	return "unknown";
}

enum format format_parse(const char *name)
{
	for (size_t i = 0; i < NNAMES; i++)
		if (!strcmp(name, names[i].name) || (names[i].alias && !strcmp(name, names[i].alias)))
			return names[i].f;
	return FORMAT_UNKNOWN;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

enum format format_from_output_name(const char *path)
{
	static const struct {
		const char *suffix;
		enum format f;
	} by_suffix[] = {
		{".sonde", FORMAT_RECORDING},       {".folded", FORMAT_FOLDED},
		{".collapsed", FORMAT_FOLDED},      {".pb.gz", FORMAT_PPROF},
		{".pprof", FORMAT_PPROF},           {".pb", FORMAT_PPROF},
		{".nflx", FORMAT_NFLX},             {".nflxprofile", FORMAT_NFLX},
		{".speedscope.json", FORMAT_SPEEDSCOPE}, {".trace.json", FORMAT_CHROME},
		{".chrome.json", FORMAT_CHROME},    {".perfetto.json", FORMAT_CHROME},
	};
	for (size_t i = 0; i < sizeof(by_suffix) / sizeof(by_suffix[0]); i++)
		if (ends_with(path, by_suffix[i].suffix))
			return by_suffix[i].f;
	return FORMAT_UNKNOWN;
}

static bool is_sqlite(const struct filebuf *b)
{
	return b->len >= 16 && memcmp(b->data, "SQLite format 3", 16) == 0;
}

static enum format detect(const struct filebuf *b)
{
	if (is_sqlite(b))
		return FORMAT_RECORDING;
	const char *text = (const char *)b->data;
	if (perfscript_detect(text, b->len))
		return FORMAT_PERF_SCRIPT;
	if (folded_detect(text, b->len))
		return FORMAT_FOLDED;
	if (nflx_detect(b->data, b->len))
		return FORMAT_NFLX;
	if (pprof_detect(b->data, b->len))
		return FORMAT_PPROF;
	return FORMAT_UNKNOWN;
}

static struct profile *parse(const char *path, const struct filebuf *b, enum format f,
			     char *err, size_t errlen)
{
	char inner[512];
	struct profile *p = NULL;
	switch (f) {
	case FORMAT_RECORDING:
		if (strcmp(path, "-") == 0) {
			snprintf(err, errlen, "a recording cannot be read from standard input: give "
					      "its file name");
			return NULL;
		}
		return recording_load(path, err, errlen);
	case FORMAT_PERF_SCRIPT:
		p = perfscript_read((const char *)b->data, b->len, inner, sizeof(inner));
		break;
	case FORMAT_FOLDED:
		p = folded_read((const char *)b->data, b->len, inner, sizeof(inner));
		break;
	case FORMAT_PPROF:
		p = pprof_read(b->data, b->len, inner, sizeof(inner));
		break;
	case FORMAT_NFLX:
		p = nflx_read(b->data, b->len, inner, sizeof(inner));
		break;
	default:
		snprintf(err, errlen, "sonde cannot read %s files (%s)", format_name(f), path);
		return NULL;
	}
	if (!p)
		snprintf(err, errlen, "%s: not a valid %s file: %s", path, format_name(f), inner);
	return p;
}

struct profile *formats_load(const char *path, enum format forced, enum format *detected,
			     char *err, size_t errlen)
{
	struct filebuf b;
	if (filebuf_read(path, &b, err, errlen))
		return NULL;
	enum format f = forced ? forced : detect(&b);
	if (detected)
		*detected = f;
	struct profile *p = NULL;
	if (f == FORMAT_UNKNOWN)
		snprintf(err, errlen,
			 "%s: unrecognized format (sonde reads sonde recordings, perf script, folded "
			 "stacks, pprof and nflxprofile; force one with --from)",
			 path);
	else if (f == FORMAT_RECORDING && b.was_gzip)
		snprintf(err, errlen, "%s: a gzipped recording: gunzip it first", path);
	else
		p = parse(path, &b, f, err, errlen);
	filebuf_free(&b);
	return p;
}

static int write_folded(FILE *f, struct profile *p, const struct folded_modes *m)
{
	enum flame_root root = m->tid ? FLAME_ROOT_TID : m->pid ? FLAME_ROOT_PID : FLAME_ROOT_COMM;
	struct flame_tree *t = profile_flame(p, NULL, root);
	unsigned kinds = FOLDED_ANNOTATE_INLINED;
	if (m->kernel)
		kinds |= FOLDED_ANNOTATE_KERNEL;
	if (m->jit)
		kinds |= FOLDED_ANNOTATE_JIT;
	int rc = folded_write_kinds(f, t, kinds);
	flame_free(t);
	return rc;
}

static int write_profile(FILE *f, struct profile *p, enum format to, const char *in,
			 const struct folded_modes *m)
{
	switch (to) {
	case FORMAT_FOLDED:
		return write_folded(f, p, m);
	case FORMAT_PPROF:
		return pprof_write(f, p, NULL);
	case FORMAT_NFLX:
		return nflx_write(f, p);
	case FORMAT_SPEEDSCOPE:
		return speedscope_write(f, p, in);
	case FORMAT_CHROME:
		return chrometrace_write(f, p);
	default:
		return -1;
	}
}

/* perf script -> folded keeps stackcollapse-perf.pl's exact rules. */
static int collapse_perf(const char *in, const struct filebuf *b, FILE *out,
			 const struct folded_modes *m, char *err, size_t errlen)
{
	struct collapse_options o = {
		.pid = m->pid, .tid = m->tid, .kernel = m->kernel, .jit = m->jit, .addrs = m->addrs,
		.event = m->event,
	};
	char inner[512];
	int rc = perfscript_collapse((const char *)b->data, b->len, &o, out, inner, sizeof(inner));
	if (rc)
		snprintf(err, errlen, "%s: %s", in, inner);
	return rc;
}

/* The input is read once (it may be standard input). */
int formats_convert(const char *in, enum format from, const char *out, enum format to,
		    const struct folded_modes *modes, char *err, size_t errlen)
{
	static const struct folded_modes none = {0};
	if (!modes)
		modes = &none;
	struct filebuf b;
	if (filebuf_read(in, &b, err, errlen))
		return -1;
	enum format f = from ? from : detect(&b);
	bool collapse = f == FORMAT_PERF_SCRIPT && to == FORMAT_FOLDED;
	struct profile *p = NULL;
	int rc = -1;
	if (f == FORMAT_UNKNOWN)
		snprintf(err, errlen,
			 "%s: unrecognized format (sonde reads sonde recordings, perf script, folded "
			 "stacks, pprof and nflxprofile; force one with --from)",
			 in);
	else if (!collapse)
		p = parse(in, &b, f, err, errlen);
	if (!collapse && !p)
		goto out;
	/* Other formats cannot tell sonde's own samples apart: leave them out,
	 * as every view does. A recording keeps everything. */
	if (p && to != FORMAT_RECORDING && !modes->show_overhead)
		profile_drop_overhead(p);
	if (to == FORMAT_RECORDING) {
		rc = recording_save(p, out, err, errlen);
		goto out;
	}
	struct outfile o;
	if (outfile_open(&o, out, err, errlen))
		goto out;
	errno = 0;
	rc = collapse ? collapse_perf(in, &b, o.f, modes, err, errlen)
		      : write_profile(o.f, p, to, in, modes);
	if (rc) {
		/* errno tells why when the stream failed (a full disk), or when the
		 * counts do not fit the format. */
		int e = errno;
		if (*err) {
			/* the writer said why */
		} else if (ferror(o.f)) {
			snprintf(err, errlen, "writing %s failed%s%s", out, e ? ": " : "",
				 e ? strerror(e) : "");
		} else if (e == EOVERFLOW) {
			snprintf(err, errlen,
				 "cannot write %s: the sample weights in nanoseconds (weight x "
				 "sampling interval) are more than %s can hold",
				 out, format_name(to));
		} else {
			snprintf(err, errlen, "writing %s failed", out);
		}
		outfile_abort(&o);
	} else {
		rc = outfile_commit(&o, err, errlen);
	}
out:
	profile_free(p);
	filebuf_free(&b);
	return rc;
}
