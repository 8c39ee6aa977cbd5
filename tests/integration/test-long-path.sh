#!/bin/bash
# Error text is not cut: a policy file with a mistake in a directory whose
# path is some 3,900 bytes long (paths may be 4095), and an
# mthpd.conf that is a directory, name the file and say the whole reason, in
# check-config, status, the preview (as root) and run.  No root needed.
set -u
O=${O:-build}
MTHPD=$O/mthpd
T=$(mktemp -d "${TMPDIR:-/tmp}/mthpd-long.XXXXXX")
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
[ -x "$MTHPD" ] || { echo "FAIL: $MTHPD not built"; exit 1; }

# a directory ~3,900 bytes deep, in components of 200 (NAME_MAX is 255)
D=$T
seg=$(printf 'd%.0s' {1..199})
while [ ${#D} -lt 3700 ]; do D=$D/$seg; done
mkdir -p "$D/conf/policy.d" || { echo "SKIP: cannot make a ${#D}-byte path"; exit 77; }
C=$D/conf
echo "configuration directory: ${#C} bytes"
printf '[Match]\ncomm=x\n[Policy]\nsizes=3M\n' >"$C/policy.d/50-bad.conf"
REASON="policy.d/50-bad.conf:4: sizes=: '3M' is not a size from 16K to 2M (16K, 32K, ..., 1M, 2M)"

# check LABEL FILE: the last line of FILE ends with the whole reason
check() {
	local last
	last=$(tail -n 1 "$2")
	echo "$1: ${#last} bytes, ends: ...${last: -100}"
	case $last in
	*"$C/$REASON") ;;
	*) fail "$1: the reason is cut or missing" ;;
	esac
}

"$MTHPD" check-config --config-dir "$C" >/dev/null 2>"$T/e1"
check check-config "$T/e1"
"$MTHPD" status --config-dir "$C" >/dev/null 2>"$T/e2"
check status "$T/e2"
if [ "$(id -u)" = 0 ]; then
	"$MTHPD" plan --config-dir "$C" >/dev/null 2>"$T/e3"
	check "plan --config-dir" "$T/e3"
fi
"$MTHPD" run --config-dir "$C" --no-sandbox 2>"$T/e4"
check run "$T/e4"

# a file that is not one, in that directory (mthpd.conf a directory); a
# config line is at most 198 bytes, so no state_file= can be this long
rm "$C/policy.d/50-bad.conf"
mkdir "$C/mthpd.conf"
for cmd in check-config run; do
	"$MTHPD" $cmd --config-dir "$C" --no-sandbox >/dev/null 2>"$T/e5"
	last=$(tail -n 1 "$T/e5")
	echo "$cmd, mthpd.conf a directory: ${#last} bytes, ends: ...${last: -60}"
	case $last in
	*"$C/mthpd.conf: not a regular file (a directory)") ;;
	*) fail "$cmd: the reason mthpd.conf is refused is cut or missing" ;;
	esac
done

[ "$FAILS" = 0 ] || exit 1
echo PASS
