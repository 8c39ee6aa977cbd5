#!/bin/bash
# metrics_max_units= (issue 28, part 4): a node with a thousand units must
# not write a thousand series per family.  On a synthetic tree (no root
# needed) with three matched units of 6, 4 and 2 MiB:
# - at the default every unit has its series, and no "(other)";
# - at metrics_max_units=1 the largest alone has its series, the two
#   others are summed per family in unit="(other)": their processes, their
#   memory, and a zero counter; mthpd_units says 3; sums over the family
#   are the same as uncapped, and the file adds up (prom-check);
# - at 0 every unit is in "(other)";
# - check-config shows the value, and refuses 4097 with file and line.
. "$(dirname "$0")/fixture-lib.sh" mcap

fixture_tree <<'EOT'
khugepaged max_ptes_none=511 max_ptes_swap=64 max_ptes_shared=256
process 100 comm=redis-server
vma 0x7f0000000000-0x7f0000400000 rw-p
range 0x7f0000000000: 512 written
range 0x7f0000200000: 512 written
process 200 comm=other
vma 0x7f1000000000-0x7f1000200000 rw-p
range 0x7f1000000000: 512 written
process 300 comm=third
vma 0x7f2000000000-0x7f2000600000 rw-p
range 0x7f2000000000: 512 written
range 0x7f2000200000: 512 written
range 0x7f2000400000: 512 written
EOT
mkdir -p "$T/cg/system.slice/third.service"
echo 300 >"$T/cg/system.slice/third.service/cgroup.procs"

mkdir -p "$T/conf/policy.d"
cat >"$T/conf/policy.d/50-all.conf" <<'EOT'
[Match]
cgroup=/system.slice/*
[Policy]
sizes=2M
min_age=0
EOT

# run_with CAP: the metrics file of a daemon with metrics_max_units=CAP ("" for the default) in $T/m.CAP
run_with() {
	local cap=$1 out=$T/m.${1:-default} i
	{
		printf '[Daemon]\nscan_sleep_millisecs=100\nmetrics_file=%s\nstate_file=%s\n' "$out" "$T/status"
		[ -n "$cap" ] && printf 'metrics_max_units=%s\n' "$cap"
	} >"$T/conf/mthpd.conf"
	"$MTHPD" run --config-dir "$T/conf" --proc-root "$P" --sys-root "$T/tree/sys" 2>"$T/log.$cap" &
	DAEMON=$!
	for ((i = 0; i < 50; i++)); do
		grep -q "pass 2:" "$T/log.$cap" && break
		sleep 0.1
	done
	sleep 0.3
	kill -TERM "$DAEMON"
	wait "$DAEMON"
	DAEMON=""
	[ -s "$out" ] || fail "metrics_max_units=$cap: no metrics file: $(tail -3 "$T/log.$cap")"
}

# series FILE NAME: its "labels value" lines, sorted
series() { sed -n "s/^$2{policy=\"50-all.conf\",unit=\"\([^\"]*\)\"} /\1 /p" "$1" | sort; }
# sum FILE NAME: the family summed over every unit
sum() { series "$1" "$2" | awk '{ s += $2 } END { print s + 0 }'; }

run_with ""
run_with 1
run_with 0

[ "$(series "$T/m.default" mthpd_unit_anon_bytes | wc -l)" = 3 ] ||
	fail "default: not one series per unit: $(series "$T/m.default" mthpd_unit_anon_bytes)"
grep -q '^mthpd_[a-z_]*{.*unit="(other)"}' "$T/m.default" && fail "default: an (other) series with 3 units"

# the largest (third.service, 6 MiB) alone, the others summed
got=$(series "$T/m.1" mthpd_unit_anon_bytes | cut -d' ' -f1 | paste -sd' ')
[ "$got" = "(other) third.service" ] || fail "metrics_max_units=1: unit_anon_bytes series: '$got'"
[ "$(series "$T/m.1" mthpd_unit_anon_bytes | awk '$1 == "(other)" { print $2 }')" = $((6 << 20)) ] ||
	fail "metrics_max_units=1: (other) anon is not the 4 + 2 MiB of the two smaller units: $(series "$T/m.1" mthpd_unit_anon_bytes)"
[ "$(series "$T/m.1" mthpd_unit_processes | awk '$1 == "(other)" { print $2 }')" = 2 ] ||
	fail "metrics_max_units=1: (other) processes: $(series "$T/m.1" mthpd_unit_processes)"
got=$(series "$T/m.1" mthpd_unit_collapsed_bytes_total | paste -sd' ')
[ "$got" = "(other) 0 third.service 0" ] || fail "metrics_max_units=1: counters: '$got'"
grep -qx 'mthpd_units{policy="50-all.conf"} 3' "$T/m.1" || fail "metrics_max_units=1: mthpd_units: $(grep '^mthpd_units' "$T/m.1")"
for fam in mthpd_unit_processes mthpd_unit_anon_bytes mthpd_unit_huge_bytes mthpd_unit_partial_bytes; do
	for cap in 1 0; do
		[ "$(sum "$T/m.$cap" $fam)" = "$(sum "$T/m.default" $fam)" ] ||
			fail "metrics_max_units=$cap: $fam sums to $(sum "$T/m.$cap" $fam), uncapped $(sum "$T/m.default" $fam)"
	done
done
for cap in default 1 0; do
	"$(dirname "$0")/prom-check" "$T/m.$cap" >"$T/prom-check" || fail "metrics_max_units=$cap: $(cat "$T/prom-check")"
done
got=$(series "$T/m.0" mthpd_unit_anon_bytes | paste -sd' ')
[ "$got" = "(other) $((12 << 20))" ] || fail "metrics_max_units=0: '$got'"

"$MTHPD" check-config --config-dir "$T/conf" | grep -qx 'metrics_max_units=0' ||
	fail "check-config does not show metrics_max_units=0"
printf '[Daemon]\nmetrics_max_units=4097\n' >"$T/conf/mthpd.conf"
out=$("$MTHPD" check-config --config-dir "$T/conf" 2>&1)
[ "$out" = "mthpd: $T/conf/mthpd.conf:2: metrics_max_units=: '4097' is not a number from 0 to 4096" ] ||
	fail "check-config on metrics_max_units=4097: '$out'"

[ "$FAILS" = 0 ] || { echo "$FAILS check(s) failed"; exit 1; }
echo PASS
