# bash completion for hw-agent(1)

_hw_agent()
{
	local cur=${COMP_WORDS[COMP_CWORD]} verb=${COMP_WORDS[1]} d ids=
	COMPREPLY=()
	if ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W "run mode -h --help --version" -- "$cur"))
		return
	fi
	case $verb in
	run)
		if ((COMP_CWORD == 2)); then
			for d in .heartwood/sessions/*/; do
				[[ -d $d ]] || continue
				d=${d%/}
				ids+="${d##*/} "
			done
			COMPREPLY=($(compgen -W "$ids" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "--stream" -- "$cur"))
		fi
		;;
	mode)
		((COMP_CWORD == 2)) &&
			COMPREPLY=($(compgen -W "ask-every-time auto-approve-low-risk" -- "$cur"))
		;;
	esac
}
complete -F _hw_agent hw-agent
