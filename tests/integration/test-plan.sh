#!/bin/bash
# `mthpd plan` on a live process: for each 2 MiB page pattern and set of
# knobs, the blocks of the order walk are derived here from first principles
# (khugepaged's rules, README.md) and compared exactly with mthpd's --json.
# A plan must change nothing: thp_collapse_alloc, the folios behind every
# range, and the memory's contents stay as they were.
. "$(dirname "$0")/lib.sh"
require_all

# Ranges:          0    1    2    3     4      5   6       7       8
PATTERNS=(full half zero empty sparse cow cowhalf mixed16 full)
wl_start "${PATTERNS[@]}"
P=$WL_PID B=$WL_BASE N=$WL_NR FD=$WL_FD

alloc0=$(vmstat thp_collapse_alloc)
"$INSPECT" "$P" "$B" "$N" >"$TMP/inspect.before" || die "thp-inspect failed"
cat "$TMP/inspect.before"
grep -q 'pmd=1' "$TMP/inspect.before" && die "a range is a THP before any collapse"
zero_range "$P" "$B" 2

# zero2: the line of range 2 ("zero"): all none PTEs where the kernel
# maps the shared zero page; where it maps zero-filled pages of their own,
# a fully occupied range, as range 0.
zero2() {
	if [ "$ZERO_FULL" = 1 ]; then
		echo "2 0 9 collapse succeeded 512 0"
	else
		echo "2 0 9 skip exceed_none_pte 0 0"
	fi
}

# plan_case NAME MTHPD-ARGS...: runs plan --json, checks the contract, and
# compares with the expectation on stdin.
plan_case() {
	local name=$1
	shift
	json_run plan "$name" "$@"
	json_norm "$TMP/$name.json" "$P" "$B" "$N" >"$TMP/$name.actual"
	expect_diff "$name" "$TMP/$name.expected" "$TMP/$name.actual"
	if [ -n "$(jq -r 'select(.order == 9 and .supported != true) | .addr' "$TMP/$name.json")" ]; then
		check_fail "$name: a 2M block is marked not supported"
	fi
}

# 32 order-4 (64K) blocks of a range, given each block's occupancy: full
# blocks collapse, others miss on max_ptes_none (0 below PMD order).
blocks64k() {
	local r=$1 k=0 occ
	shift
	for occ in "$@"; do
		if [ "$occ" = 16 ]; then
			echo "$r $((k * 16)) 4 collapse succeeded 16 0"
		else
			echo "$r $((k * 16)) 4 skip exceed_none_pte $occ 0"
		fi
		k=$((k + 1))
	done
}
rep() { # rep N WORD: N copies
	local i
	for ((i = 0; i < $1; i++)); do echo "$2"; done
}

# Default --sizes 2M.  max_ptes_none 0: only fully occupied ranges qualify;
# zero pages do not count as occupied.  max_ptes_shared 256: the 512
# COW-shared pages of "cow" exceed it, the 256 of "cowhalf" do not.
plan_case none0-shared256 --max-ptes-none 0 --max-ptes-swap 64 --max-ptes-shared 256 <<EOF
0 0 9 collapse succeeded 512 0
1 0 9 skip exceed_none_pte 256 0
$(zero2)
4 0 9 skip exceed_none_pte 64 0
5 0 9 skip exceed_shared_pte 512 512
6 0 9 collapse succeeded 512 256
7 0 9 skip exceed_none_pte 448 0
8 0 9 collapse succeeded 512 0
EOF

# max_ptes_none 511: one occupied page is enough, but 512 zero pages are 512
# none PTEs.  max_ptes_shared 255: one short for "cowhalf".
plan_case none511-shared255 --max-ptes-none 511 --max-ptes-swap 64 --max-ptes-shared 255 <<EOF
0 0 9 collapse succeeded 512 0
1 0 9 collapse succeeded 256 0
$(zero2)
4 0 9 collapse succeeded 64 0
5 0 9 skip exceed_shared_pte 512 512
6 0 9 skip exceed_shared_pte 512 256
7 0 9 collapse succeeded 448 0
8 0 9 collapse succeeded 512 0
EOF

# The boundaries: "sparse" has exactly 448 none PTEs; max_ptes_shared 0
# refuses any shared page.
plan_case none448-shared0 --max-ptes-none 448 --max-ptes-swap 64 --max-ptes-shared 0 <<EOF
0 0 9 collapse succeeded 512 0
1 0 9 collapse succeeded 256 0
$(zero2)
4 0 9 collapse succeeded 64 0
5 0 9 skip exceed_shared_pte 512 512
6 0 9 skip exceed_shared_pte 512 256
7 0 9 collapse succeeded 448 0
8 0 9 collapse succeeded 512 0
EOF

# One below "sparse"; the largest max_ptes_shared (511) still refuses 512
# shared pages.
plan_case none447-shared511 --max-ptes-none 447 --max-ptes-swap 64 --max-ptes-shared 511 <<EOF
0 0 9 collapse succeeded 512 0
1 0 9 collapse succeeded 256 0
$(zero2)
4 0 9 skip exceed_none_pte 64 0
5 0 9 skip exceed_shared_pte 512 512
6 0 9 collapse succeeded 512 256
7 0 9 collapse succeeded 448 0
8 0 9 collapse succeeded 512 0
EOF

# mTHP: --sizes 64K,2M, max_ptes_none 0.  With an order below PMD enabled the
# scan only stops at 512 none PTEs; a shared page still stops it
# (max_ptes_shared 0).  A range short of 2M is walked in 64K blocks, each
# collapsed only when fully occupied.
# shellcheck disable=SC2046  # the lists are meant to split into words
{
	echo "0 0 9 collapse succeeded 512 0"
	echo "1 0 9 skip exceed_none_pte 256 0"
	blocks64k 1 $(rep 16 16) $(rep 16 0)
	zero2
	echo "4 0 9 skip exceed_none_pte 64 0"
	blocks64k 4 $(rep 32 2)
	echo "5 0 9 skip exceed_shared_pte 512 512"
	echo "6 0 9 skip exceed_shared_pte 512 256"
	echo "7 0 9 skip exceed_none_pte 448 0"
	blocks64k 7 $(for k in $(seq 16); do echo 16 12; done)
	echo "8 0 9 collapse succeeded 512 0"
} >"$TMP/exp64k"
plan_case sizes64k-none0 <"$TMP/exp64k" --sizes 64K,2M --max-ptes-none 0 --max-ptes-swap 0 --max-ptes-shared 0

# 16K,64K,2M: after a 64K miss the walk falls back to the four 16K blocks
# inside it (32K is not enabled).
{
	echo "0 0 9 collapse succeeded 512 0"
	echo "1 0 9 skip exceed_none_pte 256 0"
	for k in $(seq 0 31); do
		if [ "$k" -lt 16 ]; then
			echo "1 $((k * 16)) 4 collapse succeeded 16 0"
		else
			echo "1 $((k * 16)) 4 skip exceed_none_pte 0 0"
			for j in 0 1 2 3; do echo "1 $((k * 16 + j * 4)) 2 skip exceed_none_pte 0 0"; done
		fi
	done
	zero2
	echo "4 0 9 skip exceed_none_pte 64 0"
	for k in $(seq 0 31); do
		echo "4 $((k * 16)) 4 skip exceed_none_pte 2 0"
		for j in 0 1 2 3; do echo "4 $((k * 16 + j * 4)) 2 skip exceed_none_pte $(((j + 1) % 2)) 0"; done
	done
	echo "5 0 9 skip exceed_shared_pte 512 512"
	echo "6 0 9 skip exceed_shared_pte 512 256"
	echo "7 0 9 skip exceed_none_pte 448 0"
	for k in $(seq 0 31); do
		if [ $((k % 2)) = 0 ]; then
			echo "7 $((k * 16)) 4 collapse succeeded 16 0"
		else
			echo "7 $((k * 16)) 4 skip exceed_none_pte 12 0"
			for j in 0 1 2; do echo "7 $((k * 16 + j * 4)) 2 collapse succeeded 4 0"; done
			echo "7 $((k * 16 + 12)) 2 skip exceed_none_pte 0 0"
		fi
	done
	echo "8 0 9 collapse succeeded 512 0"
} >"$TMP/exp16k"
plan_case sizes16k64k-none0 <"$TMP/exp16k" --sizes 16k,64k,2m --max-ptes-none 0 --max-ptes-swap 0 --max-ptes-shared 0

# Whether this kernel can collapse below PMD order is one fact, not per block.
sup=$(cat "$TMP"/sizes*.json | jq -r 'select(.order < 9 and .action == "collapse") | .supported' | sort -u)
echo "sub-PMD collapse supported by this kernel: $sup"
[ "$(echo "$sup" | wc -l)" = 1 ] || check_fail "sub-PMD blocks disagree on \"supported\": $sup"

# The human-readable plan works too.
"$MTHPD" plan --pid "$P" --max-ptes-none 0 >"$TMP/table" 2>&1 || check_fail "plan without --json failed: $(cat "$TMP/table")"
grep -q . "$TMP/table" || check_fail "plan without --json printed nothing"

# Nothing was collapsed, nothing moved.
alloc1=$(vmstat thp_collapse_alloc)
[ "$alloc1" = "$alloc0" ] || check_fail "thp_collapse_alloc went from $alloc0 to $alloc1 during plan (another process collapsing at the same time?)"
"$INSPECT" "$P" "$B" "$N" >"$TMP/inspect.after" || die "thp-inspect failed"
if ! diff -u "$TMP/inspect.before" "$TMP/inspect.after"; then
	check_fail "the folios behind the ranges changed during plan"
fi
memory_ok "$P" "$FD"
finish
