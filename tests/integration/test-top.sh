#!/bin/bash
# `mthpd top` (issue 29, part 2), used as a person would: in an 80x24 tmux
# pane, read back with capture-pane while a daemon collapses a workload
# of 32 MiB in a cgroup of its own.
# - the pane shows the daemon line, the pass line and a row for the
#   workload's cgroup whose ANON and HUGE are what its smaps_rollup says
#   (the same rounding as mthpd's) and whose bar is filled to the nearest
#   tenth of it, once the workload is huge;
#   no line is wider than the pane;
# - the frame follows the daemon: HUGE goes from 0 B to 32 MiB without a
#   key pressed;
# - `q` quits with status 0 and gives the terminal back as it was
#   (canonical mode and echo on again: `stty` in the same pane);
# - with stdout not a terminal it prints plain frames (no escape byte),
#   as many as --iterations says.
. "$(dirname "$0")/lib.sh"
require_all
command -v tmux >/dev/null || skip "no tmux (Debian: apt-get install tmux)"
NR=16
child_cgroups top
A=${CGROUPS[0]}
UNIT=/mthpd-top-$$
SOCK=$TMP/tmux.sock
tmx() { tmux -S "$SOCK" "$@"; }
# the pane as text, trailing blanks cut
screen() { tmx capture-pane -p -t top | sed 's/ *$//'; }
row() { screen | grep -F "$UNIT" | head -n 1; }

# shellcheck disable=SC2046 # one word per range
in_cgroup "$A" $(for ((i = 0; i < NR; i++)); do echo full; done)
P=$WL_PID FD=$WL_FD
CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=100\nstate_file=%s\nmetrics_file=\n' "$TMP/status" >"$CONF/mthpd.conf"
# min_age=3: the first frames show it in 4K pages
printf '[Match]\ncgroup=%s\n[Policy]\nmin_age=3\nsizes=2M\n' "$UNIT" >"$CONF/policy.d/50-top.conf"
"$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
DAEMON=$!
for ((i = 0; i < 50; i++)); do [ -s "$TMP/status" ] && break; sleep 0.1; done

tmx -f /dev/null new-session -d -s top -x 80 -y 24 \
	"$MTHPD top --config-dir $CONF --interval 0.2; echo EXIT=\$?; stty -a | tr ' ' '\n' | grep -x -e icanon -e -icanon -e echo -e -echo | tr '\n' ' '; echo; sleep 60"
trap 'tmx kill-server 2>/dev/null; cleanup' EXIT
first=""
for ((i = 0; i < 30; i++)); do
	first=$(row)
	[ -n "$first" ] && break
	sleep 0.1
done
echo "first frame:"
screen | sed -n '1,5p' | sed 's/^/   | /'
[ -n "$first" ] || check_fail "no row for $UNIT in the pane: $(screen | head -n 5)"
screen | head -n 1 | grep -q "^mthpd is running as pid $DAEMON " || check_fail "no daemon line: $(screen | head -n 1)"
screen | grep -qx "(q quits)" || check_fail "no '(q quits)' line"
screen | sed -n 2p | grep -q '^pass [0-9]* (' || check_fail "no pass line: $(screen | sed -n 2p)"
screen | grep -q '^UNIT  *ANON  *HUGE  *COVERAGE  *NOW  *WHY NOT$' || check_fail "no header: $(screen | sed -n 3p)"
case $first in *" 0 B  [..........]   0.0% "*) ;; *) check_fail "not in 4K pages at first: $first" ;; esac

# huge, without a key: the frame follows the state file.  What to expect
# comes from smaps_rollup, not from the workload's 32 MiB: a build with
# ASan maps and collapses more of its own.
huge_within "$P" "$WL_BASE" "$NR" $((NR * 2048)) || check_fail "the workload was not collapsed"
# as mthpd_text_bytes() writes sizes: three significant digits
mib() { awk -v k="$1" 'BEGIN { v = k / 1024; printf(v >= 99.95 ? "%.0f MiB" : v >= 9.995 ? "%.1f MiB" : "%.2f MiB", v) }'; }
for ((i = 0; i < 50; i++)); do
	read -r huge_kb anon_kb < <(awk '/^AnonHugePages:/ { h = $2 } /^Anonymous:/ { a = $2 } END { print h, a }' "/proc/$P/smaps_rollup")
	last=$(row)
	case $last in *" $(mib "$huge_kb")  ["*) break ;; esac
	sleep 0.1
done
echo "last row: $last"
echo "smaps_rollup: AnonHugePages $huge_kb kB, Anonymous $anon_kb kB"
case $last in *" $(mib "$huge_kb")  ["*) ;; *) check_fail "HUGE is not $(mib "$huge_kb") (smaps_rollup): $last" ;; esac
# the bar, to the nearest tenth of huge over anon
bar=$(awk -v h="$huge_kb" -v a="$anon_kb" 'BEGIN { n = int(h * 10 / a + 0.5); s = ""; for (i = 0; i < 10; i++) s = s (i < n ? "#" : "."); print s }')
case $last in *"[$bar]"*) ;; *) check_fail "the bar is not [$bar]: $last" ;; esac
[ "$(anon_huge_kb "$P" "$WL_BASE" "$NR")" = $((NR * 2048)) ] || check_fail "the workload's ranges are not all huge"
# ANON: RssAnon, which smaps_rollup's Anonymous matches to within rounding
case $last in *" $(mib "$anon_kb") "*) ;; *) check_fail "ANON is not $(mib "$anon_kb") (smaps_rollup): $last" ;; esac
wide=$(screen | awk 'length > 80' | wc -l)
[ "$wide" = 0 ] || check_fail "$wide lines wider than the 80-column pane"

# q quits, and the terminal is as it was
tmx send-keys -t top q
for ((i = 0; i < 30; i++)); do screen | grep -q '^EXIT=' && break; sleep 0.1; done
echo "after q: $(screen | grep -A1 '^EXIT=' | tr '\n' ' ')"
screen | grep -q '^EXIT=0$' || check_fail "top did not exit 0 on q: $(screen | tail -n 3)"
screen | grep -q '^icanon echo$' || check_fail "the terminal was not given back: $(screen | grep -A1 '^EXIT=')"

# not a terminal: plain frames
"$MTHPD" top --config-dir "$CONF" --interval 0.1 --iterations 3 </dev/null >"$TMP/plain" ||
	check_fail "top --iterations 3 exited $?"
[ "$(grep -c '^mthpd is running as pid' "$TMP/plain")" = 3 ] || check_fail "not 3 frames: $(head -n 3 "$TMP/plain")"
if LC_ALL=C grep -q $'\033' "$TMP/plain"; then check_fail "escape bytes in the plain frames"; fi
grep -qF "$UNIT" "$TMP/plain" || check_fail "no row for $UNIT in the plain frames"

memory_ok "$P" "$FD"
daemon_stop
# a daemon that is gone: the frame says so, status 3, as status
"$MTHPD" top --config-dir "$CONF" --iterations 1 </dev/null >"$TMP/gone"
rc=$?
[ "$rc" = 3 ] && grep -q '^mthpd is not running' "$TMP/gone" || check_fail "top of a stopped daemon: exit $rc, $(head -n 1 "$TMP/gone")"
finish
