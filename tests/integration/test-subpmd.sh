#!/bin/bash
# Collapse below 2M through the contrib/kernel patch, in the three cases
# mthpd's start-up probe tells apart (lib/features.c):
#   unpatched  the order flag is EINVAL; mthpd reports 64K blocks unsupported,
#              attempts none of them, and nothing changes;
#   patched, the size disabled in sysfs: EOPNOTSUPP; mthpd the same;
#   patched, enabled: mthpd collapses exactly the fully written 64K blocks to
#              64K folios (max_ptes_none 0, so in strict mode), leaves the
#              partly written ones alone, and the workload's memory is
#              unchanged; the kernel refuses a strict collapse of a block
#              with an empty or zero page (ENODATA) and changes nothing.
# Which case runs depends on the kernel: stock kernels take the first;
# tests/vm runs the others on a kernel carrying the patch.
. "$(dirname "$0")/lib.sh"
require_all
BLOCK=$O/tests/integration/collapse-block
[ -x "$BLOCK" ] || die "$BLOCK not built (run make)"
K64=65536
ORDER=1 STRICT=2

# Ranges:   0    1       2    3
wl_start half mixed16 full zero
P=$WL_PID B=$WL_BASE N=$WL_NR FD=$WL_FD

subpmd=$("$MTHPD" plan --pid "$P" --sizes 64K | sed -n 's/^kernel: .*subpmd_collapse=\([^ ]*\).*/\1/p')
echo "mthpd's probe: subpmd_collapse=$subpmd"

# at R K: the address of 64K block K of range R.
at() { printf '0x%x' $((B + $1 * RANGE_SIZE + $2 * K64)); }

# block_expect WHAT R K LEN FLAGS ANSWER: collapse-block's answer must be ANSWER.
block_expect() {
	local what=$1 got
	got=$("$BLOCK" "$P" "$(at "$2" "$3")" "$4" "$5") || die "collapse-block failed"
	if [ "$got" = "$6" ]; then
		echo "ok: $what: $got"
	else
		check_fail "$what: the kernel answered '$got', expected '$6'"
	fi
}

# folios_of R: thp-inspect's fields for range R, without the address.
folios_of() {
	"$INSPECT" "$P" "$B" "$N" | sed -n "$(($1 + 1))p" | cut -d' ' -f2-
}

# collapse_64k NAME RESULT: `mthpd collapse --sizes 64K --max-ptes-none 0`;
# every planned 64K block in the workload's ranges must have RESULT, and
# they must be the $NFULL full blocks of the workload.  (The
# rest of the process, its heap say, may hold full blocks too: under ASan
# it does.)  Range 3 counts too where zero_range says so.  Sets COLLAPSED: the 64K blocks succeeded in the whole process.
collapse_64k() {
	local name=$1 want=$2 n other
	json_run collapse "$name" --sizes 64K --max-ptes-none 0 --max-ptes-swap 0 --max-ptes-shared 0 </dev/null
	json_norm "$TMP/$name.json" "$P" "$B" "$N" | awk '$4 == "collapse" { print $8 }' >"$TMP/$name.results"
	n=$(grep -c "^$want\$" "$TMP/$name.results")
	other=$(grep -vc "^$want\$" "$TMP/$name.results")
	COLLAPSED=$(jq -r 'select(.order == 4 and .result == "succeeded") | .addr' "$TMP/$name.json" | wc -l)
	if [ "$n" = "$NFULL" ] && [ "$other" = 0 ]; then
		echo "ok: $name: $NFULL full 64K blocks planned, all $want"
	else
		check_fail "$name: $n planned blocks $want, $other otherwise; expected $NFULL $want"
	fi
}

"$INSPECT" "$P" "$B" "$N" >"$TMP/inspect.0" || die "thp-inspect failed"
cat "$TMP/inspect.0"
zero_range "$P" "$B" 3
# The full 64K blocks: 16 + 16 + 32 in ranges 0 to 2, and the 32 of range 3
# where its read faults got zero-filled pages of their own.
NFULL=$((64 + 32 * ZERO_FULL))

# unchanged WHAT: every range's folios as at the start.
unchanged() {
	"$INSPECT" "$P" "$B" "$N" >"$TMP/inspect.now" || die "thp-inspect failed"
	if diff -u "$TMP/inspect.0" "$TMP/inspect.now" >"$TMP/diff"; then
		echo "ok: $1: nothing changed"
	else
		check_fail "$1: folios changed (- before, + after):"
		cat "$TMP/diff"
	fi
}

# THP off for mthpd itself (a parent's PR_SET_THP_DISABLE): the probe
# cannot tell, and says why; sub-PMD blocks are not attempted.
"$BLOCK" --thp-disabled "$MTHPD" plan --pid "$P" --sizes 64K --max-ptes-none 0 >"$TMP/plan.nothp"
u=$(sed -n 's/^kernel: .*subpmd_collapse=\([^ ]*\).*/\1/p' "$TMP/plan.nothp")
[ "$u" = "unknown(PR_SET_THP_DISABLE)" ] && echo "ok: THP disabled for mthpd: subpmd_collapse=$u" ||
	check_fail "THP disabled for mthpd: subpmd_collapse=$u, expected unknown(PR_SET_THP_DISABLE)"
grep -q "32x 64K collapse (not supported by this kernel)" "$TMP/plan.nothp" ||
	check_fail "THP disabled for mthpd: the 64K blocks are not marked unsupported"

case $subpmd in
unpatched)
	block_expect "order flag, full 64K block" 2 0 $K64 $ORDER EINVAL
	block_expect "order and strict flags" 2 0 $K64 $((ORDER | STRICT)) EINVAL
	collapse_64k unpatched unsupported
	"$MTHPD" plan --pid "$P" --sizes 64K --max-ptes-none 0 >"$TMP/plan.unpatched"
	grep -q "32x 64K collapse (not supported by this kernel)" "$TMP/plan.unpatched" &&
		echo "ok: plan says this kernel cannot collapse 64K" ||
		check_fail "plan does not say 'not supported by this kernel': $(grep 64K "$TMP/plan.unpatched" | head -3)"
	unchanged "unpatched kernel"
	;;
patched:*)
	KNOB=hugepages-64kB/enabled
	[ -e "$THP/$KNOB" ] || die "a patched kernel without $THP/$KNOB"

	# 1. 64K disabled by the admin: the probe leaves it out, the kernel
	# answers EOPNOTSUPP, mthpd attempts nothing.
	thp_set "$KNOB" never
	sub=$("$MTHPD" plan --pid "$P" --sizes 64K | sed -n 's/^kernel: .*subpmd_collapse=\([^ ]*\).*/\1/p')
	case $sub in
	patched:*64K*) check_fail "64K set to never, the probe still says $sub" ;;
	patched:*) echo "ok: 64K set to never: subpmd_collapse=$sub" ;;
	*) check_fail "64K set to never: the probe says $sub, expected patched:..." ;;
	esac
	"$MTHPD" plan --pid "$P" --sizes 64K --max-ptes-none 0 >"$TMP/plan.disabled"
	grep -q "32x 64K collapse (size disabled in sysfs)" "$TMP/plan.disabled" &&
		echo "ok: plan says the 64K size is disabled" ||
		check_fail "plan does not say 'size disabled in sysfs': $(grep 64K "$TMP/plan.disabled" | head -3)"
	block_expect "64K disabled, full block" 2 0 $K64 $ORDER EOPNOTSUPP
	collapse_64k disabled unsupported
	unchanged "64K disabled"

	# 2. Enabled ("madvise": the workload's VMA is not MADV_HUGEPAGE, so
	# faults and khugepaged still leave it alone).
	thp_set "$KNOB" madvise
	STAT=$THP/hugepages-64kB/stats/collapse_alloc
	# The argument checks of the ABI, on a block that could be collapsed.
	got=$("$BLOCK" "$P" "$(($(at 2 0) + 4096))" $K64 $ORDER)
	[ "$got" = EINVAL ] && echo "ok: unaligned 64K block: EINVAL" ||
		check_fail "unaligned 64K block: '$got', expected EINVAL"
	block_expect "order 1 (8K) block" 2 0 8192 $ORDER EINVAL
	block_expect "48K, not a power of two" 2 0 49152 $ORDER EINVAL
	block_expect "4M, above PMD size" 0 0 $((2 * RANGE_SIZE)) $ORDER EINVAL
	block_expect "strict without order" 2 0 $K64 $STRICT EINVAL
	# Strict refusals: a block with 4 untouched pages, a block of zero pages.
	# A refusal that was asked for moves no statistic, not even
	# collapse_exceed_none_pte (checked after the probe, below).
	NONE=$THP/hugepages-64kB/stats/collapse_exceed_none_pte
	n0=$(cat "$NONE")
	block_expect "strict, 12 of 16 pages written" 1 1 $K64 $((ORDER | STRICT)) ENODATA
	if [ "$ZERO_FULL" = 0 ]; then
		block_expect "strict, zero pages" 3 0 $K64 $((ORDER | STRICT)) ENODATA
	else
		echo "no zero pages on this kernel: the strict refusal of zero pages is not checked"
	fi
	unchanged "refused blocks"

	# The probe answers from the strict refusal: no folio, no statistics.
	a0=$(cat "$STAT")
	sub=$("$MTHPD" plan --pid "$P" --sizes 64K | sed -n 's/^kernel: .*subpmd_collapse=\([^ ]*\).*/\1/p')
	case $sub in
	patched:*64K*) echo "ok: 64K set to madvise: subpmd_collapse=$sub" ;;
	*) check_fail "64K set to madvise: the probe says $sub, expected patched:...64K..." ;;
	esac
	[ "$(cat "$STAT")" = "$a0" ] && echo "ok: the probe left $STAT as it was" ||
		check_fail "the probe changed $STAT from $a0 to $(cat "$STAT")"
	[ "$(cat "$NONE")" = "$n0" ] && echo "ok: the strict refusals and the probe left $NONE as it was" ||
		check_fail "the strict refusals and the probe changed $NONE from $n0 to $(cat "$NONE")"

	# mthpd itself, max_ptes_none 0: strict mode, only the full blocks.
	collapse_64k enabled succeeded
	a1=$(cat "$STAT")
	[ $((a1 - a0)) = "$COLLAPSED" ] && echo "ok: $STAT grew by $COLLAPSED, mthpd's 64K collapses" ||
		check_fail "$STAT grew by $((a1 - a0)), mthpd collapsed $COLLAPSED 64K blocks"
	for want in "0 present=256 zero=0 swap=0 pmd=0 folios=order4x16" \
		"1 present=448 zero=0 swap=0 pmd=0 folios=order4x16,order0x192" \
		"2 present=512 zero=0 swap=0 pmd=0 folios=order4x32"; do
		got=$(folios_of "${want%% *}")
		[ "$got" = "${want#* }" ] && echo "ok: range ${want%% *}: $got" ||
			check_fail "range ${want%% *}: '$got', expected '${want#* }'"
	done
	v=$(wl_verify "$P" "$FD")
	[ "$v" = ok ] && echo "ok: workload memory after collapse: ok" ||
		check_fail "workload memory after collapse: $v"

	# Without strict the kernel fills a partly written block with zeroes.
	block_expect "not strict, 12 of 16 pages written" 1 1 $K64 $ORDER "ok $K64"
	got=$(folios_of 1)
	[ "$got" = "present=452 zero=0 swap=0 pmd=0 folios=order4x17,order0x180" ] &&
		echo "ok: range 1: $got" || check_fail "range 1 after a non-strict collapse: '$got'"
	v=$(wl_verify "$P" "$FD")
	[ "$v" = ok ] && echo "ok: workload memory after a non-strict collapse: ok" ||
		check_fail "workload memory after a non-strict collapse: $v"
	;;
*)
	skip "mthpd cannot tell whether this kernel collapses below 2M: $subpmd"
	;;
esac

v=$(wl_verify "$P" "$FD")
[ "$v" = ok ] || check_fail "workload memory at the end: $v"
echo "workload memory: $v"
finish
