# bash completion for hw-append(1)

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

_hw_append()
{
	local cur prev
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}

	case $prev in
	--session)
		COMPREPLY=($(compgen -W "$(_hw_session_ids)" -- "$cur"))
		return
		;;
	--command|--file)
		COMPREPLY=($(compgen -f -- "$cur"))
		compopt -o filenames 2>/dev/null
		return
		;;
	--log-id)
		COMPREPLY=($(compgen -W "project-skills" -- "$cur"))
		return
		;;
	esac

	local w opts mode=
	for w in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
		case $w in
		--session) mode=session ;;
		--file) mode=file ;;
		esac
	done
	case $mode in
	session) opts="--command" ;;
	file) opts="--log-id" ;;
	*) opts="--session --file -h --help --version" ;;
	esac
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -F _hw_append hw-append
