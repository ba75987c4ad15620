/* io/io.h - the public header of module io: file formats shared by the study and output layers: the strict CSV reader, the JSON documents' common root, SVG charts.
 * Other modules include this file only (docs/architecture.md). */
#ifndef PREFLIGHT_IO_MODULE_H
#define PREFLIGHT_IO_MODULE_H

#include "csv.h"
#include "json.h"
#include "plot.h"

#endif
