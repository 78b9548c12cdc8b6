#!/usr/bin/env bash
# Runs README.md's commands as a new user types them: every command of the
# "Quick start" and "A short tour" sections, read from README.md itself
# (so an edited README is what gets tested), one line at a time, exactly as
# written, from the repository root of a fresh clone of the committed HEAD.
# Any non-zero exit fails the run.
#
# The comment at the end of a command may carry two marks:
#   "needs GPUs"  the command runs stages on GPUs, so it is checked, not run:
#                 `gpuflow apply PLANFILE` as `gpuflow show PLANFILE` (the
#                 saved plan reads back as apply reads it), and
#                 `gpuflow apply [options] PATH` as `gpuflow plan [options]
#                 PATH` (without -auto-approve). Any other command so marked
#                 is an error, because this script would not know how to
#                 check it.
#   "exit 2 if"   the command documents exit status 2 as an answer, not a
#                 failure (gpuflow diff: the plans differ), so 0 and 2 pass.
#
# `git:HEAD~1:...` in the tour needs the commit before HEAD: run this from a
# clone with full history (in GitHub Actions, checkout with fetch-depth: 0).
set -euo pipefail

root=$(git -C "$(dirname "$0")/../.." rev-parse --show-toplevel)
readme="$root/README.md"

# commands SECTION prints the command lines of the ```sh blocks under the
# "## SECTION" heading, up to the next "## " heading.
commands() {
  awk -v section="## $1" '
    /^## / { inside = ($0 == section); next }
    inside && /^```sh$/ { code = 1; next }
    inside && /^```/ { code = 0; next }
    inside && code && NF && $1 !~ /^#/ { print }
  ' "$readme"
}

# checked turns a command marked "needs GPUs" into the command that checks
# it without GPUs, as the header says.
checked() {
  local line=$1 cmd
  cmd=${line%%#*}
  read -r -a words <<<"$cmd"
  if [ "${#words[@]}" -lt 3 ] || [ "${words[1]}" != apply ]; then
    echo "README command marked 'needs GPUs' is not a gpuflow apply; say in $0 how to check it: $line" >&2
    return 1
  fi
  local last=${words[${#words[@]}-1]}
  if [[ $last == *.json ]]; then
    echo "${words[0]} show $last"
    return
  fi
  local out=("${words[0]}" plan)
  for w in "${words[@]:2}"; do
    [ "$w" = -auto-approve ] || out+=("$w")
  done
  echo "${out[*]}"
}

# runs runs one README line in the clone's root and checks its status.
runs() {
  local line=$1 run=$1 status=0
  if [[ $line == *"#"*"needs GPUs"* ]]; then
    run=$(checked "$line")
    echo "\$ $line"
    echo "  (needs GPUs: checked as \`$run\`)"
  else
    echo "\$ $line"
  fi
  (cd "$clone" && bash -c "$run") || status=$?
  if [ "$status" = 2 ] && [[ $line == *"#"*"exit 2 if"* ]]; then
    status=0
  fi
  if [ "$status" != 0 ]; then
    echo "FAILED (exit $status): README.md's command $line" >&2
    exit 1
  fi
}

if [ "$(git -C "$root" rev-parse --is-shallow-repository)" = true ]; then
  echo "$root is a shallow clone; the tour's git:HEAD~1 needs history. Fetch it (git fetch --unshallow, or fetch-depth: 0)." >&2
  exit 1
fi
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
  echo "note: testing the committed HEAD; uncommitted changes are not in the clone."
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
clone="$tmp/gpuflow"
git clone --quiet --no-hardlinks "$root" "$clone"
git -C "$clone" checkout --quiet --detach "$(git -C "$root" rev-parse HEAD)"

for section in "Quick start" "A short tour"; do
  mapfile -t lines < <(commands "$section")
  if [ "${#lines[@]}" = 0 ]; then
    echo "README.md has no commands under \"## $section\"; this script reads that section." >&2
    exit 1
  fi
  echo "== README.md: $section (${#lines[@]} commands)"
  for line in "${lines[@]}"; do
    runs "$line"
  done
done
echo "== every README command succeeded"
