# bash completion for hw-inspect(1)

_hw_inspect()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local verb=${COMP_WORDS[1]} d ids=
	COMPREPLY=()
	if ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W "tree file changes diff -h --help --version" -- "$cur"))
		return
	fi
	if [[ $prev == --session ]]; then
		for d in .heartwood/sessions/*/; do
			[[ -d $d ]] || continue
			d=${d%/}
			ids+="${d##*/} "
		done
		COMPREPLY=($(compgen -W "$ids" -- "$cur"))
		return
	fi
	[[ $prev == --depth ]] && { COMPREPLY=($(compgen -W "1 2 3 4 5 6 7 8" -- "$cur")); return; }
	case $verb in
	tree)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--depth" -- "$cur"))
		else
			COMPREPLY=($(compgen -d -- "$cur"))
		fi
		;;
	file) COMPREPLY=($(compgen -f -- "$cur")) ;;
	changes) COMPREPLY=($(compgen -W "--session" -- "$cur")) ;;
	diff)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--session" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		;;
	esac
}
complete -F _hw_inspect hw-inspect
