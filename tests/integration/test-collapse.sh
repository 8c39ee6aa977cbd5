#!/bin/bash
# `mthpd collapse` on a live process turns exactly the planned ranges into
# PMD-mapped THPs and leaves the others alone, checked three ways as the
# kernel's khugepaged selftest does: the folios from pagemap + kpageflags
# (contrib/thp-inspect), AnonHugePages in /proc/PID/smaps, and the
# workload's own check of every page.  /proc/vmstat thp_collapse_alloc must
# grow by exactly one per collapsed range.  A second run finds the THPs and
# collapses nothing.
. "$(dirname "$0")/lib.sh"
require_all

# Ranges:          0    1    2    3     4      5   6       7       8    9
PATTERNS=(full half zero empty sparse cow cowhalf mixed16 full nohuge)
wl_start "${PATTERNS[@]}"
P=$WL_PID B=$WL_BASE N=$WL_NR FD=$WL_FD

"$INSPECT" "$P" "$B" "$N" >"$TMP/inspect.0" || die "thp-inspect failed"
cat "$TMP/inspect.0"
grep -q 'pmd=1' "$TMP/inspect.0" && die "a range is a THP before any collapse"
[ "$(anon_huge_kb "$P" "$B" "$N")" = 0 ] || die "AnonHugePages is not 0 before any collapse"
zero_range "$P" "$B" 2

# collapse_case NAME MTHPD-ARGS...: runs collapse --json, checks exit 0 and
# the contract, compares the blocks with the expectation on stdin.
collapse_case() {
	local name=$1
	shift
	json_run collapse "$name" "$@"
	# ranges 0-8 exactly; range 9 (nohuge) is in a VMA the kernel refuses:
	# mthpd leaves it out (README: not considered), and never attempts it
	json_norm "$TMP/$name.json" "$P" "$B" 9 >"$TMP/$name.actual"
	expect_diff "$name" "$TMP/$name.expected" "$TMP/$name.actual"
	json_norm "$TMP/$name.json" "$P" "$B" "$N" | grep '^9 ' >"$TMP/$name.nohuge"
	if [ -s "$TMP/$name.nohuge" ]; then
		sed 's/^/   nohuge range: /' "$TMP/$name.nohuge"
		check_fail "$name: the MADV_NOHUGEPAGE range was considered"
	fi
}

# inspect_expect NAME RANGE=LINE...: thp-inspect now; the named ranges must
# read as given (the part after the address), every other range as in the
# snapshot FILE $REF.
inspect_expect() {
	local name=$1 r line
	shift
	"$INSPECT" "$P" "$B" "$N" >"$TMP/inspect.$name" || die "thp-inspect failed"
	sed 's/^/   /' "$TMP/inspect.$name"
	cp "$REF" "$TMP/inspect.$name.expected"
	for arg in "$@"; do
		r=${arg%%=*}
		line=$(sed -n "$((r + 1))p" "$REF")
		line="${line%% *} ${arg#*=}"
		sed -i "$((r + 1))c\\$line" "$TMP/inspect.$name.expected"
	done
	if ! diff -u "$TMP/inspect.$name.expected" "$TMP/inspect.$name" >"$TMP/diff"; then
		check_fail "$name: folios (thp-inspect) differ from the expected (- expected, + actual):"
		cat "$TMP/diff"
	else
		echo "ok: $name: folios"
	fi
}

THP_LINE="present=512 zero=0 swap=0 pmd=1 folios=order9x1"
# Range 2 ("zero") is collapsed too where the kernel gave its read faults
# zero-filled pages of their own (zero_range): then 4 THPs, not 3.
NTHP=$((3 + ZERO_FULL))
# zero2, zero2_later: range 2's line in the first case, and in the later ones.
zero2() {
	if [ "$ZERO_FULL" = 1 ]; then
		echo "2 0 9 collapse succeeded 512 0 succeeded"
	else
		echo "2 0 9 skip exceed_none_pte 0 0 not_attempted"
	fi
}
zero2_later() {
	if [ "$ZERO_FULL" = 1 ]; then
		echo "2 0 9 skip page_pmd_mapped 512 0 not_attempted"
	else
		echo "2 0 9 skip exceed_none_pte 0 0 not_attempted"
	fi
}

# 1. Collapse at 2M with max_ptes_none 0 and max_ptes_shared 256: the two
# "full" ranges and "cowhalf" (256 shared pages, the kernel un-shares them),
# and "zero" where its pages are zero-filled pages of its own.
alloc0=$(vmstat thp_collapse_alloc)
collapse_case first --sizes 2M --max-ptes-none 0 --max-ptes-swap 64 --max-ptes-shared 256 <<EOF
0 0 9 collapse succeeded 512 0 succeeded
1 0 9 skip exceed_none_pte 256 0 not_attempted
$(zero2)
4 0 9 skip exceed_none_pte 64 0 not_attempted
5 0 9 skip exceed_shared_pte 512 512 not_attempted
6 0 9 collapse succeeded 512 256 succeeded
7 0 9 skip exceed_none_pte 448 0 not_attempted
8 0 9 collapse succeeded 512 0 succeeded
EOF
alloc1=$(vmstat thp_collapse_alloc)
[ $((alloc1 - alloc0)) = "$NTHP" ] ||
	check_fail "thp_collapse_alloc grew by $((alloc1 - alloc0)), expected $NTHP (another process collapsing at the same time?)"
REF=$TMP/inspect.0
if [ "$ZERO_FULL" = 1 ]; then
	inspect_expect first 0="$THP_LINE" 2="$THP_LINE" 6="$THP_LINE" 8="$THP_LINE"
else
	inspect_expect first 0="$THP_LINE" 6="$THP_LINE" 8="$THP_LINE"
fi
kb=$(anon_huge_kb "$P" "$B" "$N")
[ "$kb" = $((NTHP * 2048)) ] || check_fail "AnonHugePages of the VMA is $kb kB, expected $((NTHP * 2048))"
v=$(wl_verify "$P" "$FD")
[ "$v" = ok ] || check_fail "workload memory after the first collapse: $v"
echo "workload memory: $v"

# 2. The same again: the THPs are found PMD-mapped and skipped; nothing is
# allocated.  (The check above read only pages that were present, so the
# empty range is still empty.)
collapse_case again --sizes 2M --max-ptes-none 0 --max-ptes-swap 64 --max-ptes-shared 256 <<EOF
0 0 9 skip page_pmd_mapped 512 0 not_attempted
1 0 9 skip exceed_none_pte 256 0 not_attempted
$(zero2_later)
4 0 9 skip exceed_none_pte 64 0 not_attempted
5 0 9 skip exceed_shared_pte 512 512 not_attempted
6 0 9 skip page_pmd_mapped 512 0 not_attempted
7 0 9 skip exceed_none_pte 448 0 not_attempted
8 0 9 skip page_pmd_mapped 512 0 not_attempted
EOF
alloc2=$(vmstat thp_collapse_alloc)
[ "$alloc2" = "$alloc1" ] || check_fail "thp_collapse_alloc grew by $((alloc2 - alloc1)) on the second run, expected 0"
REF=$TMP/inspect.first
inspect_expect again
kb=$(anon_huge_kb "$P" "$B" "$N")
[ "$kb" = $((NTHP * 2048)) ] || check_fail "AnonHugePages after the second run is $kb kB, expected $((NTHP * 2048))"

# 3. 64K,2M with max_ptes_none 0: the full 64K blocks of "half" and
# "mixed16" are planned.  A kernel without sub-PMD collapse reports them
# unsupported without attempting them; one with it collapses them.  64K is
# enabled ("madvise": this VMA is not MADV_HUGEPAGE, so faults and
# khugepaged leave it alone) so that a kernel with contrib/kernel does.
if [ -e "$THP/hugepages-64kB/enabled" ]; then
	thp_set hugepages-64kB/enabled madvise
fi
{
	echo "0 0 9 skip page_pmd_mapped 512 0 not_attempted"
	echo "1 0 9 skip exceed_none_pte 256 0 not_attempted"
	for k in $(seq 0 31); do
		if [ "$k" -lt 16 ]; then
			echo "1 $((k * 16)) 4 collapse succeeded 16 0 @"
		else
			echo "1 $((k * 16)) 4 skip exceed_none_pte 0 0 not_attempted"
		fi
	done
	zero2_later
	echo "4 0 9 skip exceed_none_pte 64 0 not_attempted"
	for k in $(seq 0 31); do echo "4 $((k * 16)) 4 skip exceed_none_pte 2 0 not_attempted"; done
	echo "5 0 9 skip exceed_shared_pte 512 512 not_attempted"
	echo "6 0 9 skip page_pmd_mapped 512 0 not_attempted"
	echo "7 0 9 skip exceed_none_pte 448 0 not_attempted"
	for k in $(seq 0 31); do
		if [ $((k % 2)) = 0 ]; then
			echo "7 $((k * 16)) 4 collapse succeeded 16 0 @"
		else
			echo "7 $((k * 16)) 4 skip exceed_none_pte 12 0 not_attempted"
		fi
	done
	echo "8 0 9 skip page_pmd_mapped 512 0 not_attempted"
} >"$TMP/exp64k"
"$MTHPD" plan --pid "$P" --json --sizes 64K,2M --max-ptes-none 0 --max-ptes-swap 0 \
	--max-ptes-shared 0 >"$TMP/plan64k.json" 2>/dev/null
sup=$(json_subpmd_supported "$TMP/plan64k.json")
case $sup in
false) sub_result=unsupported ;;
true) sub_result=succeeded ;;
*) die "plan --sizes 64K,2M: \"supported\" of the 64K blocks is '$sup'" ;;
esac
echo "sub-PMD collapse on this kernel: supported=$sup, expecting result $sub_result"
sed -i "s/@\$/$sub_result/" "$TMP/exp64k"
collapse_case mthp <"$TMP/exp64k" --sizes 64K,2M --max-ptes-none 0 --max-ptes-swap 0 --max-ptes-shared 0
REF=$TMP/inspect.first
if [ "$sup" = false ]; then
	alloc3=$(vmstat thp_collapse_alloc)
	[ "$alloc3" = "$alloc2" ] || check_fail "thp_collapse_alloc grew by $((alloc3 - alloc2)) with only unsupported blocks"
	inspect_expect mthp
else
	inspect_expect mthp 1="present=256 zero=0 swap=0 pmd=0 folios=order4x16" \
		7="present=448 zero=0 swap=0 pmd=0 folios=order4x16,order0x192"
fi

v=$(wl_verify "$P" "$FD")
[ "$v" = ok ] || check_fail "workload memory at the end: $v"
echo "workload memory: $v"
finish
