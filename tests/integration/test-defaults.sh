#!/bin/bash
# Without --max-ptes-*, mthpd takes khugepaged's sysfs knobs; an option
# overrides the knob.  The knobs are changed only for the moment of the
# check and restored by the EXIT trap (lib.sh), on failure too; the first
# part checks that trap itself on a failing and on a killed child.
. "$(dirname "$0")/lib.sh"
require_all

KH=$THP/khugepaged
orig_none=$(cat "$KH/max_ptes_none")
orig_shared=$(cat "$KH/max_ptes_shared")
orig_swap=$(cat "$KH/max_ptes_swap")
pick() { # a value that differs from $1
	if [ "$1" = 17 ]; then echo 18; else echo 17; fi
}

# 1. The restore trap: a test that fails, and one killed by SIGTERM, leave
# the knob as they found it.
LIB=$(dirname "$0")/lib.sh
v=$(pick "$orig_none")
bash -c '. "$1"; thp_set khugepaged/max_ptes_none "$2"; exit 1' sh "$LIB" "$v"
now=$(cat "$KH/max_ptes_none")
[ "$now" = "$orig_none" ] || {
	echo "$orig_none" >"$KH/max_ptes_none"
	check_fail "a failing test left max_ptes_none at $now (restored to $orig_none here)"
}
bash -c '. "$1"; thp_set khugepaged/max_ptes_none "$2"; echo set; while :; do sleep 0.1; done' \
	sh "$LIB" "$v" >"$TMP/child.out" &
child=$!
for ((i = 0; i < 500; i++)); do
	grep -q set "$TMP/child.out" && break
	sleep 0.01
done
during=$(cat "$KH/max_ptes_none")
[ "$during" = "$v" ] || check_fail "the child did not set max_ptes_none ($during, wanted $v)"
kill -TERM "$child"
wait "$child"
now=$(cat "$KH/max_ptes_none")
[ "$now" = "$orig_none" ] || {
	echo "$orig_none" >"$KH/max_ptes_none"
	check_fail "a test killed by SIGTERM left max_ptes_none at $now (restored to $orig_none here)"
}
echo "ok: the EXIT trap restores sysfs knobs (max_ptes_none is $now)"

# 2. Defaults from sysfs.  Ranges: 0 half, 1 cowhalf (256 shared), 2 full.
wl_start half cowhalf full
P=$WL_PID B=$WL_BASE N=$WL_NR FD=$WL_FD

# plan_case NAME MTHPD-ARGS...: plan --json, compared with stdin.
plan_case() {
	local name=$1
	shift
	echo "   (sysfs none=$(cat "$KH/max_ptes_none") swap=$(cat "$KH/max_ptes_swap")" \
		"shared=$(cat "$KH/max_ptes_shared"))"
	json_run plan "$name" "$@"
	json_norm "$TMP/$name.json" "$P" "$B" "$N" >"$TMP/$name.actual"
	expect_diff "$name" "$TMP/$name.expected" "$TMP/$name.actual"
}

thp_set khugepaged/max_ptes_none 0
thp_set khugepaged/max_ptes_shared 256
thp_set khugepaged/max_ptes_swap 64
plan_case sysfs-none0 <<EOF
0 0 9 skip exceed_none_pte 256 0
1 0 9 collapse succeeded 512 256
2 0 9 collapse succeeded 512 0
EOF
plan_case option-none511 --max-ptes-none 511 <<EOF
0 0 9 collapse succeeded 256 0
1 0 9 collapse succeeded 512 256
2 0 9 collapse succeeded 512 0
EOF

thp_set khugepaged/max_ptes_none 511
thp_set khugepaged/max_ptes_shared 255
plan_case sysfs-none511-shared255 <<EOF
0 0 9 collapse succeeded 256 0
1 0 9 skip exceed_shared_pte 512 256
2 0 9 collapse succeeded 512 0
EOF
plan_case option-shared256-none0 --max-ptes-shared 256 --max-ptes-none 0 <<EOF
0 0 9 skip exceed_none_pte 256 0
1 0 9 collapse succeeded 512 256
2 0 9 collapse succeeded 512 0
EOF

# collapse reads the same defaults: only "full" qualifies.
thp_set khugepaged/max_ptes_none 0
"$MTHPD" collapse --pid "$P" --json >"$TMP/collapse.json" 2>"$TMP/collapse.err"
rc=$?
echo "== collapse --pid $P --json (exit $rc; sysfs none=0 shared=255)"
[ "$rc" = 0 ] || check_fail "collapse: exit status $rc: $(cat "$TMP/collapse.err")"
json_check "$TMP/collapse.json" collapse || check_fail "collapse: JSON contract"
json_norm "$TMP/collapse.json" "$P" "$B" "$N" >"$TMP/collapse.actual"
cat >"$TMP/collapse.expected" <<EOF
0 0 9 skip exceed_none_pte 256 0 not_attempted
1 0 9 skip exceed_shared_pte 512 256 not_attempted
2 0 9 collapse succeeded 512 0 succeeded
EOF
expect_diff collapse "$TMP/collapse.expected" "$TMP/collapse.actual"
"$INSPECT" "$P" "$B" "$N" >"$TMP/inspect" || die "thp-inspect failed"
cat "$TMP/inspect"
if [ "$(grep -c 'pmd=1' "$TMP/inspect")" != 1 ] || ! sed -n 3p "$TMP/inspect" | grep -q 'pmd=1'; then
	check_fail "expected only range 2 to be a THP"
fi

# Restore now (the trap would too) and check.
cleanup_restore() {
	local i
	for ((i = ${#RESTORE[@]} - 2; i >= 0; i -= 2)); do
		echo "${RESTORE[i + 1]}" >"${RESTORE[i]}"
	done
	RESTORE=()
}
cleanup_restore
[ "$(cat "$KH/max_ptes_none") $(cat "$KH/max_ptes_swap") $(cat "$KH/max_ptes_shared")" = \
	"$orig_none $orig_swap $orig_shared" ] || check_fail "knobs not restored"

memory_ok "$P" "$FD"
finish
