#!/bin/bash
# check-format.sh: engine/ follows one style, the repository's .clang-format.
# Lists every file that does not, with the command that formats it; exit 1 then.
set -uo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null 2>&1; then
  echo "check-format: clang-format is not installed (scripts/setup.sh deps installs it)" >&2
  exit 1
fi
bad=()
while IFS= read -r f; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(find engine -name '*.c' -o -name '*.h' | sort)
if [ ${#bad[@]} -gt 0 ]; then
  printf 'check-format: not in the style of .clang-format: %s\n' "${bad[@]}" >&2
  echo "check-format: format them with: clang-format -i ${bad[*]}" >&2
  exit 1
fi
echo "check-format: engine/ is formatted ($(find engine -name '*.c' -o -name '*.h' | wc -l) files)"
