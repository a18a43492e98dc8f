/* SPDX-License-Identifier: BSD-3-Clause */
/* The steer program's verdict counters by name, as the control sockets and /metrics
 * show them. */
#ifndef XPILE_UTIL_VERDICT_H
#define XPILE_UTIL_VERDICT_H

#include "xpile/steer.h"

static inline const char *ut_verdict_name(int k)
{
	static const char *const names[XP_CNT_MAX] = {
		[XP_CNT_PASS] = "pass",	      [XP_CNT_DROP] = "drop",
		[XP_CNT_TX] = "tx",	      [XP_CNT_REDIRECT] = "redirect",
		[XP_CNT_XSK] = "xsk",	      [XP_CNT_XSK_NOSOCK] = "xsk_nosocket",
		[XP_CNT_DEFAULT] = "default", [XP_CNT_PARSE_ERR] = "parse_error",
	};

	return k >= 0 && k < XP_CNT_MAX && names[k] ? names[k] : "unknown";
}

#endif /* XPILE_UTIL_VERDICT_H */
