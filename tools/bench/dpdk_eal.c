// SPDX-License-Identifier: BSD-3-Clause
/*
 * DPDK's EAL for the benchmarks that run DPDK beside xpile (alloc_dpdk.c, lpm_dpdk.c):
 * one lcore, no hugepages, no PCI, no files shared with other processes. Built only
 * when the Makefile finds libdpdk (XPILE_HAVE_DPDK); otherwise nothing calls it.
 */
#include "benchutil.h"

#ifdef XPILE_HAVE_DPDK
#include <stdbool.h>
#include <stdio.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

int bench_dpdk_eal_init(const char *cmd, size_t mb)
{
	static bool done;
	char mem[32];
	/* --no-huge implies legacy memory, which --in-memory refuses: --no-shconf instead. */
	char *argv[] = { "xpile-bench",
			 "--no-huge",
			 "--no-pci",
			 "--no-shconf",
			 "--no-telemetry",
			 "--log-level=lib.*:error",
			 "--log-level=pmd.*:error",
			 "-l",
			 "0",
			 "-m",
			 mem,
			 NULL };

	if (done)
		return 0;
	snprintf(mem, sizeof(mem), "%zu", mb);
	rte_log_set_global_level(RTE_LOG_ERR);
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		fprintf(stderr, "xpile-bench %s: DPDK EAL init failed: %s\n", cmd,
			rte_strerror(rte_errno));
		return -1;
	}
	done = true;
	return 0;
}
#endif
