# bash completion for heartwood(1)

_heartwood()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local i verb= n=0 d ids=
	COMPREPLY=()
	if [[ $prev == --session-id ]]; then
		for d in .heartwood/sessions/*/; do
			[[ -d $d ]] || continue
			d=${d%/}
			ids+="${d##*/} "
		done
		COMPREPLY=($(compgen -W "$ids" -- "$cur"))
		return
	fi
	[[ $prev == @(--prompt|-p) ]] && return
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--session-id|--prompt|-p) ((i++)) ;;
		-*) ;;
		*) [[ -z $verb ]] && verb=${COMP_WORDS[i]} && n=$i ;;
		esac
	done
	case $verb in
	'')
		COMPREPLY=($(compgen -W "audit actions doctor allow approve reject
		    deny pause resume replay files changes specialists --session-id
		    --plain --prompt -h --help --version" -- "$cur")) ;;
	files)
		((COMP_CWORD == n + 1)) &&
			COMPREPLY=($(compgen -W "list show" -- "$cur")) ||
			COMPREPLY=($(compgen -f -- "$cur"))
		[[ ${COMP_WORDS[n+1]} == list && $cur == -* ]] &&
			COMPREPLY=($(compgen -W "--depth" -- "$cur"))
		;;
	changes)
		COMPREPLY=($(compgen -f -- "$cur")) ;;
	audit)
		((COMP_CWORD == n + 1)) &&
			COMPREPLY=($(compgen -W "verify export" -- "$cur")) ||
			COMPREPLY=($(compgen -W "--output" -- "$cur"))
		[[ $prev == --output ]] && COMPREPLY=($(compgen -f -- "$cur"))
		;;
	actions)
		((COMP_CWORD == n + 1)) && COMPREPLY=($(compgen -W "set" -- "$cur"))
		((COMP_CWORD == n + 2)) &&
			COMPREPLY=($(compgen -W "ask-every-time auto-approve-low-risk" -- "$cur"))
		;;
	doctor)
		COMPREPLY=($(compgen -W "--json" -- "$cur")) ;;
	esac
}
complete -F _heartwood heartwood
