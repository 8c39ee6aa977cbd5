#!/bin/bash
# A matched process mthpd may not read (a capability left out of a
# container's set, an LSM) must not get nothing in silence: the daemon says
# once which pid and what it needs (result permission_denied), the state
# file gives it as the reason, and the readable process beside it is
# collapsed as usual.  Here the daemon runs without CAP_DAC_READ_SEARCH and
# CAP_DAC_OVERRIDE, and one workload as another user, whose pagemap (0400)
# it then cannot open.
. "$(dirname "$0")/lib.sh"
require_all

child_cgroups unread
A=${CGROUPS[0]}
WL_AS="setpriv --reuid=65534 --regid=65534 --clear-groups" in_cgroup "$A" full
N=$WL_PID NB=$WL_BASE NFD=$WL_FD
in_cgroup "$A" full
P=$WL_PID PB=$WL_BASE PFD=$WL_FD

CONF=$TMP/conf
mkdir -p "$CONF/policy.d"
printf '[Daemon]\nscan_sleep_millisecs=200\nstate_file=%s\nmetrics_file=\n' "$TMP/status" >"$CONF/mthpd.conf"
printf '[Match]\ncgroup=/mthpd-unread-*\n[Policy]\nmin_age=0\nsizes=2M\nmax_ptes_none=0\n' >"$CONF/policy.d/50-a.conf"
setpriv --bounding-set=-dac_read_search,-dac_override "$MTHPD" run --config-dir "$CONF" 2>"$TMP/run.log" &
DAEMON=$!
huge_within "$P" "$PB" 1 2048 || check_fail "the readable process was not collapsed"
sleep 1.5 # passes more: each may only repeat what was said
sed 's/^/   log: /' "$TMP/run.log"
n=$(grep -c "pid $N .*cannot open its pagemap or pidfd: Permission denied; nothing is done" "$TMP/run.log")
[ "$n" = 1 ] || check_fail "the daemon said $n times that it cannot read pid $N, expected once"
l=$(grep "^process $N " "$TMP/status")
echo "   state: $l"
[[ $l == *" last_result=permission_denied reason=permission_denied" ]] || check_fail "the state file does not give permission_denied for $N: $l"
[ "$(anon_huge_kb "$N" "$NB" 1)" = 0 ] || check_fail "the unreadable process has huge pages"
memory_ok "$N" "$NFD"
memory_ok "$P" "$PFD"
daemon_stop
finish
