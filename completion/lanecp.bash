# bash completion for lanecp(1)
#
# Installed as share/bash-completion/completions/lanecp (bash-completion
# loads it the first time lanecp is completed); or source it from
# ~/.bashrc.  It needs nothing from bash-completion.
# shellcheck disable=SC2088,SC2016  # a literal ~/ and $1 are meant
#
#   options         from `lanecp --help` of the very program being
#                   completed, so the list cannot drift from the code;
#                   the argument an option takes is named there too
#                   (FILE and DIR: local paths, TARGET: as an operand,
#                   ALG: the algorithms its help line lists, LIST: jump
#                   hosts, a|b|c: one of those, I/N: --shard's auto)
#   local paths     files and directories
#   host:path       the remote host lists the matching names: ssh with
#                   BatchMode, a short ConnectTimeout and a time limit,
#                   with the -F, -i, -J and -o of the command line
#   hosts           Host names of the ssh config (the -F file, or
#                   ~/.ssh/config and /etc/ssh/ssh_config, with their
#                   Include files) and of the known_hosts files they name
#                   (or the default ones), offered as "host:"
#
# Words read from files, from a remote host or from --help are never given
# to `compgen -W`, eval or an unquoted expansion: compgen -W expands its
# word list as the shell would, so a `Host x-$(cmd)` line or a known_hosts
# entry would run cmd on TAB.  _lanecp_match compares prefixes in plain
# bash, and every reply is escaped with printf %q.

# The command line as words, with the words bash split at ':' and '='
# (COMP_WORDBREAKS) joined again where no blank separates them; sets
# words, cword, cur and prev of the caller.
_lanecp_words() {
	local line=${COMP_LINE-} i w ws n
	words=()
	cword=0
	for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
		w=${COMP_WORDS[i]}
		ws=${line%%[![:space:]]*}
		line=${line#"$ws"}
		line=${line#"$w"}
		n=${#words[@]}
		if ((n > 0)) && [[ -z $ws ]] &&
			[[ $w == [:=]* || ${words[n - 1]} == *[:=] ]]; then
			words[n - 1]+=$w
		else
			words+=("$w")
		fi
		((i == COMP_CWORD)) && cword=$((${#words[@]} - 1))
	done
	cur=${words[cword]-}
	prev=
	((cword > 0)) && prev=${words[cword - 1]}
	return 0
}

# $1 without the shell's quoting: backslashes and quotes removed.
_lanecp_dequote() {
	local s=$1 out='' c q=''
	while [[ -n $s ]]; do
		c=${s:0:1}
		s=${s:1}
		if [[ -z $q && $c == \\ ]]; then
			out+=${s:0:1}
			s=${s:1}
		elif [[ -z $q && ($c == "'" || $c == '"') ]]; then
			q=$c
		elif [[ -n $q && $c == "$q" ]]; then
			q=
		else
			out+=$c
		fi
	done
	printf '%s' "$out"
}

# Add to COMPREPLY every word of $4... that starts with $3, as $1WORD$2,
# the word escaped for the shell: a plain string compare, nothing expanded
# (unlike compgen -W).
_lanecp_match() {
	local pre=$1 suf=$2 word=$3 w q
	shift 3
	for w in "$@"; do
		[[ -n $w && $w == "$word"* ]] || continue
		printf -v q '%q' "$w"
		COMPREPLY+=("$pre$q$suf")
	done
	return 0
}

# $1 quoted for a POSIX shell, in single quotes.
_lanecp_squote() {
	printf "'%s'" "${1//\'/\'\\\'\'}"
}

# $1 as the shell word to insert: special characters escaped.
_lanecp_escape() {
	local q=''
	[[ -n $1 ]] && printf -v q '%q' "$1"
	printf '%s' "$q"
}

# Parse `$1 --help`: sets _lanecp_opts (words to offer) and the
# associative array _lanecp_meta (option -> the argument it takes, as
# --help names it; absent: none or optional) and _lanecp_help (option ->
# its help text).
_lanecp_parse_help() {
	local cmd=$1 line name short rest meta
	local re_opt='^ +(-([A-Za-z0-9])(\[[^]]*\])?, +)?--([a-z0-9][a-z0-9-]*)(.*)$'
	local re_arg='^ ([^ ]+)(  |$)' re_argw='^ ([A-Z][^ ]*)( |$)'
	_lanecp_opts=()
	declare -gA _lanecp_meta=() _lanecp_help=()
	while IFS= read -r line; do
		[[ $line =~ $re_opt ]] || continue
		short=${BASH_REMATCH[2]}
		name=--${BASH_REMATCH[4]}
		rest=${BASH_REMATCH[5]}
		meta=
		if [[ $rest == '['* ]]; then
			rest=${rest#*]}	# an optional argument: not the next word
		elif [[ $rest =~ $re_arg || $rest =~ $re_argw ]]; then
			meta=${BASH_REMATCH[1]}
			rest=${rest#" $meta"}
		fi
		_lanecp_opts+=("$name")
		[[ -n $short ]] && _lanecp_opts+=("-$short")
		if [[ -n $meta ]]; then
			_lanecp_meta[$name]=$meta
			[[ -n $short ]] && _lanecp_meta[-$short]=$meta
		fi
		_lanecp_help[$name]=${rest#"${rest%%[! ]*}"}
		[[ -n $short ]] && _lanecp_help[-$short]=${_lanecp_help[$name]}
	done < <("$cmd" --help 2>/dev/null)
	return 0
}

# The argument option $1 takes, if the next word is it ('' if not).
_lanecp_meta_of() {
	local o=$1 i c
	if [[ $o == --* ]]; then
		printf '%s' "${_lanecp_meta[$o]-}"
	elif [[ $o =~ ^-[A-Za-z0-9]+$ ]]; then
		# a cluster such as -rF: only its last letter may take the next
		# word (an earlier one would take the rest of the cluster)
		for ((i = 1; i < ${#o} - 1; i++)); do
			[[ -n ${_lanecp_meta[-${o:i:1}]-} ]] && return 0
		done
		c=${o: -1}
		printf '%s' "${_lanecp_meta[-$c]-}"
	fi
}

# The value of option $1 (-F/--ssh-config, ...) on the command line, the
# word being completed left out.
_lanecp_optval() {
	local short=$1 long=$2 i w v=
	for ((i = 1; i < ${#words[@]}; i++)); do
		((i == cword)) && continue
		w=${words[i]}
		[[ $w == -- ]] && break
		if [[ $w == "$short" || $w == "$long" ]] && ((i + 1 != cword)); then
			v=${words[i + 1]-}
		elif [[ $w == "$long="* ]]; then
			v=${w#*=}
		elif [[ $w == "$short"?* && $w != --* ]]; then
			v=${w#"$short"}
		fi
	done
	v=$(_lanecp_dequote "$v")
	[[ $v == "~/"* ]] && v=$HOME/${v#"~/"}
	printf '%s' "$v"
}

# Local files and directories matching the (quoted) word $1, as words to
# insert: directories end in /, files in a blank.  $2=d: directories only.
_lanecp_files() {
	local word f q
	word=$(_lanecp_dequote "$1")
	local -a found
	if [[ ${2-} == d ]]; then
		mapfile -t found < <(compgen -d -- "$word")
	else
		mapfile -t found < <(compgen -f -- "$word")
	fi
	for f in "${found[@]}"; do
		# compgen keeps a leading ~/ as typed: keep it unescaped
		if [[ $f == "~/"* ]]; then
			q="~/$(_lanecp_escape "${f#"~/"}")"
			f=$HOME/${f#"~/"}
		else
			q=$(_lanecp_escape "$f")
		fi
		if [[ -d $f ]]; then
			COMPREPLY+=("$q/")
		else
			COMPREPLY+=("$q ")
		fi
	done
}

# Host names: from the ssh config files and the known_hosts files.
_lanecp_conf_hosts() {
	local file=$1 base=$2 depth=$3 line key val w f
	local -a ws
	local re='^[[:space:]]*([A-Za-z]+)([[:space:]]*=[[:space:]]*|[[:space:]]+)(.*)$'
	((depth > 8)) && return 0
	[[ -r $file ]] || return 0
	while IFS= read -r line || [[ -n $line ]]; do
		[[ $line =~ $re ]] || continue
		key=${BASH_REMATCH[1],,}
		val=${BASH_REMATCH[3]}
		case $key in
		host)
			read -ra ws <<<"$val"
			for w in "${ws[@]}"; do
				w=${w//\"/}
				[[ -z $w || $w == *[*?!]* ]] || _lanecp_hostset+=("$w")
			done ;;
		include)
			read -ra ws <<<"$val"
			for w in "${ws[@]}"; do
				w=${w//\"/}
				[[ $w == "~/"* ]] && w=$HOME/${w#"~/"}
				[[ $w == /* ]] || w=$base/$w
				for f in $w; do
					_lanecp_conf_hosts "$f" "$base" $((depth + 1))
				done
			done ;;
		userknownhostsfile | globalknownhostsfile)
			read -ra ws <<<"$val"
			for w in "${ws[@]}"; do
				w=${w//\"/}
				[[ $w == "~/"* ]] && w=$HOME/${w#"~/"}
				_lanecp_khfiles+=("$w")
			done ;;
		esac
	done <"$file"
}

_lanecp_hosts() {
	local cfg=$1 f line w h
	local -a hs
	_lanecp_hostset=()
	_lanecp_khfiles=()
	if [[ -n $cfg ]]; then
		_lanecp_conf_hosts "$cfg" "$HOME/.ssh" 0
	else
		_lanecp_conf_hosts "$HOME/.ssh/config" "$HOME/.ssh" 0
		_lanecp_conf_hosts /etc/ssh/ssh_config /etc/ssh 0
	fi
	[[ ${#_lanecp_khfiles[@]} -gt 0 ]] ||
		_lanecp_khfiles=("$HOME/.ssh/known_hosts" "$HOME/.ssh/known_hosts2"
			/etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2)
	for f in "${_lanecp_khfiles[@]}"; do
		[[ -r $f ]] || continue
		while read -r w line; do
			[[ $w == @* ]] && read -r w line <<<"$line"
			[[ -z $w || $w == '#'* || $w == '|'* ]] && continue
			IFS=, read -ra hs <<<"$w"
			for h in "${hs[@]}"; do
				h=${h#\[}
				h=${h%%]*}
				[[ $h == *[*?!]* ]] || _lanecp_hostset+=("$h")
			done
		done <"$f"
	done
}

# Remote names for the word $1 = [user@]host:path (as typed): the host
# lists them with one ssh command; each is offered as host:path.
_lanecp_remote() {
	local raw=$1 hostraw host path tilde='' cmd line q
	local -a ssh_opts=(-o BatchMode=yes -o ConnectTimeout=5 -T) names
	local v
	if [[ $raw == \[* ]]; then
		hostraw=${raw%%]:*}]:
	else
		hostraw=${raw%%:*}:
	fi
	host=$(_lanecp_dequote "${hostraw%:}")
	host=${host#\[}
	host=${host%]}
	path=$(_lanecp_dequote "${raw#"$hostraw"}")
	if [[ $path == "~/"* ]]; then
		tilde="~/"
		path=${path#"~/"}
	fi
	v=$(_lanecp_optval -F --ssh-config)
	[[ -n $v ]] && ssh_opts+=(-F "$v")
	v=$(_lanecp_optval -i --identity)
	[[ -n $v ]] && ssh_opts+=(-i "$v")
	v=$(_lanecp_optval -J --jump)
	[[ -n $v ]] && ssh_opts+=(-J "$v")
	# every -o of the command line too (-o Port=N lists on that port),
	# after BatchMode and ConnectTimeout, which stay: ssh keeps the first
	local i w
	for ((i = 1; i < ${#words[@]}; i++)); do
		((i == cword)) && continue
		w=${words[i]}
		[[ $w == -- ]] && break
		if [[ $w == -o || $w == --option ]] && ((i + 1 != cword)); then
			v=${words[i + 1]-}
		elif [[ $w == --option=* ]]; then
			v=${w#*=}
		elif [[ $w == -o?* ]]; then
			v=${w#-o}
		else
			continue
		fi
		v=$(_lanecp_dequote "$v")
		[[ -n $v ]] && ssh_opts+=(-o "$v")
	done
	# the remote login shell runs this; sh does the listing, whatever
	# that shell is, and no quote of the path reaches it unquoted
	cmd='for f in "$1"*; do case $f in .|..|*/.|*/..) continue;; esac;'
	cmd+=' if [ -d "$f" ]; then printf "%s/\n" "$f";'
	cmd+=' elif [ -e "$f" ] || [ -L "$f" ]; then printf "%s\n" "$f"; fi; done'
	cmd="sh -c $(_lanecp_squote "$cmd") lanecp $(_lanecp_squote "$path")"
	local -a limit=()
	command -v timeout >/dev/null 2>&1 && limit=(timeout 10)
	mapfile -t names < <("${limit[@]}" ssh "${ssh_opts[@]}" -- "$host" "$cmd" \
		</dev/null 2>/dev/null)
	for line in "${names[@]}"; do
		[[ -z $line ]] && continue
		q=$hostraw$tilde$(_lanecp_escape "${line%/}")
		if [[ $line == */ ]]; then
			COMPREPLY+=("$q/")
		else
			COMPREPLY+=("$q ")
		fi
	done
}

# Complete the argument of an option that takes one (--help's name for it
# in $1, the word so far in $2).
_lanecp_value() {
	local meta=$1 word=$2 opt=$3 h
	local -a list
	case $meta in
	FILE* | *FILE) _lanecp_files "$word" ;;
	DIR*) _lanecp_files "$word" d ;;
	TARGET*) _lanecp_operand "$word" ;;
	ALG*)
		# the algorithms its help line lists: "... (sha256, crc32, adler32)"
		h=${_lanecp_help[$opt]-}
		if [[ $h =~ \(([a-z0-9]+(, [a-z0-9]+)+)\) ]]; then
			read -ra list <<<"${BASH_REMATCH[1]//,/}"
			_lanecp_match '' ' ' "$(_lanecp_dequote "$word")" "${list[@]}"
		fi ;;
	LIST*)
		# jump hosts: complete the last of the comma-separated list
		local pre=
		[[ $word == *,* ]] && pre=${word%,*},
		_lanecp_hosts "$(_lanecp_optval -F --ssh-config)"
		_lanecp_match "$pre" ' ' "$(_lanecp_dequote "${word##*,}")" \
			"${_lanecp_hostset[@]}"
		;;
	I/N)
		# --shard: a number pair, or auto (Slurm or k8s; auto/N)
		_lanecp_match '' ' ' "$(_lanecp_dequote "$word")" auto ;;
	*'|'*)
		IFS='|' read -ra list <<<"$meta"
		_lanecp_match '' ' ' "$(_lanecp_dequote "$word")" "${list[@]}" ;;
	*) ;;	# a number, size, time, rate or remote path: nothing to offer
	esac
}

# A source or target (an operand, or --also's TARGET) in $1: host:path
# listed by the host, else local files and the hosts as "host:".
_lanecp_operand() {
	local cur=$1 user='' h
	if [[ $cur =~ ^(\[[^]/]*\]|[^/:]*[^/:\\]): ]]; then
		_lanecp_remote "$cur"
		return
	fi
	_lanecp_files "$cur"
	if [[ $cur != */* ]]; then
		h=$(_lanecp_dequote "$cur")
		[[ $h == *@* ]] && user=${h%%@*}@ && h=${h#*@}
		_lanecp_hosts "$(_lanecp_optval -F --ssh-config)"
		_lanecp_match "$(_lanecp_escape "$user")" : "$h" \
			"${_lanecp_hostset[@]}"
	fi
}

_lanecp() {
	local cur prev words cword i meta trim
	COMPREPLY=()
	_lanecp_words
	_lanecp_parse_help "$(_lanecp_dequote "${words[0]/#\~/"$HOME"}")"

	# the argument of an option: --opt=VALUE, or after --opt / -o
	if [[ $cur == --*=* ]]; then
		meta=${_lanecp_meta[${cur%%=*}]-}
		[[ -n $meta ]] && _lanecp_value "$meta" "${cur#*=}" "${cur%%=*}"
		COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
	elif meta=$(_lanecp_meta_of "$prev") && [[ -n $meta ]]; then
		_lanecp_value "$meta" "$cur" "$prev"
	else
		local dashdash=
		for ((i = 1; i < cword; i++)); do
			[[ ${words[i]} == -- ]] && dashdash=1
		done
		if [[ -z $dashdash && $cur == -* ]]; then
			_lanecp_match '' ' ' "$cur" "${_lanecp_opts[@]}"
		else
			_lanecp_operand "$cur"
		fi
	fi
	# readline replaces only the text after the last word break character
	# (COMP_WORDBREAKS; of those, only ':' and '=' are joined into cur):
	# drop what comes before it from every reply
	local brk=${COMP_WORDBREAKS-:=} c
	trim=''
	for ((i = ${#cur} - 1; i >= 0; i--)); do
		c=${cur:i:1}
		if [[ ($c == : || $c == =) && $brk == *"$c"* ]]; then
			trim=${cur:0:i+1}
			break
		fi
	done
	if [[ -n $trim ]]; then
		for i in "${!COMPREPLY[@]}"; do
			COMPREPLY[i]=${COMPREPLY[i]#"$trim"}
		done
	fi
	# replies carry their own trailing blank (files) or none (directories,
	# host:)
	compopt -o nospace 2>/dev/null || true
	return 0
}
complete -F _lanecp lanecp
