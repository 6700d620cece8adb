#!/usr/bin/env bash
# Prints the path of a working CPython MAJOR.MINOR interpreter (e.g. `find-python.sh 3.12`):
# pyenv's newest matching install, else python3.12 on PATH. Exits 1 when there is none.
set -uo pipefail
version="$1"
candidates=()
if command -v pyenv >/dev/null; then
  root="$(pyenv root)"
  for dir in $(ls -d "$root/versions/$version".* 2>/dev/null | sort -V -r); do
    candidates+=("$dir/bin/python")
  done
fi
candidates+=("$(command -v "python$version" 2>/dev/null)")
for py in "${candidates[@]}"; do
  [ -n "$py" ] && [ -x "$py" ] || continue
  if [ "$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$version" ]; then
    echo "$py"
    exit 0
  fi
done
exit 1
