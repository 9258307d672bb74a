/*
 * http.c - the HTTP endpoint (sluice/http.h): libmicrohttpd serves, on its own internal
 * thread, GET /metrics (Prometheus text), /api/metrics (the counters as JSON), /api/status
 * (the counters, every split and why windows wait, as JSON), /api/status.txt (the same as
 * `sluice status --why` prints it) and / (the status page, page.html compiled in).
 *
 * Invariants:
 *   - nothing here runs on a shard, and no shard ever waits for it: a request copies the
 *     counters through the observer handshake (snapshot.c, runtime/observe.c) and formats
 *     the copy afterwards;
 *   - the shown job is only dereferenced under `lock`, which sl_http_show also takes, so
 *     the running thread can swap or drop the job (then destroy it) safely; the lock is
 *     taken by the running thread and the endpoint's thread only, never by a shard;
 *   - only GET and HEAD; everything is read-only.
 *
 * Cost: a scrape is O(operators x shards + shards^2 channels) loads and lines, on a thread
 * the shards do not share a lock with.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include <sluice/http.h>

#include "page.h"
#include "snapshot.h"

struct sl_http {
	struct MHD_Daemon *d;
	pthread_mutex_t lock;	    /* guards job (running thread and MHD's thread) */
	struct sl_job *job;	    /* shown, borrowed; NULL: none */
	struct sockaddr_storage sa; /* the bound address (port filled in) */
	bool loopback;
	struct sl_obs_prev prev; /* rates between requests (under lock) */
};

static const char *const PROM_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/* Parses addr (see sl_http_start) into sa. 0 or -EINVAL with err set. */
static int parse_addr(const char *addr, struct sockaddr_storage *sa, char *err, size_t errlen)
{
	char host[64] = "127.0.0.1";
	const char *colon = strrchr(addr, ':');
	const char *port_s = colon ? colon + 1 : addr;
	char *end;
	long port = strtol(port_s, &end, 10);

	memset(sa, 0, sizeof(*sa));
	if (!*port_s || *end || port < 0 || port > 65535)
		goto bad;
	if (colon && colon > addr) {
		size_t n = (size_t)(colon - addr);

		if (addr[0] == '[' && colon[-1] == ']') {
			addr++;
			n -= 2;
		}
		if (n == 0 || n >= sizeof host)
			goto bad;
		memcpy(host, addr, n);
		host[n] = 0;
	}
	if (!strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;

	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		return 0;
	}
bad:
	snprintf(err, errlen,
		 "--http '%s': expected [ADDR:]PORT with a numeric address, e.g. "
		 "127.0.0.1:8081 or [::1]:8081",
		 addr);
	return -EINVAL;
}

static bool is_loopback(const struct sockaddr_storage *sa)
{
	if (sa->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type,
			     char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result rc;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* A body compiled into the binary (the page): served as it is, never freed. */
static enum MHD_Result reply_static(struct MHD_Connection *conn, const char *type,
				    const unsigned char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result rc;

	r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	rc = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned status, const char *s)
{
	char *body = strdup(s);

	return body ? reply(conn, status, "text/plain; charset=utf-8", body, strlen(body)) : MHD_NO;
}

static void render_text_why(const struct sl_obs_snap *s, struct sl_obs_buf *b)
{
	sl_obs_render_text(s, true, b);
}

/* Renders the shown job's counters with `render` into a new body; `detail` asks the
 * shards for their splits and waiting windows too (snapshot.c). */
static enum MHD_Result serve(struct sl_http *h, struct MHD_Connection *conn, const char *type,
			     bool detail,
			     void (*render)(const struct sl_obs_snap *, struct sl_obs_buf *))
{
	struct sl_obs_buf b = { 0 };
	struct sl_obs_snap snap;
	int rc = 0;

	pthread_mutex_lock(&h->lock);
	if (h->job)
		rc = sl_obs_snap_take(h->job, &snap, detail, &h->prev);
	else
		memset(&snap, 0, sizeof snap);
	if (!rc)
		render(&snap, &b);
	pthread_mutex_unlock(&h->lock);
	sl_obs_snap_fini(&snap);
	if (rc || b.oom) {
		free(b.p);
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	return reply(conn, MHD_HTTP_OK, type, b.p, b.len);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	static int headers_seen;
	struct sl_http *h = cls;

	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only: GET only\n");
	/* the first call has the headers only; answer on the second (MHD's convention) */
	if (!*con_cls) {
		*con_cls = &headers_seen;
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0; /* a GET body is ignored */
		return MHD_YES;
	}
	if (!strcmp(url, "/metrics"))
		return serve(h, conn, PROM_TYPE, true, sl_obs_render_prometheus);
	if (!strcmp(url, "/api/metrics"))
		return serve(h, conn, "application/json", false, sl_obs_render_json);
	if (!strcmp(url, "/api/status"))
		return serve(h, conn, "application/json", true, sl_obs_render_json);
	if (!strcmp(url, "/api/status.txt"))
		return serve(h, conn, "text/plain; charset=utf-8", true, render_text_why);
	if (!strcmp(url, "/"))
		return reply_static(conn, "text/html; charset=utf-8", sl_obs_page_html,
				    sl_obs_page_html_len);
	return reply_text(conn, MHD_HTTP_NOT_FOUND,
			  "not found: try /, /metrics, /api/metrics or /api/status\n");
}

struct sl_http *sl_http_start(const char *addr, char *err, size_t errlen)
{
	struct sl_http *h = calloc(1, sizeof(*h));
	const union MHD_DaemonInfo *info;
	socklen_t len;

	if (!h) {
		snprintf(err, errlen, "--http: out of memory");
		return NULL;
	}
	if (parse_addr(addr, &h->sa, err, errlen))
		goto out_free;
	h->loopback = is_loopback(&h->sa);
	pthread_mutex_init(&h->lock, NULL);
	h->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
					(h->sa.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				0, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR,
				(struct sockaddr *)&h->sa, MHD_OPTION_CONNECTION_LIMIT, 64u,
				MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errlen,
			 "--http '%s': cannot listen there (in use, or not an "
			 "address of this machine)",
			 addr);
		goto out_mutex;
	}
	/* the port really bound (port 0 asks for any free one) */
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_LISTEN_FD);
	len = sizeof h->sa;
	if (info && getsockname(info->listen_fd, (struct sockaddr *)&h->sa, &len) < 0)
		snprintf(err, errlen, "--http: %s", strerror(errno)); /* keeps the asked port */
	return h;

out_mutex:
	pthread_mutex_destroy(&h->lock);
out_free:
	free(h);
	return NULL;
}

void sl_http_show(struct sl_http *h, struct sl_job *job)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->job = job;
	pthread_mutex_unlock(&h->lock);
}

int sl_http_url(const struct sl_http *h, char *buf, size_t cap)
{
	char host[INET6_ADDRSTRLEN];
	int port, n;

	if (h->sa.ss_family == AF_INET6) {
		const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&h->sa;

		inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
		port = ntohs(v6->sin6_port);
		n = snprintf(buf, cap, "http://[%s]:%d", host, port);
	} else {
		const struct sockaddr_in *v4 = (const struct sockaddr_in *)&h->sa;

		inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
		port = ntohs(v4->sin_port);
		n = snprintf(buf, cap, "http://%s:%d", host, port);
	}
	return n < 0 || (size_t)n >= cap ? -ENOSPC : 0;
}

bool sl_http_loopback(const struct sl_http *h)
{
	return h->loopback;
}

void sl_http_stop(struct sl_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d); /* joins its thread: no request runs after this */
	sl_obs_prev_fini(&h->prev);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
