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
	--output|--key|--public-key|--root-from|--registry)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--deployment-id|--retention-policy|--retain-until|--signer-id|--key-id|--key-version)
		return ;;
	--profile)
		local reg=${HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY:-}
		[[ -z $reg && -f /etc/heartwood/checkpoint-signers.toml ]] &&
			reg=/etc/heartwood/checkpoint-signers.toml
		local base=$HOME/.config
		[[ ${XDG_CONFIG_HOME:-} == /* ]] && base=$XDG_CONFIG_HOME
		[[ -z $reg ]] && reg=$base/heartwood/checkpoint-signers.toml
		[[ -r $reg ]] && COMPREPLY=($(compgen -W "$(sed -n 's/^[[:space:]]*\[profiles\.\([a-z0-9_-]*\)\][[:space:]]*$/\1/p' "$reg")" -- "$cur"))
		return ;;
	esac
	case $sub in
	"")
		COMPREPLY=($(compgen -W "verify export checkpoint verify-checkpoint signer prove verify-proof -h --help --version" -- "$cur")) ;;
	verify)
		COMPREPLY=($(compgen -W "--session" -f -- "$cur")) ;;
	export)
		COMPREPLY=($(compgen -W "--session --output" -- "$cur")) ;;
	checkpoint)
		COMPREPLY=($(compgen -W "--session --output --deployment-id --retention-policy --retain-until --key --signer-id --key-id --key-version --profile" -- "$cur")) ;;
	verify-checkpoint)
		COMPREPLY=($(compgen -W "--public-key --profile" -d -- "$cur")) ;;
	signer)
		if ((COMP_CWORD == 2)); then
			COMPREPLY=($(compgen -W "init-local serve-local" -- "$cur"))
		elif [[ ${COMP_WORDS[2]} == serve-local ]]; then
			COMPREPLY=($(compgen -W "--registry --profile" -- "$cur"))
		fi ;;
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
