# heartwood-helper.zsh - the functions every zsh completion of the
# heartwood suite shares (hw(7) FILES).  Each generated completion,
# completions/_PROG, holds its own table, _PROG_node, and sources this file
# from the data directory, where 'make install' puts it once (completion/
# under DATADIR).  Edit it here, not in the completions.

# __heartwood_values TYPE TEXT
# Offer the values of TYPE, described by TEXT.
__heartwood_values() {
	local -a ids vals expl
	local reg base re
	case $1 in
	session)
		ids=(.heartwood/sessions/*(N/:t))
		_wanted sessions expl 'session id' compadd -a ids ;;
	file) _files ;;
	dir) _files -/ ;;
	file-or-stdin) _files; compadd -- - ;;
	signer-profile)
		reg=${HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY:-}
		[[ -z $reg && -f /etc/heartwood/checkpoint-signers.toml ]] &&
			reg=/etc/heartwood/checkpoint-signers.toml
		base=$HOME/.config
		[[ ${XDG_CONFIG_HOME:-} == /* ]] && base=$XDG_CONFIG_HOME
		[[ -z $reg ]] && reg=$base/heartwood/checkpoint-signers.toml
		re='s/^[[:space:]]*\[profiles\.\([a-z0-9_-]*\)\]'
		re+='[[:space:]]*$/\1/p'
		[[ -r $reg ]] && vals=(${(f)"$(sed -n $re $reg)"})
		_wanted profiles expl 'signer profile' compadd -a vals ;;
	'{'*)
		vals=(${(s:|:)${${1#?}%?}})
		_wanted values expl $2 compadd -- ${vals:#*:}
		(( ${#${(M)vals:#*:}} )) && compadd -S '' -- ${(M)vals:#*:} ;;
	*) _message -e values $2 ;;
	esac
}

# __heartwood_type NAME
# Set t to the type of the value that option NAME takes, if it takes one.
__heartwood_type() {
	local o
	t=
	for o in $opts; do
		[[ ${o%%=*} == $1 && $o == *=* ]] && t=${o#*=}
	done
}

# __heartwood_options LATER
# Offer the options not given yet nor excluded by one that is; not the
# alone ones when LATER is 1.
__heartwood_options() {
	local o n x
	local -a list
	for o in $opts; do
		n=${o%%=*}
		[[ $seen == *" $n "* ]] && continue
		(( $1 && ${alone[(Ie)$n]} )) && continue
		for x in $excl; do
			[[ $seen == *" ${x%%:*} "* && ,${x#*:}, == *,$n,* ]] &&
				continue 2
		done
		list+=(${(M)odesc:#${(b)n}:*})
	done
	_describe -t options option list
}

# __heartwood_complete NODEFN
# Complete words up to CURRENT, NODEFN being the program's table of
# commands (its _PROG_node function).
__heartwood_complete() {
	local nodefn=$1 cur=$words[CURRENT] node= w t d seen=' ' prefix pdesc
	local -i i pos=0
	local -a cmds opts alone excl args cdesc odesc adesc progs
	$nodefn ''
	# walk the words before the cursor: options and their values, then
	# subcommands, then positional arguments
	for (( i = 2; i < CURRENT; i++ )); do
		w=$words[i]
		if [[ $w == -?* ]]; then
			seen+="${w%%=*} "
			__heartwood_type ${w%%=*}
			[[ -z $t || $w == *=* ]] && continue
			if (( i + 1 == CURRENT )); then
				d=${(M)odesc:#${(b)${w%%=*}}:*}
				__heartwood_values $t ${d#*:}
				return
			fi
			(( ++i ))
		elif (( pos == 0 && ${cmds[(Ie)$w]} )); then
			node=${node:+$node }$w
			$nodefn $node
		elif (( pos == 0 )) && [[ -n $prefix ]]; then
			words=($prefix$w $words[i+1,-1])
			(( CURRENT -= i - 1 ))
			_normal
			return
		else
			(( ++pos ))
		fi
	done
	if [[ $cur == -* ]]; then
		__heartwood_options $(( CURRENT > 2 ))
	elif (( pos == 0 )) && [[ $#cmds -gt 0 || -n $prefix ]]; then
		if [[ -n $prefix ]]; then
			progs=(${${(k)commands[(I)$prefix*]}#$prefix})
			progs=(${^${progs:|cmds}}:$pdesc)
		fi
		_describe -t commands command cdesc -- progs
	else
		t= d=
		if (( pos < $#args )); then
			t=$args[pos+1] d=$adesc[pos+1]
		elif [[ $args[-1] == *... ]]; then
			t=$args[-1] d=$adesc[-1]
		fi
		if [[ -n $t ]]; then
			__heartwood_values ${t%...} $d
		else
			__heartwood_options $(( CURRENT > 2 ))
		fi
	fi
}
