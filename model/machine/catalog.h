/* catalog.h - internal: machine and device files found by id or path
 * (catalog.c), for the device reader (device.c) and the machine reader
 * (machine.c). */
#ifndef PREFLIGHT_CATALOG_H
#define PREFLIGHT_CATALOG_H

#include "cfgread.h"

/* Resolve a device ("device") or machine ("machine") by id or path, parse the
 * file with `read`, and check that the id inside equals the file name when it
 * was named by id.  `id` points at the id field `read` fills in. */
int pf_catalog_load(const char *id_or_path, const char *what, pf_cfg_read_fn read, void *out, const char *id);

#endif
