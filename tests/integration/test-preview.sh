#!/bin/bash
# `mthpd plan --config-dir DIR` previews a configuration on the live
# processes as the daemon would match them (the first policy in file-name
# order whose keys all match), and collapses nothing:
# - per process: planned (what its policy's walk would collapse, and the
#   empty pages that would be filled), policy_disabled (enabled=no),
#   thp_disabled; per policy a total;
# - the figures are those of `mthpd plan --pid` with the policy's knobs;
# - a process no policy matches is listed only when --cgroup/--unit asks;
# - --policy NAME picks a policy, --policy FILE previews a new file at its
#   place in the order; errors exit 2 with one line.
. "$(dirname "$0")/lib.sh"
require_all

child_cgroups pva pvb pvc
A=${CGROUPS[0]} PB=${CGROUPS[1]} C=${CGROUPS[2]}
CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Match]\ncgroup=/mthpd-pva-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=511\n' >"$CONF/policy.d/50-a.conf"
printf '[Match]\ncgroup=/mthpd-pvb-*\n[Policy]\nmin_age=0\nenabled=no\n' >"$CONF/policy.d/40-b.conf"

in_cgroup "$A" full half sparse
W1=$WL_PID W1B=$WL_BASE W1FD=$WL_FD
wl_start --thp-disabled full
W2=$WL_PID
echo "$W2" >"$A/cgroup.procs" || die "cannot move $W2"
in_cgroup "$PB" full
W3=$WL_PID
in_cgroup "$C" full
W4=$WL_PID

# expect PID KNOB-ARGS...: "COLLAPSE_BYTES FILL_BYTES" from plan --pid with those knobs
expect() {
	local pid=$1
	shift
	"$MTHPD" plan --pid "$pid" --json "$@" | jq -s '
		[.[] | select(.action == "collapse")] |
		"\(map(4096 * pow(2; .order)) | add // 0) \(map(4096 * (pow(2; .order) - .occupied - .swap)) | add // 0)"' -r
}

"$MTHPD" plan --config-dir "$CONF" --json >"$TMP/p.json" 2>"$TMP/p.err"
rc=$?
sed 's/^/   /' "$TMP/p.json" "$TMP/p.err"
[ "$rc" = 0 ] || check_fail "plan --config-dir: exit $rc"
got() { jq -r --argjson pid "$1" 'select(.type == "process" and .pid == $pid) | '"$2" "$TMP/p.json"; }
[ "$(got "$W1" '"\(.policy) \(.status)"')" = "50-a.conf planned" ] || check_fail "W1: $(got "$W1" '"\(.policy) \(.status)"')"
want=$(expect "$W1" --sizes 2M --max-ptes-none 511)
have=$(got "$W1" '"\(.collapse_bytes) \(.fill_bytes)"')
echo "W1: collapse and fill bytes $have, plan --pid says $want"
[ "$have" = "$want" ] || check_fail "W1: preview '$have', plan --pid '$want'"
[ "${have%% *}" -ge $((3 * RANGE_SIZE)) ] || check_fail "W1: less than its 3 ranges planned"
[ "$(got "$W2" .status)" = thp_disabled ] || check_fail "W2: $(got "$W2" .status), expected thp_disabled"
[ "$(got "$W3" '"\(.policy) \(.status)"')" = "40-b.conf policy_disabled" ] || check_fail "W3: $(got "$W3" '"\(.policy) \(.status)"')"
[ -z "$(got "$W4" .status)" ] || check_fail "W4 (no policy) listed without --cgroup"
[ "$(jq -r 'select(.type == "policy" and .policy == "50-a.conf") | .processes' "$TMP/p.json")" = 2 ] ||
	check_fail "policy 50-a.conf: not 2 processes in its total"
[ "$(anon_huge_kb "$W1" "$W1B" 3)" = 0 ] || check_fail "the preview collapsed something"

# a process no policy matches: only when asked for
"$MTHPD" plan --config-dir "$CONF" --json --cgroup '/mthpd-pvc-*' >"$TMP/c.json"
s=$(jq -r --argjson pid "$W4" 'select(.type == "process" and .pid == $pid) | "\(.policy) \(.status)"' "$TMP/c.json")
[ "$s" = "null no_policy" ] || check_fail "W4 with --cgroup: '$s', expected 'null no_policy'"
[ "$(jq -s '[.[] | select(.type == "process")] | length' "$TMP/c.json")" = 1 ] || check_fail "--cgroup listed other cgroups"
# the text shows it too, under its group's line (it was the first of the group, and left out)
"$MTHPD" plan --config-dir "$CONF" --cgroup '/mthpd-pvc-*' >"$TMP/c.txt"
sed 's/^/   /' "$TMP/c.txt"
grep -q "^no policy: 1 process, never touched$" "$TMP/c.txt" || check_fail "text --cgroup: no 'no policy' line"
grep -q "^  /mthpd-pvc-[0-9]* pid $W4 'workload': .*; no policy matches: never touched$" "$TMP/c.txt" ||
	check_fail "text --cgroup: W4 (no policy) not listed"
# sizes as status shows them: three significant digits, "0 B"
grep -Eq "pid $W4 'workload': anon [0-9]\.[0-9]{2} MiB, huge 0 B;" "$TMP/c.txt" || check_fail "text: sizes not in status's style"
# whether a huge page could be allocated now: the free 2 MiB blocks of /proc/buddyinfo (issue 31)
grep -Eq "^memory: ([0-9]+ free 2 MiB blocks? now|no free 2 MiB block now) \(/proc/buddyinfo\)" "$TMP/c.txt" ||
	check_fail "text: no 'memory:' line with the free 2 MiB blocks"
# the preview does not know the daemon's backoff, and says so once
[ "$(grep -c "^note: .*refill_backoff" "$TMP/c.txt")" = 1 ] || check_fail "text: no note that the daemon's backoff is not taken into account"

# --policy NAME, and a new FILE that sorts before 50-a.conf: it takes W1, strictly
"$MTHPD" plan --config-dir "$CONF" --json --policy 40-b >"$TMP/n.json"
[ "$(jq -s -c '[.[] | select(.type == "process") | .pid]' "$TMP/n.json")" = "[$W3]" ] || check_fail "--policy 40-b: $(cat "$TMP/n.json")"
printf '[Match]\ncgroup=/mthpd-pva-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=0\n' >"$TMP/45-new.conf"
"$MTHPD" plan --config-dir "$CONF" --json --policy "$TMP/45-new.conf" >"$TMP/f.json"
want=$(expect "$W1" --sizes 2M --max-ptes-none 0)
have=$(jq -r --argjson pid "$W1" 'select(.type == "process" and .pid == $pid) | "\(.policy) \(.collapse_bytes) \(.fill_bytes)"' "$TMP/f.json")
echo "W1 under 45-new.conf: $have (plan --pid: $want)"
[ "$have" = "45-new.conf $want" ] || check_fail "--policy FILE: '$have', expected '45-new.conf $want'"

# min_age=: a process younger than that is shown with the time until the daemon looks at it
printf '[Match]\ncgroup=/mthpd-pva-*\n[Policy]\nmin_age=3600\nsizes=2M\n' >"$TMP/45-young.conf"
"$MTHPD" plan --config-dir "$CONF" --json --policy "$TMP/45-young.conf" >"$TMP/y.json"
wait_s=$(jq -r --argjson pid "$W1" 'select(.type == "process" and .pid == $pid) | .min_age_wait_seconds' "$TMP/y.json")
echo "W1 under min_age=3600: first looked at in $wait_s s"
[ "$wait_s" -gt 3000 ] && [ "$wait_s" -le 3600 ] || check_fail "min_age=3600: min_age_wait_seconds '$wait_s'"
"$MTHPD" plan --config-dir "$CONF" --policy "$TMP/45-young.conf" >"$TMP/y.txt"
grep -q "pid $W1 .*; min_age=3600: first looked at in [0-9]* s" "$TMP/y.txt" ||
	check_fail "min_age=3600: the text does not say when: $(grep "pid $W1" "$TMP/y.txt")"
[ "$(jq -r --argjson pid "$W1" 'select(.type == "process" and .pid == $pid) | .min_age_wait_seconds' "$TMP/f.json")" = 0 ] ||
	check_fail "min_age=0: min_age_wait_seconds is not 0"

# errors: one line, exit 2
printf '[Match]\ncgroup=/x\n[Policy]\nsizes=3M\n' >"$TMP/bad.conf"
for args in "--policy nope" "--policy $TMP/bad.conf" "--pid $W1" "--sizes 64K"; do
	# shellcheck disable=SC2086
	"$MTHPD" plan --config-dir "$CONF" $args >/dev/null 2>"$TMP/e"
	rc=$?
	echo "plan --config-dir $args: exit $rc: $(cat "$TMP/e")"
	[ "$rc" = 2 ] && [ "$(wc -l <"$TMP/e")" = 1 ] || check_fail "$args: exit $rc, or not one line"
done
"$MTHPD" plan --config-dir "$CONF" --policy "$TMP/bad.conf" 2>&1 | grep -q "bad.conf:4: " || check_fail "bad.conf: the error does not name file and line"

v=$(wl_verify "$W1" "$W1FD")
[ "$v" = ok ] || check_fail "workload memory: $v"
finish
