/*
 * demos.h - the built-in jobs `sluice demo NAME` runs; each needs no outside service.
 */
#ifndef SL_CLI_DEMOS_H
#define SL_CLI_DEMOS_H

#include <stdint.h>

#include <sluice/job.h>

struct sl_demo_opts {
	int64_t rows; /* generated records */
	int64_t rate; /* records per second, 0 = unthrottled */
};

struct sl_demo;

/* The PyFlink lesson's clicks per user per minute: datagen clicks with bounded disorder and some
 * very late ones, key_by user, tumbling 1-minute event-time COUNT, late clicks to a side output,
 * both printed as changelogs. Returns NULL on ENOMEM. */
struct sl_demo *sl_demo_clicks_create(const struct sl_demo_opts *opts);
struct sl_job *sl_demo_job(struct sl_demo *d);
void sl_demo_destroy(struct sl_demo *d);

#endif
