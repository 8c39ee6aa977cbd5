#!/bin/bash
# Issue 29.1: `mthpd status --json` of a live daemon, checked three ways:
# - against the kernel: a collapsed process's anon_bytes is its RssAnon,
#   huge_bytes its AnonHugePages (smaps_rollup), collapsed_bytes_total the
#   two ranges mthpd made huge;
# - against the text form: the same policies, units and processes in the
#   same order, with the same numbers (the text's columns made again from
#   the JSON's bytes), under --unit, --policy and --limit too;
# - a comm with quotes, a backslash and control bytes (prctl PR_SET_NAME):
#   jq reads the JSON, and its comm is exactly those bytes.
# Then the daemon stopped: status --json says stale, exit 3, as the text.
. "$(dirname "$0")/lib.sh"
require_all

# 14 bytes: '"', '\', SOH, TAB, ESC and a CSI that would recolour a terminal
EVIL=$'q"b\\c\x01\t\x1b[31mx'
child_cgroups js-a js-b
A=${CGROUPS[0]} B=${CGROUPS[1]}
UA=${A#"$CG"} UB=${B#"$CG"}
in_cgroup "$A" --comm "$EVIL" full full half
P=$WL_PID PB=$WL_BASE PFD=$WL_FD
in_cgroup "$A" full
P2=$WL_PID P2B=$WL_BASE
in_cgroup "$B" full
Q=$WL_PID QB=$WL_BASE

CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=100\nstate_file=%s\nmetrics_file=\n' "$TMP/status" >"$CONF/mthpd.conf"
printf '[Match]\ncgroup=/mthpd-js-a-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=0\n' >"$CONF/policy.d/50-a.conf"
printf '[Match]\ncgroup=/mthpd-js-b-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=0\n' >"$CONF/policy.d/60-b.conf"
"$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
DAEMON=$!
huge_within "$P" "$PB" 3 4096 || check_fail "the two full ranges of $P were not collapsed"
huge_within "$P2" "$P2B" 1 2048 || check_fail "the range of $P2 was not collapsed"
huge_within "$Q" "$QB" 1 2048 || check_fail "the range of $Q was not collapsed"
sleep 1.5 # a few passes more, and a state file written after them

json() { "$MTHPD" status --json --config-dir "$CONF" "$@"; }
json >"$TMP/s.json"
rc=$?
[ "$rc" = 0 ] || check_fail "status --json: exit $rc"
jq -e . "$TMP/s.json" >/dev/null || die "status --json is not valid JSON: $(head -c 2000 "$TMP/s.json")"
jq -c 'del(.policies)' "$TMP/s.json" | sed 's/^/   json: /'
jq -c '.policies[] | del(.units)' "$TMP/s.json" | sed 's/^/   json: /'
jq -e --argjson pid "$DAEMON" '.schema_version == 1 and .daemon.status == "running" and .daemon.pid == $pid
	and .daemon.comm == "mthpd" and (.daemon.state_age_seconds < 5) and .passes_total > 0
	and (.counters.by_size["2M"].collapse_alloc >= 4)' "$TMP/s.json" >/dev/null ||
	check_fail "status --json: the daemon's members"
! LC_ALL=C grep -q $'[\x01-\x1f\x7f]' "$TMP/s.json" || check_fail "status --json: a raw control byte"

# proc PID: the JSON object of that process
proc() { jq -c --argjson p "$1" '.policies[].units[].processes[] | select(.pid == $p)' "$TMP/s.json"; }
kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/${3:-status}"; }
l=$(proc "$P")
echo "   json: pid $P: $l"
[ -n "$l" ] || check_fail "status --json: no process $P"
jq -e --arg c "$EVIL" '.comm == $c' <<<"$l" >/dev/null || check_fail "status --json: the comm of $P is not its bytes: $(jq .comm <<<"$l")"
rss=$(($(kb "$P" RssAnon) * 1024))
huge=$(($(kb "$P" AnonHugePages smaps_rollup) * 1024))
echo "kernel: pid $P RssAnon $rss, AnonHugePages $huge"
a=$(jq .anon_bytes <<<"$l")
[ "${a:-0}" -ge $((rss - 262144)) ] && [ "${a:-0}" -le $((rss + 262144)) ] ||
	check_fail "$P: anon_bytes ${a:-?}, the kernel says RssAnon $rss"
[ "$(jq .huge_bytes <<<"$l")" = "$huge" ] || check_fail "$P: huge_bytes $(jq .huge_bytes <<<"$l"), the kernel says AnonHugePages $huge"
[ "$(jq .collapsed_bytes_total <<<"$l")" = $((2 * RANGE_SIZE)) ] || check_fail "$P: collapsed_bytes_total, expected two ranges: $l"
jq -e '.last_result == "succeeded" and ([.why_not[] | select(startswith("vmas_refused=") | not)] == [])' <<<"$l" >/dev/null ||
	check_fail "$P: last_result or why_not: $l"
# the unit sums its two processes, the policy its unit
u=$(jq -c --arg u "$UA" '.policies[] | select(.name == "50-a.conf") | .units[] | select(.name == $u)' "$TMP/s.json")
a2=$(proc "$P2" | jq .anon_bytes)
jq -e --argjson a $((a + a2)) '.process_count == 2 and .anon_bytes == $a and .huge_bytes >= 6291456 and (.processes | length) == 2' <<<"$u" >/dev/null ||
	check_fail "status --json: unit $UA does not sum its processes: $u"

# human BYTES: as mthpd shows a size (lib/text.c mthpd_text_bytes)
HUMAN='function human(b,   u, v) {
	if (b < 1024) return sprintf("%d B", b)
	split("KiB MiB GiB TiB PiB", U, " "); v = b / 1024; u = 1
	while (v >= 1024 && u < 5) { v /= 1024; u++ }
	return sprintf(v >= 99.95 ? "%.0f %s" : v >= 9.995 ? "%.1f %s" : "%.2f %s", v, U[u])
}'
# text_of ARGS...: what `status ARGS` shows of each policy, unit and process,
# made from `status --json ARGS`: the sentence's counts, then per row the
# name (pid), the columns from ANON on
text_of() {
	json "$@" | jq -r '.policies[] | "policy \(.name) \(.process_count) \(.thp_disabled_count) \(.vmas_refused) \(.anon_bytes) \(.huge_bytes) \(.huge_percent)",
		(.units[] | "unit \(.name) \(.process_count) \(.anon_bytes) \(.huge_bytes) \(.huge_percent) \(.collapsed_last_pass_bytes) \(.collapsed_bytes_total) \(.last_result) \(.why_not | if length == 0 then "-" else join(",") end)",
			(.processes[] | "process \(.pid) \(.anon_bytes) \(.huge_bytes) \(.huge_percent) \(.collapsed_last_pass_bytes) \(.collapsed_bytes_total) \(.last_result) \(.why_not | if length == 0 then "-" else join(",") end)"))' |
		awk "$HUMAN"'
		$1 == "policy" { printf "policy %s: %d process%s (%d with THP disabled, %d VMAs refused); anon %s, huge %s (%.1f%%)\n", $2, $3, $3 == 1 ? "" : "es", $4, $5, human($6), human($7), $8; next }
		$1 == "unit" { printf "%s %d %s %s %.1f%% %s %s %s %s\n", $2, $3, human($4), human($5), $6, human($7), human($8), $9, $10; next }
		{ printf "%s %s %s %.1f%% %s %s %s %s\n", $2, human($3), human($4), $5, human($6), human($7), $8, $9 }'
}
# text ARGS...: the same lines read from the text form (the comm, which the
# text escapes, left out of the process rows; the columns joined by one blank)
text() {
	"$MTHPD" status --config-dir "$CONF" "$@" | awk '
		/^policy / { sub(/; collapsed .*/, ""); print; next }
		/^  [^ ]/ && $1 != "UNIT" && $1 != "and" && $1 !~ /^\(/ { $1 = $1; print; next }
		/^    [0-9]/ { pid = $1; n = NF; row = ""
			# the last 8 columns: 2 words per size, %, result, why not
			for (i = NF - 10; i <= NF; i++) row = row " " $i
			print pid row }' | sed -E 's/ ([0-9.]+) (B|KiB|MiB|GiB)/ \1_\2/g'
}
compare() {
	local want got
	for _ in 1 2 3; do # the daemon rewrites the file between the two reads: retry
		want=$(text_of "$@" | sed -E 's/ ([0-9.]+) (B|KiB|MiB|GiB)/ \1_\2/g')
		got=$(text "$@")
		[ "$want" = "$got" ] && break
		sleep 0.3
	done
	echo "== status $*: $(wc -l <<<"$got") lines as the JSON says"
	[ "$want" = "$got" ] || check_fail "status $*: the text is not the JSON's:
$(diff <(echo "$want") <(echo "$got"))"
}
compare
compare --limit 1
compare --unit "$UB"
compare --policy 50-a.conf
compare --policy 60-b.conf --unit "/mthpd-js-*"
[ "$(json --limit 1 | jq --arg u "$UA" '.policies[] | select(.name == "50-a.conf") | .units[] | select(.name == $u) | "\(.processes | length) \(.processes_omitted)"')" = '"1 1"' ] ||
	check_fail "status --json --limit 1: not one process shown and one omitted in $UA"
[ "$(json --unit "$UB" | jq -c '[.policies[].name]')" = '["60-b.conf"]' ] || check_fail "status --json --unit $UB: not only its policy"
[ "$(json --policy 60-b.conf | jq -c '[.policies[].units[].name]')" = "[\"$UB\"]" ] || check_fail "status --json --policy 60-b.conf"

memory_ok "$P" "$PFD"
# stopped: the file stays; once older than 5 s, stale for both forms (exit 3)
kill -STOP "$DAEMON"
sleep 5.5
json >"$TMP/stale.json"
rc=$?
"$MTHPD" status --config-dir "$CONF" >/dev/null
trc=$?
kill -CONT "$DAEMON"
[ "$rc" = 3 ] && [ "$trc" = 3 ] || check_fail "a stopped daemon: status --json exit $rc, text exit $trc, expected 3"
jq -e '.daemon.status == "stale" and (.policies | length) == 2' "$TMP/stale.json" >/dev/null ||
	check_fail "a stopped daemon: status --json: $(jq -c .daemon "$TMP/stale.json")"
daemon_stop
json >"$TMP/gone.json"
rc=$?
[ "$rc" = 3 ] && jq -e '.daemon.status == "not_running" and (.policies == null)' "$TMP/gone.json" >/dev/null ||
	check_fail "the daemon gone: status --json exit $rc: $(cat "$TMP/gone.json")"
finish
