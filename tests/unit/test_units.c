/* test_units.c - the strict quantity parser: valid and invalid strings. */
#include "check.h"
#include "core/core.h"

static double parse(const char *s, pf_unit_kind k) {
  double v = -1;
  int rc = pf_units_parse(s, k, &v);
  if (rc != 0) { fprintf(stderr, "unexpected failure on \"%s\": %s\n", s, pf_error_detail()); return -1; }
  return v;
}

static int fails(const char *s, pf_unit_kind k) {
  double v;
  return pf_units_parse(s, k, &v) == PF_EUNIT;
}

int main(void) {
  CHECK_NEAR(parse("200 Gbps", PF_UNIT_BANDWIDTH), 25e9, 1e-12);
  /* a finite number whose unit takes it past DBL_MAX (found by the long fuzz run: "2E302GB/s") */
  CHECK(fails("2E302GB/s", PF_UNIT_BANDWIDTH));
  CHECK(fails("1e300 PFLOPS", PF_UNIT_FLOPS));
  CHECK_NEAR(parse("200Gbps", PF_UNIT_BANDWIDTH), 25e9, 1e-12);
  CHECK_NEAR(parse("200 Gb/s", PF_UNIT_BANDWIDTH), 25e9, 1e-12);
  CHECK_NEAR(parse("1.6 TB/s", PF_UNIT_BANDWIDTH), 1.6e12, 1e-12);
  CHECK_NEAR(parse("25 GBps", PF_UNIT_BANDWIDTH), 25e9, 1e-12);
  CHECK_NEAR(parse("1 GiB/s", PF_UNIT_BANDWIDTH), 1073741824.0, 1e-12);
  CHECK_NEAR(parse("989 TFLOPS", PF_UNIT_FLOPS), 989e12, 1e-12);
  CHECK_NEAR(parse("989.4 TFLOP/s", PF_UNIT_FLOPS), 989.4e12, 1e-12);
  CHECK_NEAR(parse("312Tf", PF_UNIT_FLOPS), 312e12, 1e-12);
  CHECK_NEAR(parse("700 W", PF_UNIT_POWER), 700, 1e-12);
  CHECK_NEAR(parse("10.2 kW", PF_UNIT_POWER), 10200, 1e-12);
  CHECK_NEAR(parse("64 GiB", PF_UNIT_BYTES), 64.0 * 1024 * 1024 * 1024, 1e-12);
  CHECK_NEAR(parse("80 GB", PF_UNIT_BYTES), 80e9, 1e-12);
  CHECK_NEAR(parse("50 MiB", PF_UNIT_BYTES), 50.0 * 1024 * 1024, 1e-12);
  CHECK_NEAR(parse("8 Gb", PF_UNIT_BYTES), 1e9, 1e-12);
  CHECK_NEAR(parse("1.5 us", PF_UNIT_TIME), 1.5e-6, 1e-12);
  CHECK_NEAR(parse("1.5 \xc2\xb5s", PF_UNIT_TIME), 1.5e-6, 1e-12);
  CHECK_NEAR(parse("130 ns", PF_UNIT_TIME), 130e-9, 1e-12);
  CHECK_NEAR(parse("2 ms", PF_UNIT_TIME), 2e-3, 1e-12);
  CHECK_NEAR(parse("3 min", PF_UNIT_TIME), 180, 1e-12);
  CHECK_NEAR(parse("1 h", PF_UNIT_TIME), 3600, 1e-12);
  CHECK_NEAR(parse("2 kWh", PF_UNIT_ENERGY), 7.2e6, 1e-12);
  CHECK_NEAR(parse("1.41 GHz", PF_UNIT_FREQUENCY), 1.41e9, 1e-12);
  CHECK_NEAR(parse("  1e3 W ", PF_UNIT_POWER), 1000, 1e-12);
  CHECK_NEAR(parse("0.5", PF_UNIT_NONE), 0.5, 1e-12);

  CHECK(fails("", PF_UNIT_BANDWIDTH));
  CHECK(fails("fast", PF_UNIT_BANDWIDTH));
  CHECK(fails("200", PF_UNIT_BANDWIDTH));          /* unit required */
  CHECK(fails("200 Gbpsx", PF_UNIT_BANDWIDTH));
  CHECK(fails("200 G", PF_UNIT_BANDWIDTH));
  CHECK(fails("200 GB", PF_UNIT_BANDWIDTH));       /* a size is not a bandwidth */
  CHECK(fails("700 W", PF_UNIT_BYTES));
  CHECK(fails("0x10 GB", PF_UNIT_BYTES));
  CHECK(fails("inf W", PF_UNIT_POWER));
  CHECK(fails("nan W", PF_UNIT_POWER));
  CHECK(fails("1e999 W", PF_UNIT_POWER));
  CHECK(fails("5 W", PF_UNIT_NONE));
  CHECK(fails("64  GiB", PF_UNIT_BYTES));          /* one blank at most */
  CHECK(fails("1 mB", PF_UNIT_BYTES));             /* no milli-bytes */
  CHECK(fails(NULL, PF_UNIT_BYTES));
  /* the message names the string and the expected kind */
  double v;
  pf_units_parse("200 Gbpsx", PF_UNIT_BANDWIDTH, &v);
  CHECK(strstr(pf_error_detail(), "200 Gbpsx") != NULL);
  CHECK(strstr(pf_error_detail(), "bandwidth") != NULL);
  return pf_check_done();
}
