# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# The namespace set-up lives in tools/lib/netns.sh (the benches and the demo use it too);
# tests keep sourcing this path.
# shellcheck source=tools/lib/netns.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/lib/netns.sh"
