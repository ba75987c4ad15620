/* coll_toy.h - the toy collective algorithm of tests/plugin_coll (coll_toy.c). */
#ifndef PF_TEST_COLL_TOY_H
#define PF_TEST_COLL_TOY_H

#include "comm/comm.h"

extern const pf_coll_algo_desc pf_coll_algo_toy;

#endif
