#!/usr/bin/env bash
# park tmux plugin: keys for the park picker and for parking the current pane, the parked
# count in the status line and ❄ pills in the window list and on pane borders.
#
# Everything shown is pushed by park itself (user options, no #() job, no polling):
#   @park_status   global       "❄ 3 · 1.1G", unset when nothing is parked
#   @park_parked   per window   number of parked panes in the window, unset when 0
#   @park_pill     per pane     "❄ claude 145M" on a parked pane
# This script only binds keys and splices formats into the user's options. It is run by TPM
# on every config reload (and may be run by hand), so it is idempotent, and it never
# overwrites an option the user set. Options it reads (defaults apply only when unset):
#   @park-bin             park binary (path or name on PATH)      default: park on PATH, else
#                         ~/.local/bin/park, else ~/.cargo/bin/park; when there is none (and this
#                         plugin is a clone of park's repo, as TPM makes), @park-key offers to
#                         build it (scripts/build-park.sh, in a popup, only after a `y`)
#   @park-build-args      extra words for that build's `cargo install`  default: none
#   @park-key             prefix key for the picker popup         default: P
#   @park-park-key        prefix key that parks the current pane  default: none (unbound)
#   @park-popup-width     popup width                             default: 90%
#   @park-popup-height    popup height                            default: 70%
#   @park-status-format   replaces #{park_status} in status-left/right
#   @park-window-format   replaces #{park_window} in window-status(-current)-format
#   @park-pane-format     replaces #{park_pane} in pane-border-format
#   @park-auto            on: also add the pills to window/border formats the user never set
#   @park-border          on: turn pane-border-status on (top) when it is off
# It also sets tmux-resurrect's @resurrect-hook-post-save-all / -post-restore-all to
# `park resurrect save|restore` where they are unset (see resurrect_hooks), and appends one
# client-attached hook of its own (`park rebuild --on-attach`, see attach_hook).

CURRENT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source-path=SCRIPTDIR
. "$CURRENT_DIR/scripts/helpers.sh"

# tmux 3.3a's defaults: a format still equal to these was never set by the user.
DEFAULT_WINDOW_FORMAT='#I:#W#{?window_flags,#{window_flags}, }'
DEFAULT_BORDER_FORMAT='#{?pane_active,#[reverse],}#{pane_index}#[default] "#{pane_title}"'
DEFAULT_BORDER_FORMAT_SPACED=" $DEFAULT_BORDER_FORMAT "

# release_old_keys KEY...: a key bound by an earlier load (before @park-key changed) is released,
# if it is still ours; then the KEYs are recorded as the ones bound now.
release_old_keys() {
  local old keep k
  for old in $(tmux show-option -gqv @_park_bound_keys); do
    keep=0
    for k in "$@"; do
      [ "$old" = "$k" ] && keep=1
    done
    if [ "$keep" = 0 ] && tmux list-keys -T prefix "$old" 2>/dev/null | grep -q 'park'; then
      tmux unbind-key -T prefix "$old"
    fi
  done
  local now="$*"
  tmux set-option -gq @_park_bound_keys "${now% }"
}

bind_keys() {
  local bin="$1" key park_key width height pick popup
  key="$(get_tmux_option @park-key P)"
  park_key="$(get_tmux_option @park-park-key "")"
  width="$(get_tmux_option @park-popup-width 90%)"
  height="$(get_tmux_option @park-popup-height 70%)"

  # display-popup does not expand #{…} in its command (tmux 3.3a), run-shell does: the popup
  # is opened from run-shell, and park is told which pane the popup was opened from (a popup
  # has no TMUX_PANE). run-shell expands formats first (so every # of ours is doubled), then
  # two shells parse the result: run-shell's, then the popup's.
  pick="$(sh_quote "$(fmt_escape "$bin")") pick --pane #{pane_id}"
  width="$(sh_quote "$(fmt_escape "$width")")"
  height="$(sh_quote "$(fmt_escape "$height")")"
  popup="tmux display-popup -c '#{client_name}' -t '#{pane_id}' -E -w $width -h $height"
  # -b: the server is not held while the popup is open; `|| true`: a non-zero exit (park pick
  # failing, the popup closed with display-popup -C) must not leave run-shell's "returned N"
  # on the pane in view mode, where it would swallow keys typed into the pane.
  release_old_keys "$key" "$park_key"

  tmux bind-key -N "park: pick agents to park or resume" "$key" \
    run-shell -b "$popup -T ' park ' $(sh_quote "$pick") || true"

  if [ -n "$park_key" ]; then
    local run
    run="$(sh_quote "$(fmt_escape "$CURRENT_DIR/scripts/park-pane.sh")")"
    run="$run $(sh_quote "$(fmt_escape "$bin")") '#{pane_id}' '#{client_name}'"
    tmux bind-key -N "park: park the current pane" "$park_key" run-shell -b "$run"
  fi
}

# splice OPTION PLACEHOLDER FORMAT [DEFAULT_VALUE NEW_VALUE]...: replaces PLACEHOLDER in the
# global OPTION by FORMAT; else, if OPTION still equals one of the DEFAULT_VALUEs, sets the
# matching NEW_VALUE. Anything else (a user's own format) is left alone.
splice() {
  local opt="$1" placeholder="$2" fmt="$3" val
  shift 3
  val="$(tmux show-option -gqv "$opt")"
  case "$val" in
    *"$placeholder"*)
      tmux set-option -gq "$opt" "$(replace_all "$val" "$placeholder" "$fmt")"
      return
      ;;
  esac
  while [ "$#" -ge 2 ]; do
    if [ "$val" = "$1" ]; then
      tmux set-option -gq "$opt" "$2"
      return
    fi
    shift 2
  done
}

decorate() {
  local status_fmt window_fmt pane_fmt auto opt
  status_fmt="$(get_tmux_option @park-status-format '#{?@park_status,#{@park_status} ,}')"
  window_fmt="$(get_tmux_option @park-window-format '#{?@park_parked, ❄#{@park_parked},}')"
  pane_fmt="$(get_tmux_option @park-pane-format '#{?@park_pill,#[reverse] #{@park_pill} #[noreverse],}')"
  auto="$(get_tmux_option @park-auto on)"

  for opt in status-left status-right; do
    splice "$opt" '#{park_status}' "$status_fmt"
  done

  local -a window_defaults=() border_defaults=()
  if [ "$auto" = on ]; then
    # The pill goes before the flags, so it reads "1:api ❄1*" / "2:web ❄2 ".
    window_defaults=("$DEFAULT_WINDOW_FORMAT" "#I:#W$window_fmt#{?window_flags,#{window_flags}, }")
    border_defaults=(
      "$DEFAULT_BORDER_FORMAT" "$DEFAULT_BORDER_FORMAT $pane_fmt"
      "$DEFAULT_BORDER_FORMAT_SPACED" "$DEFAULT_BORDER_FORMAT_SPACED$pane_fmt"
    )
  fi
  for opt in window-status-format window-status-current-format; do
    splice "$opt" '#{park_window}' "$window_fmt" "${window_defaults[@]}"
  done
  splice pane-border-format '#{park_pane}' "$pane_fmt" "${border_defaults[@]}"

  if [ "$(get_tmux_option @park-border off)" = on ] &&
    [ "$(tmux show-option -gqv pane-border-status)" = off ]; then
    tmux set-option -gq pane-border-status top
  fi
}

# offer_build: park's binary is not installed, but this plugin sits in park's source tree (a TPM
# clone of the repo): @park-key opens a popup that offers to build it (scripts/build-park.sh asks
# first, builds nothing without a `y`, and loads the plugin again once park is installed). Only
# the key is bound; no option is written, so a failed or declined build leaves tmux as it was.
offer_build() {
  local key width height script popup prefix
  key="$(get_tmux_option @park-key P)"
  width="$(sh_quote "$(fmt_escape "$(get_tmux_option @park-popup-width 90%)")")"
  height="$(sh_quote "$(fmt_escape "$(get_tmux_option @park-popup-height 70%)")")"
  release_old_keys "$key"
  # Same quoting as bind_keys: run-shell expands formats, then two shells parse the command.
  script="bash $(sh_quote "$(fmt_escape "$CURRENT_DIR/scripts/build-park.sh")") '#{client_name}'"
  popup="tmux display-popup -c '#{client_name}' -E -w $width -h $height"
  tmux bind-key -N "park: build park's binary (not installed yet)" "$key" \
    run-shell -b "$popup -T ' park: install ' $(sh_quote "$script") || true"
  prefix="$(get_tmux_option prefix C-b)"
  tmux display-message -d 8000 \
    "$(fmt_escape "park: binary not installed: press $prefix $key to build it (or set @park-bin)")"
}

# tmux-resurrect runs @resurrect-hook-post-save-all after each save (tmux-continuum's autosave
# too) and @resurrect-hook-post-restore-all after a restore. park sets both where the user has
# not (a value of the user's is never touched: `park doctor` says it is taken), and updates its
# own (the binary or the socket changed). The socket is written in: the hooks run from
# resurrect's scripts, which do not say which server they saved.
resurrect_hooks() {
  local bin="$1" socket q opt cur want
  socket="$(tmux display-message -p '#{socket_path}')"
  q="PARK_TMUX_SOCKET=$(sh_quote "$socket") $(sh_quote "$bin")"
  for opt in save restore; do
    cur="$(tmux show-option -gqv "@resurrect-hook-post-$opt-all")"
    want="$q resurrect $opt"
    case "$cur" in
      "" | "PARK_TMUX_SOCKET="*" resurrect $opt")
        [ "$cur" = "$want" ] || tmux set-option -gq "@resurrect-hook-post-$opt-all" "$want"
        ;;
    esac
  done
}

# [journal] restore in park's config.toml ("ask" or "auto") acts when a client attaches after
# sessions were lost with the previous server: park's client-attached hook asks park, which
# does nothing otherwise (a file read). The hook is appended, so the user's own client-attached
# hooks stay; a reload finds it by its command and updates it in place when the binary moved.
attach_hook() {
  local bin="$1" want line idx
  want="run-shell -b \"$(fmt_escape "$(sh_quote "$bin")") rebuild --on-attach --client '#{client_name}' >/dev/null 2>&1\""
  line="$(tmux show-hooks -g client-attached 2>/dev/null | grep -F -- 'rebuild --on-attach' | head -n 1)"
  if [ -z "$line" ]; then
    tmux set-hook -ga client-attached "$want"
    return 0
  fi
  case "$line" in
    *"$bin"*) return 0 ;;
  esac
  idx="${line%%]*}"
  idx="${idx#*[}"
  case "$idx" in
    "" | *[!0-9]*) return 0 ;;
  esac
  tmux set-hook -g "client-attached[$idx]" "$want"
}

main() {
  local bin
  if ! bin="$(find_park_bin)" || [ -z "$bin" ]; then
    if [ -z "$(get_tmux_option @park-bin "")" ] && [ -f "$CURRENT_DIR/../companion/Cargo.toml" ]; then
      offer_build
    else
      tmux display-message "park: binary not found (set @park-bin or put park on PATH)"
    fi
    return 0
  fi
  bind_keys "$bin"
  decorate
  resurrect_hooks "$bin"
  attach_hook "$bin"
  # Seed @park_status from $PARK_HOME/status (a file read; park pushes every later change).
  "$bin" status --tmux >/dev/null 2>&1 </dev/null || true
  # Pending wake-ups survive a reboot in the ledger, the autopilot is configured in config.toml,
  # and the journal of live sessions is on by default: the daemon that serves them starts here
  # (in the background, detached; it exits by itself when no wake-up is pending, the autopilot
  # is off and the journal is off or has no server to watch).
  "$bin" daemon --ensure >/dev/null 2>&1 </dev/null &
  return 0
}

main "$@"
