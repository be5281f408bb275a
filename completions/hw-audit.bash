# bash completion for hw-audit(1)

_hw_audit()
{
	local cur prev sub=
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	((COMP_CWORD > 1)) && sub=${COMP_WORDS[1]}

	case $prev in
	--session)
		local d ids=
		for d in .heartwood/sessions/*/; do
			[[ -d $d ]] && d=${d%/} && ids+=" ${d##*/}"
		done
		COMPREPLY=($(compgen -W "$ids" -- "$cur"))
		return ;;
	--output|--key|--public-key|--root-from)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--deployment-id|--retention-policy|--retain-until|--signer-id|--key-id|--key-version)
		return ;;
	esac
	case $sub in
	"")
		COMPREPLY=($(compgen -W "verify export checkpoint verify-checkpoint prove verify-proof -h --help --version" -- "$cur")) ;;
	verify)
		COMPREPLY=($(compgen -W "--session" -f -- "$cur")) ;;
	export)
		COMPREPLY=($(compgen -W "--session --output" -- "$cur")) ;;
	checkpoint)
		COMPREPLY=($(compgen -W "--session --output --deployment-id --retention-policy --retain-until --key --signer-id --key-id --key-version" -- "$cur")) ;;
	verify-checkpoint)
		COMPREPLY=($(compgen -W "--public-key" -d -- "$cur")) ;;
	prove)
		if ((COMP_CWORD == 2)); then
			COMPREPLY=($(compgen -W "inclusion consistency" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "--session" -d -- "$cur"))
		fi ;;
	verify-proof)
		COMPREPLY=($(compgen -W "--root-from --public-key" -f -- "$cur")) ;;
	esac
}
complete -F _hw_audit hw-audit
