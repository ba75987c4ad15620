/* test_validate_robust.c - the CSV, validation-row and Megatron-log parsers
 * never crash on damaged input: seeded random mutations (byte flips, cuts,
 * inserted quotes, commas and newlines) of valid files either parse or fail
 * with PF_EPARSE / PF_ENOENT / PF_EINVAL and a message naming the file.
 * Deterministic (fixed seed); run under the sanitizer build in CI. */
#include "check.h"

#include "core/core.h"
#include "study/study.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next(void) { /* xorshift64* */
  rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
  return (uint32_t)((rng * 0x2545F4914F6CDD1Dull) >> 32);
}

static char *mutate(const char *src, size_t len, size_t *outlen) {
  static const char pool[] = ",\"\n\r#.-e0123456789 |/:()x\0";
  char *b = malloc(len + 64);
  memcpy(b, src, len);
  size_t n = len;
  int k = 1 + (int)(next() % 6);
  for (int j = 0; j < k && n > 0; j++) {
    size_t at = next() % n;
    switch (next() % 4) {
    case 0: b[at] = pool[next() % (sizeof pool - 1)]; break;          /* replace */
    case 1: if (n < len + 60) { memmove(b + at + 1, b + at, n - at); b[at] = pool[next() % (sizeof pool - 1)]; n++; } break;
    case 2: memmove(b + at, b + at + 1, n - at - 1); n--; break;      /* delete */
    case 3: n = at; break;                                           /* truncate */
    }
  }
  *outlen = n;
  return b;
}

static const char *csv_text =
    "# header comment\n"
    "machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,"
    "schedule,metric,value,unit,baseline_nodes,source,notes,bound,value_hi,scaling,grad_accum,scope,iterations,use,tag\n"
    "juwels-booster,gpt3-1.3b,,,,,,2,,2,1,,4,256,bf16,true,false,none,1f1b,tflops_per_gpu,100,TFLOP/s,,doc:1,\"a, b\","
    ",,,,,,fit,x\n"
    "lumi-g,gpt-857m,,,,,,32,,1,1,,1,512,fp16,,,,,scaling_efficiency,75,%,1,doc:2,,range,80,strong,,,,check,y\n"
    "e4-a2,,,,,,,1,1,1,1,,32,32,fp32,,,,,energy_J,5,Wh,,doc:3,,,,,,gpu_job,,,\n";

static const char *log_text =
    "------------------------ arguments ------------------------\n"
    "  tensor_model_parallel_size ...................... 4\n"
    "  num_layers ...................................... 32\n"
    "-------------------- end of arguments ---------------------\n"
    " [2026-01-01] iteration       10/     100 | consumed samples: 5120 | elapsed time per iteration (ms): 900.0 | "
    "throughput per GPU (TFLOP/s/GPU): 80.0 | energy per GPU (J/iter/GPU): 300.0 | power per GPU (W/GPU): 333.3 |\n"
    " iteration       20/     100 | elapsed time per iteration (s): 1.2 | TFLOPs: 150.0 | global batch size: 512 |\n";

int main(void) {
  int ok_csv = 0, ok_log = 0;
  for (int t = 0; t < 3000; t++) {
    size_t n;
    char *b = mutate(csv_text, strlen(csv_text), &n);
    pf_csv csv;
    int rc = pf_csv_parse(b, n, "fuzz.csv", &csv);
    if (rc == 0) {
      pf_vset s;
      rc = pf_validate_parse(&csv, &s);
      if (rc == 0) { ok_csv++; pf_vset_free(&s); }
      pf_csv_free(&csv);
    }
    CHECK(rc == 0 || rc == PF_EPARSE || rc == PF_ENOENT || rc == PF_EINVAL);
    if (rc < 0) CHECK(strstr(pf_error_detail(), "fuzz.csv") != NULL || strstr(pf_error_detail(), "machine") != NULL);
    free(b);

    b = mutate(log_text, strlen(log_text), &n);
    pf_megatron_log *l = malloc(sizeof *l);
    rc = pf_megatron_parse(b, n, "fuzz.log", l);
    CHECK(rc == 0 || rc == PF_EPARSE);
    if (rc == 0) { ok_log++; CHECK(l->niter >= 1 && l->med_time_s > 0); pf_megatron_free(l); }
    else CHECK(strstr(pf_error_detail(), "fuzz.log:") != NULL);
    free(l);
    free(b);
  }
  /* some mutations keep the files valid: the loop exercised both paths */
  CHECK(ok_csv > 0 && ok_csv < 3000);
  CHECK(ok_log > 0 && ok_log < 3000);
  return pf_check_done();
}
