# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
# The stand-in kubelets of the agent's device-plugin suites, on real gRPC stacks:
# tests/harness/kubelet.py (Debian python3-grpcio) and tests/harness/kubelet.go (Go's
# grpc, golang-google-grpc-dev, built offline from /usr/share/gocode). Both take the
# same commands on stdin and print the same JSON events (kubelet.py's docstring).
# Source after tests/lib/agent.sh.
#
#   kl_require IMPL          skip unless IMPL (python or go) can be had
#   kl_start VAR IMPL DIR [PODRES]   a kubelet serving DIR/kubelet.sock (python: and the
#                            PodResources API at PODRES); events in $XT_TMP/VAR.ev
#   kl_cmd VAR LINE          one command
#   kl_mark VAR              the number of events so far (for kl_wait's FROM)
#   kl_wait VAR S FROM JQ    wait up to S seconds for an event after line FROM that the
#                            jq filter JQ selects; prints the first such event
#   kl_stop VAR

KL_GEN=${KL_GEN:-$XT_BUILD/tests/kubelet}

# Messages for both: protoc's Python and Go output of tools/agent/proto (rebuilt when
# a .proto is newer), and the Go binary.
kl_require() {
	case $1 in
	python)
		/usr/bin/python3 -c 'import grpc, google.protobuf' 2>/dev/null ||
			xt_skip "python3-grpcio missing: apt-get install python3-grpcio python3-protobuf"
		command -v protoc >/dev/null || xt_skip "protoc missing: apt-get install protobuf-compiler"
		mkdir -p "$KL_GEN/py"
		[ "$KL_GEN/py/deviceplugin_pb2.py" -nt tools/agent/proto/deviceplugin.proto ] ||
			protoc -Itools/agent/proto --python_out="$KL_GEN/py" tools/agent/proto/*.proto ||
			xt_fail "protoc --python_out failed"
		;;
	go)
		command -v go >/dev/null || xt_skip "go missing: apt-get install golang-go"
		[ -d /usr/share/gocode/src/google.golang.org/grpc ] ||
			xt_skip "Go grpc missing: apt-get install golang-google-grpc-dev golang-google-protobuf-dev"
		command -v protoc >/dev/null || xt_skip "protoc missing: apt-get install protobuf-compiler"
		if [ ! "$KL_GEN/go/kubelet" -nt tests/harness/kubelet.go ] ||
			[ ! "$KL_GEN/go/kubelet" -nt tools/agent/proto/deviceplugin.proto ]; then
			local g=$KL_GEN/go t0=$SECONDS
			mkdir -p "$g/bin" "$g/src/xpiletest/dp"
			export GOCACHE=${GOCACHE:-$PWD/$KL_GEN/go/cache} GO111MODULE=off
			GOPATH=/usr/share/gocode go build -o "$g/bin/protoc-gen-go" \
				google.golang.org/protobuf/cmd/protoc-gen-go || xt_fail "cannot build protoc-gen-go"
			PATH=$g/bin:$PATH protoc -Itools/agent/proto --go_out="$g/src/xpiletest/dp" \
				--go_opt=paths=source_relative --go_opt=Mdeviceplugin.proto=xpiletest/dp \
				tools/agent/proto/deviceplugin.proto || xt_fail "protoc --go_out failed"
			GOPATH=$PWD/$g:/usr/share/gocode go build -o "$g/kubelet" tests/harness/kubelet.go ||
				xt_fail "cannot build tests/harness/kubelet.go"
			echo "built the Go kubelet in $((SECONDS - t0)) s"
		fi
		;;
	esac
}

kl_start() { # VAR IMPL DIR [PODRES]
	local var=$1 fd
	: >"$XT_TMP/$var.ev"
	rm -f "$XT_TMP/$var.in"
	mkfifo "$XT_TMP/$var.in"
	case $2 in
	python) /usr/bin/python3 tests/harness/kubelet.py "$KL_GEN/py" "$3" ${4:+"$4"} ;;
	go) "$KL_GEN/go/kubelet" "$3" ;;
	esac <"$XT_TMP/$var.in" >"$XT_TMP/$var.ev" 2>"$XT_TMP/$var.err" &
	XT_PIDS+=($!)
	printf -v "${var}_PID" '%s' "$!"
	exec {fd}>"$XT_TMP/$var.in"
	printf -v "${var}_FD" '%s' "$fd"
	kl_wait "$var" 10 0 'select(.ev == "ready")' >/dev/null ||
		xt_fail "$2 kubelet did not start: $(cat "$XT_TMP/$var.err")"
}

kl_cmd() { # VAR LINE
	local fd=${1}_FD
	echo "$2" >&"${!fd}"
}

kl_mark() { wc -l <"$XT_TMP/$1.ev"; }

kl_wait() { # VAR SECONDS FROM JQ
	local deadline=$((SECONDS + $2)) got
	while :; do
		got=$(tail -n +"$(($3 + 1))" "$XT_TMP/$1.ev" | jq -c "$4" 2>/dev/null | head -1)
		[ -n "$got" ] && { echo "$got"; return 0; }
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.05
	done
}

# A command and the first event of kind EV it gives.
kl_ask() { # VAR EV LINE
	local m
	m=$(kl_mark "$1")
	kl_cmd "$1" "$3"
	kl_wait "$1" 10 "$m" "select(.ev == \"$2\" or .ev == \"error\")" ||
		xt_fail "kubelet: no $2 event for '$3': $(tail -3 "$XT_TMP/$1.ev")"
}

kl_stop() {
	local fd=${1}_FD pid=${1}_PID
	kl_cmd "$1" quit
	eval "exec ${!fd}>&-"
	for _ in $(seq 50); do kill -0 "${!pid}" 2>/dev/null || break; sleep 0.1; done
}
