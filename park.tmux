#!/usr/bin/env bash
# park: tmux plugin entry point for TPM (`set -g @plugin '…/park'`), which executes every
# executable *.tmux file at the root of the plugin's clone. The plugin itself lives in
# tmux-plugin/; this file only forwards to it.
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tmux-plugin/park.tmux" "$@"
