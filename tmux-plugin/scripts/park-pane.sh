#!/usr/bin/env bash
# park-pane.sh BIN PANE [CLIENT]: parks PANE now (bound to @park-park-key, run with
# `run-shell -b`). On a refusal or failure, shows park's last line in the status line of
# CLIENT (the client that pressed the key), so the reason can be read.
bin="$1" pane="$2" client="${3:-}"
CURRENT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR
. "$CURRENT_DIR/helpers.sh"

if out="$("$bin" park "$pane" 2>&1 </dev/null)"; then
  exit 0
fi
last="$(printf '%s\n' "$out" | sed '/^[[:space:]]*$/d' | tail -n 1)"
msg="$(fmt_escape "park: ${last:-park $pane failed}")"
args=(-d 5000)
[ -n "$client" ] && args+=(-c "$client")
tmux display-message "${args[@]}" "$msg" 2>/dev/null || tmux display-message "$msg"
exit 0
