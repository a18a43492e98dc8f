#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test_router.sh with --router-xdp off: the same traffic, routes and reasons, every
# packet forwarded, punted or dropped by the engine.
RT_XDP=off exec "$(dirname "$0")/test_router.sh"
