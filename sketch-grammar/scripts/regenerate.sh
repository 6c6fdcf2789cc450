#!/bin/sh
# Regenerates src/parser.c from grammar.js with a pinned tree-sitter CLI.
# The CLI is only needed to change the grammar: the product builds from the
# committed src/parser.c. ABI 14 keeps the parser loadable by libtree-sitter 0.20.
set -eu
TS_CLI_VERSION=0.24.7
here=$(cd "$(dirname "$0")/.." && pwd)
tools="$here/.tools"
cli="$tools/bin/tree-sitter"
if [ ! -x "$cli" ] || ! "$cli" --version | grep -q "$TS_CLI_VERSION"; then
  cargo install tree-sitter-cli --version "$TS_CLI_VERSION" --locked --root "$tools"
fi
cd "$here"
"$cli" generate --abi 14
if [ "${1:-}" = "--test" ]; then
  "$cli" test
fi
