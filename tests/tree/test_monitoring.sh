#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The dashboard and alert rules that ship (issue 25, section 4), tools/deploy/monitoring:
#  - `promtool check rules` and `promtool test rules` (a case per alert, synthetic series);
#  - every query of the Grafana dashboard parses as PromQL (promtool checks each as a
#    recording rule, Grafana's variables given values);
#  - every xpile_* metric the dashboard or the rules name is one the agent exports (the
#    names tools/agent/*.c writes), and the check fails on a name that is not (a copy of
#    the dashboard with one such query is refused). net/test_engine_prometheus checks the
#    same names against a live scrape.
set -u
cd "$(dirname "$0")/../.." || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
for t in promtool jq; do
	command -v $t >/dev/null || { echo "SKIP: $t missing: apt-get install prometheus jq (tools/setup/install-deps.sh)"; exit 77; }
done
M=tools/deploy/monitoring
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

out=$(promtool check rules "$M/xpile-alerts.yml" 2>&1) || fail "promtool check rules: $out"
out=$(cd "$M" && promtool test rules xpile-alerts.test.yml 2>&1) || fail "promtool test rules: $out"
alerts=$(grep -c '^ *- alert:' "$M/xpile-alerts.yml")
tested=$(grep -o 'alertname: [A-Za-z]*' "$M/xpile-alerts.test.yml" | sort -u | wc -l)
[ "$alerts" = "$tested" ] || fail "$alerts alerts, $tested of them in xpile-alerts.test.yml: test each"
for a in XpileEngineDrops XpileRxRingFull XpileFillRingEmpty XpileLedgerNotOk XpileInterfaceNotReady XpileEngineDown XpileEngineGone XpileAgentDown; do
	grep -q "alert: $a\$" "$M/xpile-alerts.yml" || fail "alert $a missing"
done
echo "promtool: $alerts alerts checked, each tested"

# The dashboard's queries, as Grafana sends them.
# shellcheck disable=SC2016 # Grafana's variables, literally
exprs() { jq -r '.. | objects | select(has("expr")) | .expr' "$1" |
	sed -e 's/\$__rate_interval/5m/g' -e 's/\$instance/.*/g' -e 's/\$engine/.*/g'; }
exprs "$M/grafana-xpile.json" >"$TMP/exprs"
n=$(wc -l <"$TMP/exprs")
[ "$n" -gt 10 ] || fail "dashboard has $n queries"
{
	echo "groups:"
	echo "  - name: dashboard"
	echo "    rules:"
	i=0
	while IFS= read -r e; do
		i=$((i + 1))
		printf '      - record: dashboard:q%d\n        expr: %s\n' "$i" "$(jq -Rn --arg e "$e" '$e')"
	done <"$TMP/exprs"
} >"$TMP/dash-rules.yml"
out=$(promtool check rules "$TMP/dash-rules.yml" 2>&1) || fail "a dashboard query does not parse: $out"
for v in engine instance; do
	jq -e --arg v $v '.templating.list[] | select(.name == $v)' "$M/grafana-xpile.json" >/dev/null || fail "no \$$v variable"
done

# Metric names: what the agent writes, against what the dashboard and the rules name.
grep -oh '"xpile_[a-z0-9_]*' tools/agent/*.c | tr -d '"' | sort -u >"$TMP/exported"
[ "$(wc -l <"$TMP/exported")" -gt 30 ] || fail "found only $(wc -l <"$TMP/exported") exported names"
unknown() { # FILE...: the xpile_* names in them the agent does not export
	grep -oh 'xpile_[a-z0-9_]*' "$@" | sort -u | comm -23 - "$TMP/exported"
}
grep -v '^ *#' "$M/xpile-alerts.yml" >"$TMP/rules"
bad=$(unknown "$TMP/exprs" "$TMP/rules")
[ -z "$bad" ] || fail "named but not exported: $bad"
# The check itself: a dashboard naming a metric that does not exist is refused.
jq '.panels[1].targets[0].expr = "rate(xpile_engine_nosuch_total[5m])"' "$M/grafana-xpile.json" >"$TMP/bad.json"
exprs "$TMP/bad.json" >"$TMP/bad-exprs"
[ "$(unknown "$TMP/bad-exprs")" = xpile_engine_nosuch_total ] || fail "the name check missed xpile_engine_nosuch_total"
echo "dashboard: $n queries parse, every one of $(grep -oh 'xpile_[a-z0-9_]*' "$TMP/exprs" "$TMP/rules" | sort -u | wc -l) names exported (of $(wc -l <"$TMP/exported"))"
echo ok
