/*
 * sluice/http.h - an HTTP endpoint that shows a running job's counters: /metrics in the
 * Prometheus text format, /api/metrics as JSON (engine/obs/http.c).
 *
 * It is served by libmicrohttpd on a thread of its own, never on a shard: requests only
 * read what the shards count for themselves, so a scrape costs the record path nothing.
 *
 * Threads: create, show and stop from one thread (the one running the jobs); requests are
 * answered on the endpoint's own thread meanwhile.
 */
#ifndef SLUICE_HTTP_H
#define SLUICE_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sl_job;
struct sl_http;

/*
 * Starts serving on `addr`: "PORT" or ":PORT" (then 127.0.0.1), "127.0.0.1:PORT",
 * "localhost:PORT", "[::1]:PORT", or any other numeric IPv4 or [IPv6] address, which is
 * served because it was asked for by name (0.0.0.0 included: say so to the user, see
 * sl_http_loopback). Port 0 takes a free one (sl_http_url tells which). Returns the
 * endpoint (free with sl_http_stop), or NULL with a one-line reason in err.
 */
struct sl_http *sl_http_start(const char *addr, char *err, size_t errlen);

/* Shows `job` (borrowed until the next sl_http_show or sl_http_stop; NULL: none) from now
 * on, running or not: its current run's counters, live while it runs and final after.
 * Waits for a request being answered to finish. */
void sl_http_show(struct sl_http *h, struct sl_job *job);

/* Writes "http://ADDR:PORT" of the bound socket into buf. Returns 0 or -ENOSPC. */
int sl_http_url(const struct sl_http *h, char *buf, size_t cap);

/* True when the endpoint listens on a loopback address only. */
bool sl_http_loopback(const struct sl_http *h);

/* Stops serving (answers in progress finish first) and frees h. Accepts NULL. */
void sl_http_stop(struct sl_http *h);

#ifdef __cplusplus
}
#endif

#endif
