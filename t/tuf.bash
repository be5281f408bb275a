# t/tuf.bash - a TUF repository simulator (t/tuf_sim.py) for the tests of
# hw-skill's TUF client, served on loopback with every request recorded.
# Load after lib.  The simulator needs Debian's python3-cryptography, so it
# runs under /usr/bin/python3, not whatever python3 is first on PATH.

SIMPY=/usr/bin/python3

# sim OP ARGS [-- OP ARGS ...] - change the repository in ./sim
sim() { "$SIMPY" "$HW_ROOT/t/tuf_sim.py" "$PROJ/sim" "$@"; }

# sim_serve - serve ./sim/repo on 127.0.0.1; sets URL, requests go to ./requests
sim_serve() {
	local i
	"$SIMPY" "$HW_ROOT/t/tuf_sim.py" "$PROJ/sim" serve "$PROJ/port" \
		"$PROJ/requests" &
	SIM_PID=$!
	for ((i = 0; i < 200; i++)); do
		[ -s "$PROJ/port" ] && break
		sleep 0.05
	done
	[ -s "$PROJ/port" ] || return 1
	URL="http://127.0.0.1:$(cat "$PROJ/port")"
	mkdir -p md tg
}

teardown() {
	if [ -n "${SIM_PID:-}" ]; then
		kill "$SIM_PID" 2>/dev/null
		wait "$SIM_PID" 2>/dev/null
	fi
	cd / && rm -rf "$PROJ"
}

# trust - store the repository's first root as the trusted one
trust() { hw-skill tuf --metadata-dir md init sim/repo/metadata/1.root.json; }

# tuf ARGS - the client against the served repository, metadata in ./md
tuf() { hw-skill tuf --metadata-url "$URL/metadata" --metadata-dir md "$@"; }

# fetch NAME... - download targets into ./tg
fetch() {
	local a=() n
	for n in "$@"; do a+=(--target-name "$n"); done
	tuf "${a[@]}" --target-dir tg --target-base-url "$URL/targets/" download
}

# reqs - the requests recorded since the last call, one path a line
reqs() { cat "$PROJ/requests"; : >"$PROJ/requests"; }

# same_bytes ROLE... - each md/ROLE.json is the served file, byte for byte
same_bytes() {
	local r
	for r in "$@"; do
		cmp "md/$r.json" "sim/repo/metadata/$r.json" || return 1
	done
}

# md_files - the names in md/, sorted, on one line
md_files() { (cd md && ls -A | sort | tr '\n' ' '); }

# keyid ROLE [N] - the N-th key id the simulator's state lists for ROLE
keyid() { jq -r ".roles[\"$1\"].keyids[${2:-0}]" sim/state.json; }

# days N - the UTC time N days from now, as TUF writes it
days() { date -u -d "+$1 days" +%Y-%m-%dT%H:%M:%SZ; }

# state FILTER [JQ-ARGS] - edit the simulator's state with jq
state() {
	local f=$1
	shift
	jq "$@" "$f" sim/state.json >sim/state.new
	mv sim/state.new sim/state.json
}

# edit_md FILE FILTER - edit a served metadata file with jq
edit_md() {
	jq "$2" "sim/repo/metadata/$1" >sim/md.new
	mv sim/md.new "sim/repo/metadata/$1"
}
