# heartwood-helper.bash - the functions every bash completion of the
# heartwood suite shares (hw(7) FILES).  Each generated completion,
# completions/PROG.bash, holds its own table, _PROG_node, and sources this
# file from the data directory, where 'make install' puts it once
# (completion/ under DATADIR).  Edit it here, not in the completions.

# __heartwood_values TYPE CUR
# Add the values of TYPE that start with CUR.
__heartwood_values()
{
	local IFS=$'\n' nl=$'\n' d ids= reg base re
	case $1 in
	session)
		for d in .heartwood/sessions/*/; do
			[[ -d $d ]] || continue
			d=${d%/}
			ids+=${d##*/}$nl
		done
		COMPREPLY+=($(compgen -W "$ids" -- "$2")) ;;
	file|dir)
		COMPREPLY+=($(compgen -${1:0:1} -- "$2"))
		compopt -o filenames 2>/dev/null ;;
	file-or-stdin)
		__heartwood_values file "$2"
		[[ -z $2 || $2 == - ]] && COMPREPLY+=(-) ;;
	signer-profile)
		reg=${HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY:-}
		[[ -z $reg && -f /etc/heartwood/checkpoint-signers.toml ]] &&
			reg=/etc/heartwood/checkpoint-signers.toml
		base=$HOME/.config
		[[ ${XDG_CONFIG_HOME:-} == /* ]] && base=$XDG_CONFIG_HOME
		[[ -z $reg ]] && reg=$base/heartwood/checkpoint-signers.toml
		re='s/^[[:space:]]*\[profiles\.\([a-z0-9_-]*\)\]'
		re+='[[:space:]]*$/\1/p'
		[[ -r $reg ]] && d=$(sed -n "$re" "$reg")
		COMPREPLY+=($(compgen -W "$d" -- "$2")) ;;
	{*})
		d=${1#?}
		d=${d%?}
		COMPREPLY+=($(compgen -W "${d//|/$nl}" -- "$2"))
		[[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *: ]] &&
			compopt -o nospace 2>/dev/null ;;
	esac
}

# __heartwood_type NAME
# Set t to the type of the value that option NAME takes, if it takes one.
__heartwood_type()
{
	local o
	t=
	for o in $opts; do
		[[ ${o%%=*} == "$1" && $o == *=* ]] && t=${o#*=}
	done
}

# __heartwood_options CUR LATER
# Add the options that start with CUR and are not given yet nor excluded
# by one that is; not the alone ones when LATER is 1.
__heartwood_options()
{
	local o n x
	for o in $opts; do
		n=${o%%=*}
		[[ $seen == *" $n "* ]] && continue
		[[ $2 == 1 && " $alone " == *" $n "* ]] && continue
		for x in $excl; do
			[[ $seen == *" ${x%%:*} "* && ,${x#*:}, == *,$n,* ]] &&
				continue 2
		done
		[[ $n == "$1"* ]] && COMPREPLY+=("$n")
	done
}

# __heartwood_delegate PROG I
# Complete the words from I on as PROG's command line with PROG's own
# completion, loaded the way bash-completion loads it.
__heartwood_delegate()
{
	local spec
	spec=$(complete -p "$1" 2>/dev/null)
	if [[ -z $spec ]] && declare -F _completion_loader >/dev/null; then
		_completion_loader "$1" >/dev/null 2>&1
		spec=$(complete -p "$1" 2>/dev/null)
	fi
	if [[ $spec =~ -F\ ([^ ]+) ]]; then
		local -a w=("$1" "${COMP_WORDS[@]:$2+1}")
		local COMP_CWORD=$((COMP_CWORD - $2))
		local COMP_WORDS=("${w[@]}")
		"${BASH_REMATCH[1]}" "$1" "$cur" "${COMP_WORDS[COMP_CWORD-1]}"
	else
		__heartwood_values file "$cur"
	fi
}

# __heartwood_complete NODEFN
# Complete COMP_WORDS up to COMP_CWORD into COMPREPLY, NODEFN being the
# program's table of commands (its _PROG_node function).
__heartwood_complete()
{
	local nodefn=$1 cur=${COMP_WORDS[COMP_CWORD]} node= pos=0 i w t
	local seen=' ' cmds opts alone excl args prefix
	COMPREPLY=()
	"$nodefn" ''
	# walk the words before the cursor: options and their values, then
	# subcommands, then positional arguments
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == -?* ]]; then
			seen+="${w%%=*} "
			__heartwood_type "${w%%=*}"
			[[ -z $t || $w == *=* ]] && continue
			if ((i + 1 == COMP_CWORD)); then
				__heartwood_values "$t" "$cur"
				return
			fi
			((++i))
		elif ((pos == 0)) && [[ " $cmds " == *" $w "* ]]; then
			node=${node:+$node }$w
			"$nodefn" "$node"
		elif ((pos == 0)) && [[ $prefix ]]; then
			__heartwood_delegate "$prefix$w" "$i"
			return
		else
			((++pos))
		fi
	done
	if [[ $cur == -* ]]; then
		__heartwood_options "$cur" "$((COMP_CWORD > 1))"
	elif ((pos == 0)) && [[ $cmds || $prefix ]]; then
		COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
		for w in $([[ $prefix ]] && compgen -c -- "$prefix$cur"); do
			w=${w#"$prefix"}
			[[ " $cmds " == *" $w "* ]] || COMPREPLY+=("$w")
			cmds+=" $w"
		done
	else
		set -- $args
		t=
		((pos < $#)) && t=${@:pos+1:1}
		((pos >= $#)) && [[ ${@: -1} == *... ]] && t=${@: -1}
		if [[ $t ]]; then
			__heartwood_values "${t%...}" "$cur"
		else
			__heartwood_options "$cur" "$((COMP_CWORD > 1))"
		fi
	fi
}
