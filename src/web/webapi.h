/* webapi — the live session's endpoints on the HTTP server (http.h): the
 * same session, view engine and command language as `sonde top` and
 * `sonde ctl`, nothing computed twice. docs/http-api.md documents them:
 *
 *   GET  /api/status   the control socket's answer to `status`
 *   GET  /api/threads  the control socket's answer to `threads`: the last
 *                      pass of the thread-state sampler (`sample threads`),
 *                      the rows of `sonde threads` (threadtable.h)
 *   POST /api/command  one command line (the body) -> the control socket's
 *                      answer: {"ok":true,"text":...[,"data":...]} or
 *                      {"ok":false,"error":...} (status 200, or 400 for a
 *                      command refused or a body that is no command line)
 *   GET  /api/flame    the current view's flame tree, every node (a full
 *                      flamedelta.h message as "data")
 *   GET  /api/band?probe=F&min_ns=A&max_ns=B
 *                      the samples inside F's calls that lasted A..B ns and
 *                      those inside its other calls: two flame trees (full
 *                      flamedelta.h messages "in" and "out") for a diff, and
 *                      the window's calls in and outside the band
 *   GET  /api/sandwich?function=NAME
 *                      one function's callers (an inverted tree) and
 *                      callees over the current view (flame_sandwich), two
 *                      full flamedelta.h messages
 *   GET  /api/flamechart?span=ID
 *                      the flame chart of one call held (a slow call's
 *                      span_id): its samples in time order as boxes, laid
 *                      out as flamechart.h draws its SVG
 *   GET  /api/heatmap[?rows=N]
 *                      the subsecond heat map of every sample held, binned
 *                      by heatmap.h (as `sonde heatmap`): counts per cell
 *   GET  /api/range?from_ns=A&to_ns=B
 *                      the flame tree of the samples held from A to B ns
 *                      (both included, idle ones left out: a heat map
 *                      selection, as `sonde flame --range`)
 *   GET  /api/events   Server-Sent Events, every interval: `status` (as
 *                      /api/status's data; `status_delta`: a jsondelta.h
 *                      patch of the last one this client got), `flame`
 *                      (changes since the last one this client got,
 *                      flamedelta.h), `hot` (hottest functions;
 *                      `hot_delta` as `status_delta`), and `state` when
 *                      the session's state changes ({"state":"live"|"ended"})
 *
 * Every interval one view is built for all clients. A client too slow to
 * take its events gets, once it has room again, a full flame message and
 * the whole status and hot list instead of the changes it missed. */
#ifndef SONDE_WEBAPI_H
#define SONDE_WEBAPI_H

#include "http.h"
#include "liverun.h"

#define WEBAPI_HOT_MAX 50

struct webapi;

/* Registers the routes on s; events every interval_s seconds. */
struct webapi *webapi_new(struct liverun *r, struct http_server *s, double interval_s);

/* Where /api/explore looks for source files first (NULL: only where DWARF
 * says; the string is kept, not copied). */
void webapi_set_source_dir(struct webapi *a, const char *dir);

/* Closes nothing of r or s; call it after http_server_close (which ends the
 * streams). NULL is allowed. */
void webapi_free(struct webapi *a);

/* Sends the next events now (the session ended, a command changed the
 * view). */
void webapi_refresh_now(struct webapi *a);

/* Event streams open now. */
size_t webapi_clients(const struct webapi *a);

#endif
