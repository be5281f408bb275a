# bash completion for hw-model(1)

_hw_model()
{
	local cur prev
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}

	case $prev in
	--replay)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--port)
		return ;;
	--chunk)
		COMPREPLY=($(compgen -W "whole llama vllm interleaved bytes:" -- "$cur"))
		[[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == bytes: ]] && compopt -o nospace
		return ;;
	esac
	if ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W "serve -h --help --version" -- "$cur"))
	elif [[ ${COMP_WORDS[1]} == serve ]]; then
		COMPREPLY=($(compgen -W "--replay --port --chunk --crlf --comments --exit-when-done" -- "$cur"))
	fi
}
complete -F _hw_model hw-model
