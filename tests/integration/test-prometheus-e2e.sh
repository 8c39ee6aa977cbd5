#!/bin/bash
# End to end with the real parts (issue 29, part 5): Debian's
# prometheus-node-exporter reads mthpd's metrics file through its textfile
# collector, Debian's Prometheus scrapes it on loopback every second and
# evaluates deploy/prometheus/mthpd.rules.yml, and while the daemon
# collapses a workload of 64 MiB the recording rules, read back through
# Prometheus's HTTP API, agree with what the kernel says:
# - mthpd:unit_coverage:ratio of the workload's cgroup against
#   AnonHugePages / Anonymous of its smaps_rollup (within 0.02);
# - mthpd_unit_collapsed_bytes_total against AnonHugePages of its
#   smaps_rollup (every huge page in it is one mthpd made; at least the
#   workload's ranges, more under ASan, which maps memory of its own), and
#   mthpd:unit_collapsed_bytes:rate5m above zero;
# - no alert firing (ALERTS is empty).
# Both servers are this test's own processes, on free loopback ports, with
# their data in the test's directory.
. "$(dirname "$0")/lib.sh"
require_all
RULES=$(cd "$(dirname "$0")/../../deploy/prometheus" && pwd)/mthpd.rules.yml
for b in prometheus prometheus-node-exporter curl; do
	command -v "$b" >/dev/null || skip "no $b (Debian: apt-get install prometheus prometheus-node-exporter curl)"
done
NR=32
child_cgroups prom
A=${CGROUPS[0]}
UNIT=/mthpd-prom-$$

# a free loopback port, above the usual ones
free_port() {
	local p
	for ((p = 20000 + RANDOM % 20000; ; p++)); do
		(echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}
NE_PORT=$(free_port)
mkdir -m 0755 "$TMP/textfile"
prometheus-node-exporter --web.listen-address="127.0.0.1:$NE_PORT" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$TMP/textfile" >"$TMP/ne.log" 2>&1 &
WL_PIDS+=("$!")
PROM_PORT=$(free_port)
[ "$PROM_PORT" != "$NE_PORT" ] || PROM_PORT=$((NE_PORT + 1))
cat >"$TMP/prometheus.yml" <<EOT
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $RULES
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$NE_PORT']
EOT
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
	--web.listen-address="127.0.0.1:$PROM_PORT" >"$TMP/prom.log" 2>&1 &
WL_PIDS+=("$!")

# query EXPR: the first sample's value, or nothing
query() {
	curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
		jq -r 'select(.status == "success") | .data.result[0].value[1] // empty'
}

# ready, and scraping: the daemon's first file must be seen before its first collapse
for ((i = 0; i < 60; i++)); do
	[ "$(query 'up{job="node"}')" = 1 ] && break
	sleep 0.5
done
[ "$(query 'up{job="node"}')" = 1 ] || die "Prometheus did not scrape node_exporter: $(tail -n 3 "$TMP/prom.log")"

# shellcheck disable=SC2046 # one word per range
in_cgroup "$A" $(for ((i = 0; i < NR; i++)); do echo full; done)
P=$WL_PID B=$WL_BASE FD=$WL_FD
CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=100\nstate_file=%s\nmetrics_file=%s\n' "$TMP/status" "$TMP/textfile/mthpd.prom" \
	>"$CONF/mthpd.conf"
# min_age=3: the unit's zero series is scraped before the collapses, so that rate() sees them
printf '[Match]\ncgroup=%s\n[Policy]\nmin_age=3\nsizes=2M\n' "$UNIT" >"$CONF/policy.d/50-prom.conf"
"$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
DAEMON=$!
huge_within "$P" "$B" "$NR" $((NR * 2048)) || check_fail "the workload was not collapsed: $(tail -n 3 "$TMP/run.log")"

# Prometheus has scraped the file and evaluated the rules a few times since
sleep 2 # the daemon's last collapses (ASan's own memory too), then Prometheus catches up
for ((i = 0; i < 60; i++)); do
	want=$(awk '/^AnonHugePages:/ { print $2 * 1024 }' "/proc/$P/smaps_rollup")
	[ -n "$(query "mthpd:unit_collapsed_bytes:rate5m{unit=\"$UNIT\"} > 0")" ] &&
		[ "$(query "mthpd_unit_collapsed_bytes_total{unit=\"$UNIT\"}")" = "$want" ] && break
	sleep 0.5
done
cov=$(query "mthpd:unit_coverage:ratio{unit=\"$UNIT\"}")
collapsed=$(query "mthpd_unit_collapsed_bytes_total{unit=\"$UNIT\"}")
rate=$(query "mthpd:unit_collapsed_bytes:rate5m{unit=\"$UNIT\"}")
read -r smaps_huge smaps_anon < <(awk '/^AnonHugePages:/ { h = $2 } /^Anonymous:/ { a = $2 } END { print h, a }' \
	"/proc/$P/smaps_rollup")
echo "prometheus: coverage $cov, collapsed $collapsed bytes, rate5m $rate B/s;" \
	"smaps_rollup: AnonHugePages $smaps_huge kB of Anonymous $smaps_anon kB"
[ -n "$cov" ] || check_fail "no mthpd:unit_coverage:ratio for $UNIT: $(tail -n 3 "$TMP/prom.log")"
awk -v c="${cov:-0}" -v h="$smaps_huge" -v a="$smaps_anon" 'BEGIN { d = c - h / a; exit !(d < 0.02 && d > -0.02) }' ||
	check_fail "coverage $cov through Prometheus, $smaps_huge/$smaps_anon kB in smaps_rollup"
[ "$collapsed" = $((smaps_huge * 1024)) ] && [ "$collapsed" -ge $((NR * 2097152)) ] ||
	check_fail "mthpd_unit_collapsed_bytes_total $collapsed through Prometheus, AnonHugePages $smaps_huge kB, $NR ranges of 2 MiB"
awk -v r="${rate:-0}" 'BEGIN { exit !(r > 0) }' || check_fail "mthpd:unit_collapsed_bytes:rate5m is '$rate'"
alerts=$(curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/alerts" | jq -r '.data.alerts | length')
[ "$alerts" = 0 ] || check_fail "alerts: $(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/alerts" | jq -c .data.alerts)"
memory_ok "$P" "$FD"
daemon_stop
finish
