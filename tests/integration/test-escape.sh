#!/bin/bash
# A name another user chose reaches the operator's terminal escaped, never
# raw: any process may call prctl(PR_SET_NAME) with ESC, BEL, DEL, a
# newline or a C1 control in it, and a cgroup's name can hold them too.
# `plan --pid` (text), the preview `plan --config-dir` (text), the daemon's
# log lines and `mthpd status` show them as \xHH (lib/text.h), and hold no
# control byte but the line ends; `mthpd status --json` as JSON escapes.
. "$(dirname "$0")/lib.sh"
require_all

COMM=$'\e[31mX\a\x7f\n\xc2\x9bY'    # 12 bytes: ESC, BEL, DEL, LF, U+009B (C1 CSI)
SHOWN='\x1b[31mX\x07\x7f\x0a\xc2\x9bY'
CG=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
[ -n "$CG" ] || skip "no cgroup2 hierarchy mounted"
D="$CG/mthpd-esc-$$"$'\e[7m\x01\xff'
mkdir "$D" || skip "cannot create a child cgroup below $CG"
CGROUPS+=("$D")
CG_SHOWN="/mthpd-esc-$$"'\x1b[7m\x01\xff'

CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=200\nstate_file=%s\nmetrics_file=%s\n' "$TMP/status" "$TMP/metrics" >"$CONF/mthpd.conf"
printf '[Match]\ncgroup=/mthpd-esc-*\n[Policy]\nsizes=2M\nmax_ptes_none=511\n' >"$CONF/policy.d/50-esc.conf"

in_cgroup "$D" --comm "$COMM" full
P=$WL_PID B=$WL_BASE
[ "$(cat "/proc/$P/comm")" = "$COMM" ] || die "workload: comm '$(cat "/proc/$P/comm")' is not the one set"

# clean NAME FILE: FILE holds no control byte but '\n', no C1 control, and the escaped comm
clean() {
	local bad
	bad=$(LC_ALL=C grep -c $'[\x01-\x09\x0b-\x1f\x7f]\|\xc2[\x80-\x9f]' "$2")
	echo "$1: $(wc -l <"$2") lines, $bad with a control byte"
	[ "$bad" = 0 ] || check_fail "$1: $bad line(s) with a raw control byte: $(LC_ALL=C grep -n $'[\x01-\x09\x0b-\x1f\x7f]\|\xc2[\x80-\x9f]' "$2" | cat -v | head -3)"
	grep -qF -- "$SHOWN" "$2" || check_fail "$1: the comm is not shown as $SHOWN"
}

"$MTHPD" plan --pid "$P" >"$TMP/plan.txt" 2>&1 || check_fail "plan --pid: exit $?"
clean "plan --pid" "$TMP/plan.txt"
grep -F "pid $P '$SHOWN'" "$TMP/plan.txt" | sed 's/^/   /'

"$MTHPD" plan --config-dir "$CONF" >"$TMP/preview.txt" 2>&1 || check_fail "plan --config-dir: exit $?"
clean "plan --config-dir" "$TMP/preview.txt"
grep -qF -- "$CG_SHOWN pid $P '$SHOWN'" "$TMP/preview.txt" || check_fail "plan --config-dir: the cgroup is not shown as $CG_SHOWN"
grep -F "pid $P" "$TMP/preview.txt" | sed 's/^/   /'

# a failure names the process: still escaped
"$MTHPD" plan --pid "$P" --pid "$P" >"$TMP/err.txt" 2>&1
clean_err=$(LC_ALL=C grep -c $'[\x01-\x09\x0b-\x1f\x7f]' "$TMP/err.txt")
[ "$clean_err" = 0 ] || check_fail "plan --pid twice: a raw control byte on stderr"

# the daemon: its log (debug: one line per decision) and status
MTHPD_DEBUG=1 "$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
DAEMON=$!
huge_within "$P" "$B" 1 2048 || check_fail "the daemon did not collapse the range: $(anon_huge_kb "$P" "$B" 1) kB"
sleep 1.5
"$MTHPD" status --config-dir "$CONF" >"$TMP/status.txt" 2>&1 || check_fail "status: exit $?"
"$MTHPD" status --json --config-dir "$CONF" >"$TMP/status.json" 2>&1 || check_fail "status --json: exit $?"
daemon_stop
# status --json: valid JSON with no raw control byte; the comm its exact
# bytes, the cgroup's byte 0xff (not UTF-8) as U+00FF, its only JSON form
[ "$(LC_ALL=C grep -c $'[\x01-\x09\x0b-\x1f\x7f]\|\xc2[\x80-\x9f]' "$TMP/status.json")" = 0 ] ||
	check_fail "status --json: a raw control byte"
jq -e --argjson p "$P" --arg c "$COMM" --arg u "/mthpd-esc-$$"$'\e[7m\x01\xc3\xbf' \
	'[.policies[].units[] | select(.name == $u) | .processes[] | select(.pid == $p and .comm == $c)] | length == 1' \
	"$TMP/status.json" >/dev/null || check_fail "status --json: no process $P with its comm in unit $CG_SHOWN: $(head -c 1500 "$TMP/status.json")"
grep -oF -- '"comm":"\u001b[31mX\u0007\u007f\u000a\u009bY"' "$TMP/status.json" | sed 's/^/   json: /'
clean "run (log)" "$TMP/run.log"
grep -F "pid $P " "$TMP/run.log" | head -2 | sed 's/^/   /'
clean "status" "$TMP/status.txt"
grep -F -- "$SHOWN" "$TMP/status.txt" | sed 's/^/   /'
grep -qF -- "$CG_SHOWN" "$TMP/status.txt" || check_fail "status: the cgroup is not shown as $CG_SHOWN"
# the metrics: the text format allows no control byte and only UTF-8 in a label
# (a scraper drops the whole file), so the unit's label holds \\xHH (\xHH unescaped)
[ "$(LC_ALL=C grep -c $'[\x01-\x09\x0b-\x1f\x7f]' "$TMP/metrics")" = 0 ] ||
	check_fail "metrics: a raw control byte"
# every name here is escaped whole, so no byte above 0x7f is left (no iconv in the VM's guest)
[ "$(LC_ALL=C grep -c $'[\x80-\xff]' "$TMP/metrics")" = 0 ] || check_fail "metrics: a raw byte above 0x7f"
if command -v iconv >/dev/null; then
	iconv -f UTF-8 -t UTF-8 "$TMP/metrics" >/dev/null 2>&1 || check_fail "metrics: not valid UTF-8"
fi
grep -qF -- "unit=\"${CG_SHOWN//\\/\\\\}\"" "$TMP/metrics" ||
	check_fail "metrics: no unit label reading $CG_SHOWN: $(grep -a mthpd_unit_anon_bytes "$TMP/metrics" | head -2)"
grep -aF "mthpd_unit_anon_bytes" "$TMP/metrics" | sed 's/^/   /'
finish
