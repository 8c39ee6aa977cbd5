#!/bin/bash
# deploy/prometheus and deploy/grafana (issue 29, parts 3 and 4): the
# rules pass `promtool check rules`, their unit tests (`promtool test
# rules`, synthetic series for every alert, firing and not) pass, and
# every mthpd series and label the rules and the dashboard query is one
# the daemon really writes: read from the metrics file of a daemon run on
# a synthetic tree (no root needed), so that a renamed metric breaks this
# test and not an operator's alert or panel.  The dashboard's recording
# rules must be ones the rules file records.
. "$(dirname "$0")/fixture-lib.sh" prules
RULES=$(dirname "$0")/../../deploy/prometheus
DASH=$(dirname "$0")/../../deploy/grafana/mthpd.json
if ! command -v promtool >/dev/null; then
	echo "SKIP: no promtool (Debian: apt-get install prometheus)"
	exit 77
fi

promtool check rules "$RULES/mthpd.rules.yml" >"$T/check" 2>&1 || fail "promtool check rules: $(cat "$T/check")"
grep -q 'SUCCESS' "$T/check" || fail "promtool check rules: $(cat "$T/check")"
promtool test rules "$RULES/mthpd.rules.test.yml" >"$T/test" 2>&1 || fail "promtool test rules: $(cat "$T/test")"
echo "promtool: check and test rules: $(grep -o SUCCESS "$T/test" | head -n 1)"

fixture_tree <<'EOT'
khugepaged max_ptes_none=511 max_ptes_swap=64 max_ptes_shared=256
process 100 comm=redis-server
vma 0x7f0000000000-0x7f0000400000 rw-p
range 0x7f0000000000: 512 written
range 0x7f0000200000: 256 written, 256 none
EOT
mkdir -p "$T/conf/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=100\nmetrics_file=%s\nstate_file=%s\n' "$T/metrics.prom" "$T/status" \
	>"$T/conf/mthpd.conf"
printf '[Match]\nunit=redis-server.service\n[Policy]\nsizes=2M\nmin_age=0\n' >"$T/conf/policy.d/50-redis.conf"
"$MTHPD" run --config-dir "$T/conf" --proc-root "$P" --sys-root "$T/tree/sys" 2>"$T/log" &
DAEMON=$!
for ((i = 0; i < 50; i++)); do
	grep -q "pass 2:" "$T/log" && [ -s "$T/metrics.prom" ] && break
	sleep 0.1
done
[ -s "$T/metrics.prom" ] || { fail "no metrics file: $(tail -n 3 "$T/log")"; exit 1; }

# every mthpd_* name in an expression (not a recording rule's own name, which has colons)
names=$(grep -E '^\s*expr:' "$RULES/mthpd.rules.yml" | grep -oE '\bmthpd_[a-z_]+' | sort -u)
[ -n "$names" ] || fail "no mthpd series found in the rules"
for n in $names; do
	grep -qE "^$n[{ ]" "$T/metrics.prom" || fail "the rules query $n, which mthpd does not write"
done
# the labels the rules keep or drop by name: each on a series that has it
for pair in mthpd_unit_huge_bytes:unit mthpd_unit_anon_bytes:unit mthpd_unit_collapsed_bytes_total:unit \
	mthpd_collapse_alloc_total:size mthpd_collapse_alloc_failed_total:size mthpd_huge_bytes:policy \
	mthpd_unit_processes_thp_disabled:unit; do
	grep -q "^${pair%%:*}{.*${pair#*:}=\"" "$T/metrics.prom" || fail "${pair%%:*} has no ${pair#*:} label"
done
# and the rules name each of them where they use it
for l in unit size; do
	grep -q "\$labels.$l\|without ($l)" "$RULES/mthpd.rules.yml" || fail "the rules do not use the $l label any more: update this test"
done
echo "series the rules query, all written by mthpd: $(echo "$names" | wc -l)"

# the dashboard: valid JSON, its queries' series written by mthpd or recorded by the rules
jq -e '.panels | length > 0' "$DASH" >/dev/null || fail "$DASH: not a dashboard with panels"
jq -r '.panels[].targets[].expr, (.templating.list[] | select(.type == "query") | .query)' "$DASH" >"$T/exprs"
dnames=$(grep -oE '\bmthpd_[a-z_]+' "$T/exprs" | sort -u)
for n in $dnames; do
	grep -qE "^$n[{ ]" "$T/metrics.prom" || fail "the dashboard queries $n, which mthpd does not write"
done
for r in $(grep -oE '\bmthpd:[a-z_0-9:]+' "$T/exprs" | sort -u); do
	grep -qE "^\s*- record: $r\s*$" "$RULES/mthpd.rules.yml" || fail "the dashboard queries $r, which the rules do not record"
done
# labels it groups by or names in a legend: the scrape's, or one mthpd writes
for l in $({ grep -oE 'by \([a-z_, ]+\)' "$T/exprs" | sed 's/by (//; s/)//; s/,/ /g'
	jq -r '.panels[].targets[].legendFormat' "$DASH" | grep -oE '\{\{[a-z_]+\}\}' | tr -d '{}'
	grep -oE 'label_values\([^,]+, *[a-z_]+\)' "$T/exprs" | sed 's/.*, *//; s/)//'; } | sort -u); do
	case $l in instance | job) continue ;; esac
	grep -q "^mthpd_[a-z_]*{.*\b$l=\"" "$T/metrics.prom" || fail "the dashboard uses the label $l, which no mthpd series has"
done
echo "dashboard: $(jq '.panels | length' "$DASH") panels, series $(echo "$dnames" | wc -w), all written by mthpd or recorded"

kill -TERM "$DAEMON"
wait "$DAEMON"
DAEMON=""
[ "$FAILS" = 0 ] || { echo "$FAILS check(s) failed"; exit 1; }
echo PASS
