#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's main job. Until the engine lands, it runs the allocator benchmark.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec build/xpile-bench alloc --cache 512 --cores 2 --keep 128 --get 32 --put 32 --seconds 2
