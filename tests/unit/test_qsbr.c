// SPDX-License-Identifier: BSD-3-Clause
/* Reader quiescence (xpile/qsbr.h): a token passes once every online reader has been
 * quiescent since, offline readers never hold it up, slots run out and come back. */
#include <errno.h>

#include "xpile/qsbr.h"
#include "xt.h"

static void tokens(void)
{
	struct xp_qsbr *q = NULL;
	__u32 a, b;
	xp_qsbr_token t;

	XT_REQUIRE(!xp_qsbr_create(2, &q));
	t = xp_qsbr_start(q);
	XT_CHECK(xp_qsbr_check(q, t)); /* no reader: nothing to wait for */
	XT_EQ(xp_qsbr_register(q, &a), 0);
	XT_EQ(xp_qsbr_register(q, &b), 0);
	XT_EQ(xp_qsbr_register(q, &(__u32){ 0 }), -ENOSPC);
	t = xp_qsbr_start(q);
	XT_CHECK(!xp_qsbr_check(q, t));
	xp_qsbr_quiescent(q, a);
	XT_CHECK(!xp_qsbr_check(q, t)); /* b has not been */
	xp_qsbr_offline(q, b);
	XT_CHECK(xp_qsbr_check(q, t));
	xp_qsbr_online(q, b);
	t = xp_qsbr_start(q);
	xp_qsbr_quiescent(q, a);
	xp_qsbr_quiescent(q, b);
	XT_CHECK(xp_qsbr_check(q, t));
	xp_qsbr_wait(q, t);
	/* A later token needs a later quiescent state. */
	t = xp_qsbr_start(q);
	XT_CHECK(!xp_qsbr_check(q, t));
	XT_EQ(xp_qsbr_unregister(q, a), 0);
	XT_EQ(xp_qsbr_unregister(q, a), -EINVAL);
	XT_EQ(xp_qsbr_unregister(q, b), 0);
	XT_CHECK(xp_qsbr_check(q, t));
	xp_qsbr_synchronize(q);
	XT_EQ(xp_qsbr_register(q, &a), 0);
	XT_EQ(xp_qsbr_unregister(q, 7), -EINVAL);
	xp_qsbr_destroy(q);
	XT_EQ(xp_qsbr_create(0, &q), -EINVAL);
	XT_EQ(xp_qsbr_create(XP_QSBR_MAX_READERS + 1, &q), -EINVAL);
	xp_qsbr_destroy(NULL);
}

int main(void)
{
	XT_RUN(tokens);
	return xt_done();
}
