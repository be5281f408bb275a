# bash completion for hw-session(1)

# Session ids are the directory names under .heartwood/sessions/ of the
# project in the current directory.
_hw_session_ids()
{
	local d
	for d in .heartwood/sessions/*/; do
		[[ -d $d ]] || continue
		d=${d%/}
		printf '%s\n' "${d##*/}"
	done
}

_hw_session()
{
	local cur sub= i
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}

	# The subcommand is the first word after the program name.
	if ((COMP_CWORD > 1)); then
		sub=${COMP_WORDS[1]}
	fi

	case $sub in
	"")
		COMPREPLY=($(compgen -W "new list show rename replay follow -h --help --version" -- "$cur"))
		;;
	new)
		if [[ ${COMP_WORDS[COMP_CWORD-1]} != --title ]]; then
			COMPREPLY=($(compgen -W "--title" -- "$cur"))
		fi
		;;
	follow)
		case ${COMP_WORDS[COMP_CWORD-1]} in
		--stream)
			# a file, or - for standard input
			COMPREPLY=($(compgen -f -- "$cur") $(compgen -W "-" -- "$cur"))
			compopt -o filenames 2>/dev/null
			;;
		--after|--idle-exit)
			;;
		*)
			if ((COMP_CWORD == 2)); then
				COMPREPLY=($(compgen -W "$(_hw_session_ids)" -- "$cur"))
			else
				COMPREPLY=($(compgen -W "--after --stream --idle-exit" -- "$cur"))
			fi
			;;
		esac
		;;
	show|replay|rename)
		# Only the word right after the subcommand is a session id.
		if ((COMP_CWORD == 2)); then
			COMPREPLY=($(compgen -W "$(_hw_session_ids)" -- "$cur"))
		fi
		;;
	esac
}
complete -F _hw_session hw-session
