/*
 * page.h - the status page (page.html), compiled into the binary by embed.py at build
 * time, so that / needs no file and no CDN: one self-contained HTML document whose script
 * reads /api/status once a second.
 */
#ifndef SL_OBS_PAGE_H
#define SL_OBS_PAGE_H

#include <stddef.h>

extern const unsigned char sl_obs_page_html[];
extern const size_t sl_obs_page_html_len;

#endif
