#!/usr/bin/env bash
# Helpers shared by the park tmux plugin scripts (sourced, not run).
#
# Contract: options are only ever READ with a default here; the plugin never writes a default
# into a user option, so whatever the user set (before or after loading) wins.

# get_tmux_option NAME DEFAULT: the global value of NAME, or DEFAULT when unset or empty.
get_tmux_option() {
  local value
  value="$(tmux show-option -gqv "$1")"
  if [ -n "$value" ]; then
    printf '%s\n' "$value"
  else
    printf '%s\n' "$2"
  fi
}

# sh_quote WORD: WORD as one POSIX-shell single-quoted word ('it'\''s').
sh_quote() {
  local q="'\\''"
  printf "'%s'" "${1//\'/$q}"
}

# fmt_escape TEXT: TEXT with every # doubled, so a format expansion (run-shell,
# display-message) gives TEXT back unchanged.
fmt_escape() {
  printf '%s' "${1//\#/##}"
}

# replace_all TEXT FROM TO: TEXT with every FROM replaced by TO, all taken literally
# (bash 5.2's patsub_replacement would otherwise turn & in TO into the match).
replace_all() {
  printf '%s' "${1//"$2"/"$3"}"
}

# The plugin's dir (tmux-plugin/), wherever it was unpacked or installed.
PARK_PLUGIN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# find_park_bin: prints the park binary to use: @park-bin (a path, ~ expanded, or a command
# name looked up on PATH), else the park shipped with this plugin (the release tarball's
# <dir>/park beside <dir>/tmux-plugin, the .deb's /usr/bin/park for
# /usr/share/park/tmux-plugin: the same release as the plugin), else `park` on PATH, else
# ~/.local/bin/park (where scripts/install and the plugin's own build put it; tmux's run-shell
# PATH often lacks ~/.local/bin), else ${CARGO_HOME:-~/.cargo}/bin/park (a plain `cargo
# install`). Returns 1 when there is none.
find_park_bin() {
  local want c
  want="$(get_tmux_option @park-bin "")"
  if [ -z "$want" ]; then
    for c in "$PARK_PLUGIN_DIR/../park" "$PARK_PLUGIN_DIR/../../../bin/park"; do
      # <prefix>/bin/park only for a plugin at <prefix>/share/park/tmux-plugin.
      case "$c" in
        */../../../bin/park) case "$PARK_PLUGIN_DIR" in */share/park/tmux-plugin) ;; *) continue ;; esac ;;
      esac
      if [ -f "$c" ] && [ -x "$c" ]; then
        (cd "$(dirname "$c")" && printf '%s/park\n' "$(pwd)")
        return 0
      fi
    done
    type -P park && return 0
    for c in "$HOME/.local/bin/park" "${CARGO_HOME:-$HOME/.cargo}/bin/park"; do
      if [ -f "$c" ] && [ -x "$c" ]; then
        printf '%s\n' "$c"
        return 0
      fi
    done
    return 1
  fi
  # shellcheck disable=SC2088 # a literal "~/" from the option, expanded here
  case "$want" in
    "~/"*) want="$HOME/${want#"~/"}" ;;
  esac
  case "$want" in
    */*) [ -f "$want" ] && [ -x "$want" ] && printf '%s\n' "$want" ;;
    *) type -P "$want" ;;
  esac
}

# find_cargo: prints the cargo to build park with: cargo on PATH, else ~/.cargo/bin/cargo (where
# rustup puts it; tmux's PATH often lacks it). Returns 1 when there is none.
find_cargo() {
  local c
  type -P cargo && return 0
  for c in "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" "$HOME/.cargo/bin/cargo"; do
    if [ -f "$c" ] && [ -x "$c" ]; then
      printf '%s\n' "$c"
      return 0
    fi
  done
  return 1
}
