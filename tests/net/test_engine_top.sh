#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `xpile top` in a real terminal (issue 25, section 2): tmux runs it against a live
# engine (rxdrop on x1, --name) fed by a steady UDP stream; the test reads the screen
# with capture-pane and types keys with send-keys: the queue view shows the engine's
# x1:0 with a non-zero RX rate, 'w' the workers (busy %, cycles per packet, packets),
# 'l' the ledger (ok, every frame placed), 's' the next sort, 'q' quits and gives the
# terminal back (the pane's command exits).
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh
source tests/lib/engine.sh
eng_require
command -v tmux >/dev/null || xt_skip "tmux missing: apt-get install tmux (tools/setup/install-deps.sh)"

eng_ns H1 h1
eng_ns E eng
xt_veth "$H1" x1h "$E" x1
eng_host "$H1" x1h 198.18.30.1/24
eng_quiet "$E" x1
NAME="xph25t$$"
eng_start ENG "$E" --iface x1 --mode rxdrop --cores 0 --name "$NAME"
X1MAC=$(ip -n "$E" -o link show x1 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
ip -n "$H1" neigh replace 198.18.30.2 lladdr "$X1MAC" dev x1h
# ~2000 datagrams a second for 40 s at most.
ip netns exec "$H1" timeout 40 python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
while True:
    for _ in range(20): s.sendto(b"t" * 64, ("198.18.30.2", 9))
    time.sleep(0.01)' &
XT_PIDS+=($!)

# A tmux server of our own (-L), so no one else's session is touched.
TM=(tmux -L "xph25t$$")
xt_on_exit "${TM[@]}" kill-server
"${TM[@]}" new-session -d -s top -x 200 -y 40 "$XPILE top --interval 0.5" || xt_fail "tmux new-session failed"
screen() { "${TM[@]}" capture-pane -p -t top; }
row() { screen | awk -v n="$NAME" '$1 == n'; }
wait_screen() { # seconds description awk-test-on-the-engine's-rows
	local deadline=$((SECONDS + $1))
	until row | awk "$3 { ok = 1 } END { exit !ok }"; do
		[ $SECONDS -ge $deadline ] && { screen; xt_fail "top: $2"; }
		sleep 0.2
	done
}

# shellcheck disable=SC2016 # awk fields
wait_screen 10 "no x1:0 row with a non-zero RX rate" '$2 == "x1:0" && $4 > 0 && $8 > 0'
screen | grep -q "view queues, sort rx pps" || { screen; xt_fail "top: no header"; }
echo "queues: $(row)"

"${TM[@]}" send-keys -t top w
# shellcheck disable=SC2016 # awk fields
wait_screen 5 "no worker row after 'w'" '$2 == 0 && $3 == 0 && $4 >= 0 && $5 > 0 && $6 > 0'
screen | grep -q "BUSY%.*CYC/PKT.*PACKETS.*SLEEPS.*WAKEUPS" || { screen; xt_fail "top: no worker header"; }
echo "workers: $(row)"

"${TM[@]}" send-keys -t top l
# shellcheck disable=SC2016 # awk fields
wait_screen 5 "no ledger row after 'l'" '$2 == 0 && $3 == "ok" && $4 > 0 && $NF > 0'
echo "ledger: $(row)"

"${TM[@]}" send-keys -t top p s
xt_wait_for 5 bash -c "${TM[*]} capture-pane -p -t top | grep -q 'view queues, sort tx pps'" ||
	{ screen; xt_fail "top: 's' did not switch to the tx pps sort"; }

"${TM[@]}" send-keys -t top q
xt_wait_for 5 bash -c "! ${TM[*]} has-session -t top" || { screen; xt_fail "top did not quit on 'q'"; }
eng_stop "$ENG" || xt_fail "engine failed"
echo ok
