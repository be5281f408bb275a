# bash completion for hw(1)

_hw_sessions()
{
	local d ids=
	for d in .heartwood/sessions/*/; do
		[[ -d $d ]] || continue
		d=${d%/}
		ids+="${d##*/} "
	done
	echo "$ids"
}

_hw()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local i verb= n=0 progs= p
	COMPREPLY=()
	if [[ $prev == --session-id ]]; then
		COMPREPLY=($(compgen -W "$(_hw_sessions)" -- "$cur"))
		return
	fi
	# the verb is the first word that is neither an option nor its value
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--session-id) ((i++)) ;;
		-*) ;;
		*) [[ -z $verb ]] && verb=${COMP_WORDS[i]} && n=$i ;;
		esac
	done
	if [[ -z $verb ]]; then
		for p in $(compgen -c hw-); do progs+="${p#hw-} "; done
		COMPREPLY=($(compgen -W "ask allow approve reject deny pause resume
		    replay status audit actions sessions $progs --session-id
		    -h --help --version" -- "$cur"))
		return
	fi
	case $verb in
	audit)
		((COMP_CWORD == n + 1)) &&
			COMPREPLY=($(compgen -W "verify export checkpoint verify-checkpoint
			    signer prove verify-proof" -- "$cur")) ||
			COMPREPLY=($(compgen -W "--output --session-id" -- "$cur"))
		;;
	actions)
		((COMP_CWORD == n + 1)) && COMPREPLY=($(compgen -W "set" -- "$cur"))
		((COMP_CWORD == n + 2)) &&
			COMPREPLY=($(compgen -W "ask-every-time auto-approve-low-risk" -- "$cur"))
		;;
	sessions)
		((COMP_CWORD == n + 1)) &&
			COMPREPLY=($(compgen -W "list new show rename" -- "$cur"))
		((COMP_CWORD == n + 2)) && [[ ${COMP_WORDS[n+1]} == @(show|rename) ]] &&
			COMPREPLY=($(compgen -W "$(_hw_sessions)" -- "$cur"))
		[[ ${COMP_WORDS[n+1]} == new ]] && COMPREPLY=($(compgen -W "--title" -- "$cur"))
		;;
	ask|allow|approve|reject|deny|pause|resume|replay|status)
		COMPREPLY=($(compgen -W "--session-id" -- "$cur"))
		;;
	esac
}
complete -F _hw hw
