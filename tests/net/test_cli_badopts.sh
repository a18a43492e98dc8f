#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The command lines of xpile, xpile-loader, xpile-bench and xpile-agent, from their own option tables
# (the hidden --list-options): every bad argument the table implies (a bad number, a
# value out of range, a sign, inf/nan, a flag with a value, an empty string, a bad list,
# MAC or address, an option given twice, two that contradict) gets ONE line on stderr
# naming the option and the value, nothing on stdout and exit status 2; every option is
# in its command's --help. A new option is covered by being in a table.
# Then the command-line items of issue 15, each a check the old parsers failed.
# Every run has --parse-only, so an argument wrongly accepted is printed, never acted on:
# nothing here attaches, loads or sends anything.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/netns.sh

ENGINE=$XT_BUILD/xpile LOADER=$XT_BUILD/xpile-loader BENCH=$XT_BUILD/xpile-bench
AGENT=$XT_BUILD/xpile-agent
for b in "$ENGINE" "$LOADER" "$BENCH" "$AGENT"; do
	[ -x "$b" ] || xt_skip "$b not built: run make"
done
ERR=$(mktemp /tmp/xpile-cli.XXXXXX)
xt_on_exit "rm -f '$ERR' '$ERR.out'"

# run BIN CMD ARGS...: stdout in $ERR.out, stderr in $ERR, returns the exit status.
run() {
	local bin=$1 cmd=$2
	shift 2
	timeout 10 "$bin" "$cmd" --parse-only "$@" >"$ERR.out" 2>"$ERR"
}

# refused BIN CMD MUST-CONTAIN... -- ARGS...: exit 2, one line, each MUST-CONTAIN in it.
refused() {
	local bin=$1 cmd=$2 want=() rc line
	shift 2
	while [ "$1" != -- ]; do want+=("$1") && shift; done
	shift
	run "$bin" "$cmd" "$@"
	rc=$?
	line=$(cat "$ERR")
	[ "$rc" = 2 ] || xt_fail "$(basename "$bin") $cmd $*: exit $rc, want 2 ($line$(head -c 200 "$ERR.out"))"
	[ "$(wc -l <"$ERR")" = 1 ] || xt_fail "$(basename "$bin") $cmd $*: $(wc -l <"$ERR") lines on stderr, want 1: $line"
	# With --json the same error is a JSON object on stdout; otherwise stdout stays empty.
	if printf '%s\n' "$@" | grep -qx -- --json; then
		jq -e '.status == 2 and (.error | type) == "string"' "$ERR.out" >/dev/null ||
			xt_fail "$(basename "$bin") $cmd $*: --json, but stdout is not an error object: $(head -c 200 "$ERR.out")"
	else
		[ ! -s "$ERR.out" ] || xt_fail "$(basename "$bin") $cmd $*: wrote to stdout: $(head -c 200 "$ERR.out")"
	fi
	for w in "${want[@]}"; do
		grep -qF -- "$w" "$ERR" || xt_fail "$(basename "$bin") $cmd $*: '$line' does not name '$w'"
	done
}

# accepted BIN CMD EXPECTED-LINE -- ARGS...: exit 0 and --parse-only printed the line.
accepted() {
	local bin=$1 cmd=$2 expect=$3 rc
	shift 4
	run "$bin" "$cmd" "$@"
	rc=$?
	[ "$rc" = 0 ] || xt_fail "$(basename "$bin") $cmd $*: exit $rc: $(cat "$ERR")"
	grep -qxF -- "$expect" "$ERR.out" || xt_fail "$(basename "$bin") $cmd $*: parsed as '$(tr '\n' ' ' <"$ERR.out")', want '$expect'"
}

# 1. Generated from the tables.
total=0
for bin in "$ENGINE" "$LOADER" "$BENCH" "$AGENT"; do
	list=$("$bin" --list-options 2>&1) || xt_fail "$(basename "$bin") --list-options failed: $list"
	nopt=$(grep -c '^opt' <<<"$list")
	min=10
	[ "$bin" = "$AGENT" ] && min=5 # run and ctl: a daemon's options are in its config
	[ "$nopt" -ge $min ] || xt_fail "$(basename "$bin") --list-options: only $nopt options"
	declare -A help=()
	while IFS=$'\t' read -r _ cmd opt vis; do
		[ -n "${help[$cmd]+x}" ] || help[$cmd]=$("$bin" "$cmd" --help 2>&1) ||
			xt_fail "$(basename "$bin") $cmd --help failed: ${help[$cmd]}"
		[ "$vis" = hidden ] && continue
		grep -qE -- "^    (-., )?$opt( |$)" <<<"${help[$cmd]}" ||
			xt_fail "$(basename "$bin") $cmd --help does not list $opt"
	done < <(grep '^opt' <<<"$list")
	unset help
	while IFS=$'\t' read -r -a f; do
		cmd=${f[1]}
		args=("${f[@]:2}")
		for i in "${!args[@]}"; do [ "${args[i]}" = "<empty>" ] && args[i]=; done
		must=("${args[0]%%=*}")
		# The value, when there is one, is named too; so is the other of a contradiction.
		[ ${#args[@]} -ge 2 ] && [ -n "${args[1]}" ] && must+=("${args[1]}")
		refused "$bin" "$cmd" "${must[@]}" -- "${args[@]}"
		total=$((total + 1))
	done < <(grep '^bad' <<<"$list")
done
echo "$total generated bad arguments refused with one line and exit 2"
[ "$total" -ge 300 ] || xt_fail "only $total generated cases"

# 2. Issue 15, the command-line items.
# 8: a leading zero is a decimal digit, not octal.
accepted "$ENGINE" run "batch=10" -- --batch 010
accepted "$ENGINE" run "frames=4095" -- --frames 04095
accepted "$LOADER" stats "interval=10" -- --interval 010 x0
# 9, 10: seconds are finite and bounded, so their ns never overflow.
for v in inf nan 1e300 2e10 -1; do
	refused "$ENGINE" run --interval "$v" -- --interval "$v"
done
for v in 1e20 inf nan -1 1e10; do
	refused "$ENGINE" run --duration "$v" -- --duration "$v"
done
accepted "$ENGINE" run "duration=0.5" -- --duration 0.5
# 11: no negative counts; rule words that start with '-' stay rule words.
refused "$ENGINE" run --count -1 -- --count -1
refused "$ENGINE" run --rate -1 -- --rate -1
refused "$LOADER" stats --interval -1 -- -i -1 x0
accepted "$LOADER" rule "arg=-1" -- add x0 prio -1 action drop
accepted "$LOADER" rule "arg=-80" -- add x0 udp dport -80 action drop
accepted "$LOADER" rule "arg=-1" -- del b0 -1
accepted "$LOADER" rule "arg=-1" -- add x0 action xsk slot -1
accepted "$LOADER" rule "json=1" -- add x0 action xsk slot -1 --json
# 12: the same queue twice.
refused "$ENGINE" run --iface b0:0,0 "0 is listed twice" -- --iface b0:0,0
refused "$LOADER" wire --queues "listed twice" -- --queues 1,0-2 --cores 0 x0
# 18: --frame-size says what it needs in one line.
refused "$ENGINE" run --frame-size 3000 "multiple of 64" "2048..4096" -- --frame-size 3000
accepted "$ENGINE" run "frame-size=4096" -- --frame-size 4k
# 19: a flag with a value, an empty string, a 16-character interface name.
refused "$ENGINE" run --json "takes no value" -- --json=yes
refused "$LOADER" status --json "takes no value" -- --json=yes
refused "$ENGINE" run --pin-path "''" -- --pin-path ''
refused "$LOADER" load --pin-path "''" -- --pin-path= x0
refused "$ENGINE" run "at most 15" -- --iface abcdefghijklmnop
refused "$LOADER" load "at most 15" abcdefghijklmnop -- abcdefghijklmnop
refused "$LOADER" rule "at most 15" -- add abcdefghijklmnop action drop
refused "$BENCH" gen "at most 15" -- --iface abcdefghijklmnop
# 20: an option given twice, and contradictions.
refused "$ENGINE" run --mode "given twice" rxdrop fwd -- --mode rxdrop --mode fwd
refused "$ENGINE" run --copy --zero-copy contradict -- --copy --zero-copy
refused "$ENGINE" run --zero-copy --xsk-mode contradict -- --zero-copy --xsk-mode copy
refused "$ENGINE" run --multi-buffer --no-multi-buffer -- --multi-buffer --no-multi-buffer
accepted "$ENGINE" run "iface=b1:1" -- --iface b0 --iface b1:1
# Values checked by a command's own parser are still option errors: one line, exit 2.
refused "$LOADER" load --default fly -- --default fly x0
refused "$LOADER" load --default "follows the action" -- --default "drop now" x0
accepted "$LOADER" load "default=xsk slot 2" -- --default "xsk slot 2" x0
refused "$LOADER" wire "--queues LIST and --cores LIST go together" -- --queues 0 x0
# 22 (its --help part): what each signal does.
h=$("$ENGINE" run --help)
for s in SIGINT SIGTERM SIGHUP SIGUSR1; do
	grep -q "$s" <<<"$h" || xt_fail "xpile run --help does not say what $s does"
done

# Issue 21: --layout aligned with a frame that is not a power of two: one line.
run "$ENGINE" run --layout aligned --frame-size 3072
[ $? = 2 ] && [ "$(cat "$ERR")" = "xpile: --layout aligned takes --frame-size 2048 or 4096 (power-of-two chunks), not 3072: give one of those, or --layout interleaved (see 'xpile run --help')" ] ||
	xt_fail "--layout aligned --frame-size 3072: $(cat "$ERR")"
accepted "$ENGINE" run "frame-size=3072" -- --layout interleaved --frame-size 3072
# Issue 21: no arguments at all is a usage error like any other: one line, exit 2.
want=("xpile: a command is required: run, stats, ctl or top (see 'xpile --help')"
	"xpile-loader: a command is required: load, unload, status, stats, rule, wire, features or replace (see 'xpile-loader --help')")
i=0
for bin in "$ENGINE" "$LOADER" "$BENCH" "$AGENT"; do
	timeout 10 "$bin" >"$ERR.out" 2>"$ERR"
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$ERR")" = 1 ] && [ ! -s "$ERR.out" ] && grep -q "a command is required: .*(see '$(basename "$bin") --help')$" "$ERR" ||
		xt_fail "$(basename "$bin") with no arguments: exit $rc: $(head -c 300 "$ERR")"
	[ $i -ge ${#want[@]} ] || [ "$(cat "$ERR")" = "${want[$i]}" ] ||
		xt_fail "$(basename "$bin") with no arguments: got '$(cat "$ERR")', want '${want[$i]}'"
	i=$((i + 1))
done

# 3. The same words everywhere.
accepted "$ENGINE" run "xdp-mode=native" -- --xdp-mode drv
accepted "$ENGINE" run "xdp-mode=skb" -- --xdp-mode generic
accepted "$LOADER" load "mode=native" -- --mode drv x0
accepted "$LOADER" load "mode=skb" -- -m generic x0
accepted "$ENGINE" run "verbose=2" -- -vv
accepted "$LOADER" load "verbose=2" -- -vv x0
accepted "$BENCH" alloc "verbose=2" -- -v --verbose
refused "$BENCH" layout --deal -- --deal
accepted "$BENCH" deal "runs=3" -- --runs 3
accepted "$AGENT" run "verbose=2" -- -vv --config x.json
accepted "$AGENT" ctl "verbose=1" -- -v status
accepted "$AGENT" run "json=1" -- --json --check --config x.json
# One --version: NAME VERSION (libbpf X, libxdp Y[, liburing Z]), the same from a
# command, -V alike; with --json one object with every library (null: not linked).
for bin in "$ENGINE" "$LOADER" "$BENCH" "$AGENT"; do
	n=$(basename "$bin")
	v=$("$bin" --version) || xt_fail "$n --version failed"
	grep -Eqx "$n [0-9]+\.[0-9]+\.[0-9]+ \(libbpf [0-9.]+, libxdp [0-9.]+(, liburing [0-9.]+)?\)" <<<"$v" ||
		xt_fail "$n --version said '$v'"
	[ "$("$bin" -V)" = "$v" ] || xt_fail "$n -V differs from --version"
	cmd=$("$bin" --list-options | awk -F'\t' '/^opt/ { print $2; exit }')
	[ "$("$bin" "$cmd" --version)" = "$v" ] || xt_fail "$n $cmd --version differs from --version"
	j=$("$bin" --version --json) || xt_fail "$n --version --json failed"
	jq -e --arg n "$n" '.name == $n and (.version | test("^[0-9]+\\.")) and (.libbpf | type) == "string"
		and (.libxdp | type) == "string" and has("liburing")' <<<"$j" >/dev/null ||
		xt_fail "$n --version --json: $j"
	[ "$(jq -r '"\(.name) \(.version)"' <<<"$j")" = "${v%% (*}" ] || xt_fail "$n: text and JSON versions differ"
done
[ "$(jq -r .liburing <<<"$("$ENGINE" --version --json)")" != null ] || xt_fail "xpile links liburing"
[ "$(jq -r .liburing <<<"$("$LOADER" --version --json)")" = null ] || xt_fail "xpile-loader links no liburing"
echo "--version: one format in all four: $("$ENGINE" --version)"
# A failing --json command writes an error object on stdout, and nothing else.
out=$("$LOADER" status --json nosuch0 2>"$ERR")
[ $? = 1 ] && jq -e '.status == 1 and (.error | test("nosuch0 not found"))' <<<"$out" >/dev/null ||
	xt_fail "status --json nosuch0: stdout '$out', stderr $(cat "$ERR")"
out=$("$LOADER" status nosuch0 2>"$ERR")
[ $? = 1 ] && [ -z "$out" ] && [ "$(wc -l <"$ERR")" = 1 ] ||
	xt_fail "status nosuch0: stdout '$out', stderr $(cat "$ERR")"
out=$("$ENGINE" run --iface nosuch0 --mode rxdrop --json 2>"$ERR")
[ $? = 1 ] && jq -e '.status == 1 and (.error | test("nosuch0"))' <<<"$out" >/dev/null ||
	xt_fail "xpile run --json on a missing interface: stdout '$out', stderr $(cat "$ERR")"
out=$("$AGENT" run --check --json --config /nonexistent/agent.json 2>"$ERR")
[ $? = 2 ] && jq -e '.status == 2' <<<"$out" >/dev/null || xt_fail "agent --check --json: '$out'"
out=$("$AGENT" ctl --socket /nonexistent/agent.sock status 2>"$ERR")
[ $? = 1 ] && jq -e '.ok == false and (.error | test("cannot connect"))' <<<"$out" >/dev/null ||
	xt_fail "ctl to no agent: '$out'"
echo "failing --json commands: an error object on stdout"
for bin in "$ENGINE" "$LOADER" "$BENCH"; do
	"$bin" --help | grep -q '^SYNOPSIS' || xt_fail "$(basename "$bin") --help has no SYNOPSIS"
	"$bin" nosuch >/dev/null 2>"$ERR"
	[ $? = 2 ] && [ "$(wc -l <"$ERR")" = 1 ] || xt_fail "$(basename "$bin") nosuch: $(cat "$ERR")"
done

# 4. End to end, on a loaded program: rule words that start with '-' reach the rule
# parser, which refuses them in one line naming the word; getopt never sees them.
source tests/lib/steer.sh
st_require
st_ns A cli
xt_veth "$A" c0 "$A" c1
st_loader "$A" load c0 >/dev/null || xt_fail "load c0"
for r in "prio -1 action drop" "udp dport -80 action drop" "action xsk slot -1"; do
	# shellcheck disable=SC2086
	st_loader "$A" rule add c0 $r >"$ERR.out" 2>"$ERR" && xt_fail "rule add c0 $r succeeded"
	[ "$(wc -l <"$ERR")" = 1 ] || xt_fail "rule add c0 $r: $(cat "$ERR")"
	grep -q -- "-[18]" "$ERR" && ! grep -qi "option" "$ERR" ||
		xt_fail "rule add c0 $r: '$(cat "$ERR")' does not name the word"
done
[ "$(st_loader "$A" rule list --json c0 | grep -o '"id"' | wc -l)" = 0 ] || xt_fail "a refused rule was added"
st_loader "$A" unload c0 >/dev/null || xt_fail "unload c0"
st_no_trace "$A" c0 || xt_fail "c0 traces left"
echo ok
