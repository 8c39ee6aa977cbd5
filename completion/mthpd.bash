# SPDX-License-Identifier: GPL-2.0-or-later
# bash completion for mthpd(8): the commands, each one's options, and their
# values where they can be listed cheaply: directories for --config-dir,
# --proc-root and --sys-root, the policies of the configuration directory
# for --policy (policy.d/*.conf of --config-dir on the line, or /etc/mthpd),
# the sizes for --sizes (after a comma too), running pids for --pid.
# Installed as /usr/share/bash-completion/completions/mthpd (make install,
# the Debian package), where bash-completion loads it on first use; it
# needs none of bash-completion's helpers, so `. mthpd.bash` works alone.

# _mthpd_policies DIR: the policy names of DIR/policy.d, one a line, with and without .conf
_mthpd_policies() {
	local f n
	for f in "$1"/policy.d/*.conf; do
		[ -f "$f" ] || continue
		n=${f##*/}
		printf '%s\n%s\n' "$n" "${n%.conf}"
	done
}

_mthpd() {
	local cur prev cmd i w dir=/etc/mthpd opts
	local -a words=("${COMP_WORDS[@]}")
	local cword=$COMP_CWORD

	COMPREPLY=()
	cur=${words[cword]}
	prev=
	((cword > 0)) && prev=${words[cword - 1]}
	# --opt=value: COMP_WORDBREAKS has '=', so the line is "--opt" "=" "value"
	if [ "$cur" = = ]; then
		cur=
		prev=${words[cword - 1]}
	elif [ "$prev" = = ] && ((cword > 1)); then
		prev=${words[cword - 2]}
	fi

	# the command is always the first word (mthpd's main() reads argv[1])
	cmd=
	((cword > 1)) && cmd=${words[1]}
	for ((i = 2; i < cword - 1; i++)); do
		case ${words[i]} in
		-c | --config-dir)
			dir=${words[i + 1]}
			[ "$dir" = = ] && ((i + 2 < cword)) && dir=${words[i + 2]}
			;;
		esac
	done
	# a ~ or $VAR in the directory typed is not expanded: only a plain path is read
	case $dir in "~"/*) dir=$HOME/${dir#"~/"} ;; esac

	if [ -z "$cmd" ]; then
		case $cur in
		-*) mapfile -t COMPREPLY < <(compgen -W '--help --version' -- "$cur") ;;
		*) mapfile -t COMPREPLY < <(compgen -W 'plan collapse run check-config status top version' -- "$cur") ;;
		esac
		return 0
	fi

	case $prev in
	-c | --config-dir | --proc-root | --sys-root)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return 0
		;;
	--policy)
		mapfile -t COMPREPLY < <(compgen -W "$(_mthpd_policies "$dir")" -- "$cur")
		if [ "$cmd" = plan ]; then # plan --config-dir also takes a FILE
			compopt -o filenames 2>/dev/null
			mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur")
		fi
		return 0
		;;
	-s | --sizes)
		# the sizes not given yet, after the last comma
		local head=${cur%,*} sizes=
		[ "$head" = "$cur" ] && head= || head=$head,
		for w in 16K 32K 64K 128K 256K 512K 1M 2M; do
			[[ ,$head == *,$w,* ]] || sizes="$sizes $w"
		done
		mapfile -t COMPREPLY < <(compgen -P "$head" -W "$sizes" -- "${cur##*,}")
		compopt -o nospace 2>/dev/null
		return 0
		;;
	-p | --pid)
		mapfile -t COMPREPLY < <(compgen -W "$(cd /proc 2>/dev/null && printf '%s ' [0-9]*)" -- "$cur")
		return 0
		;;
	--max-ptes-none | --max-ptes-swap | --max-ptes-shared)
		mapfile -t COMPREPLY < <(compgen -W '0 64 511' -- "$cur")
		return 0
		;;
	--unit | --cgroup | --limit | --interval | --iterations)
		return 0 # a glob or a number: nothing to list
		;;
	esac

	case $cmd in
	plan) opts='--pid --sizes --max-ptes-none --max-ptes-swap --max-ptes-shared --json
		--proc-root --sys-root --config-dir --policy --unit --cgroup --help' ;;
	collapse) opts='--pid --sizes --max-ptes-none --max-ptes-swap --max-ptes-shared --json
		--proc-root --sys-root --help' ;;
	run) opts='--config-dir --proc-root --sys-root --no-sandbox --help' ;;
	check-config) opts='--config-dir --sys-root --help' ;;
	status) opts='--config-dir --policy --unit --limit --json --help' ;;
	top) opts='--config-dir --policy --unit --interval --iterations --help' ;;
	*) return 0 ;;
	esac
	mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
	return 0
}
complete -F _mthpd mthpd
