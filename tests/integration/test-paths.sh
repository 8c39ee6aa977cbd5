#!/bin/bash
# The kernel-feature paths give the same plan: PAGEMAP_SCAN (holes skipped,
# only the named pages read) and PROCMAP_QUERY against plain pagemap reads
# and /proc/PID/maps, as on kernels before 6.7 and 6.11.
. "$(dirname "$0")/lib.sh"
require_all

wl_start full empty empty sparse empty half empty empty empty mixed16 zero empty full
P=$WL_PID
for args in "" "--sizes 2M,64K --max-ptes-none 0" "--sizes 2M,32K,16K --max-ptes-none 511" "--max-ptes-none 64"; do
	# shellcheck disable=SC2086  # word splitting of the options is meant
	"$MTHPD" plan --pid "$P" --json $args >"$TMP/new.json" 2>"$TMP/new.err" ||
		check_fail "plan $args: $(cat "$TMP/new.err")"
	# shellcheck disable=SC2086
	MTHPD_DISABLE=pagemap_scan,procmap_query "$MTHPD" plan --pid "$P" --json $args \
		>"$TMP/old.json" 2>"$TMP/old.err" || check_fail "plan $args (fallbacks): $(cat "$TMP/old.err")"
	n=$(wc -l <"$TMP/new.json")
	echo "plan $args: $n blocks"
	[ "$n" -gt 0 ] || check_fail "plan $args: no block at all"
	cmp -s "$TMP/new.json" "$TMP/old.json" ||
		check_fail "plan $args differs between the PAGEMAP_SCAN and the fallback path: $(diff "$TMP/old.json" "$TMP/new.json" | head -5)"
done
finish
