/* units.h - strict parsing and printing of quantities with unit suffixes.
 *
 * Configuration files and options carry units ("200 Gbps", "1.6 TB/s",
 * "989 TFLOPS", "700 W", "64 GiB", "1.5 us").  Inside, everything is an SI
 * double: s, B, B/s, FLOP, FLOP/s, W, J, Hz.  SI prefixes (k M G T P E) are
 * powers of 1000, IEC prefixes (Ki Mi Gi Ti Pi) powers of 1024.  A lower-case
 * 'b' means bits, upper-case 'B' bytes; "bps" is bits per second.
 */
#ifndef PREFLIGHT_UNITS_H
#define PREFLIGHT_UNITS_H

typedef enum {
  PF_UNIT_NONE,      /* plain number, no suffix allowed */
  PF_UNIT_BYTES,     /* B, kB, MB, GB, TB, KiB, MiB, GiB, TiB (bits: Gb -> /8) */
  PF_UNIT_BANDWIDTH, /* B/s, GB/s, GiB/s, Gbps, Gb/s, GBps */
  PF_UNIT_FLOPS,     /* FLOPS, FLOP/s, TFLOPS, TFLOP/s, Tf */
  PF_UNIT_POWER,     /* W, kW, MW */
  PF_UNIT_TIME,      /* s, ms, us, µs, ns, min, h */
  PF_UNIT_ENERGY,    /* J, kJ, MJ, Wh, kWh, MWh */
  PF_UNIT_FREQUENCY, /* Hz, MHz, GHz */
} pf_unit_kind;

/* Parse s as a quantity of the given kind into SI *out.  Leading/trailing
 * blanks and one blank between number and unit are allowed; nothing else.
 * Returns 0, or PF_EUNIT with a detail naming the string and the expected
 * units. */
int pf_units_parse(const char *s, pf_unit_kind kind, double *out);

/* Name of a kind for messages ("bandwidth"); static string. */
const char *pf_unit_kind_name(pf_unit_kind kind);

#endif
